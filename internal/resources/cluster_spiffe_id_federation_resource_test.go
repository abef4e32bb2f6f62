package resources_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// csidOwners maps each field manager of the ClusterSPIFFEID name on cluster
// to the spec fields (top level under spec) it owns.
func csidOwners(t *testing.T, cluster, name string) (map[string][]string, *unstructured.Unstructured, error) {
	obj, err := acctest.Dynamic(t, cluster).Resource(csidGVR).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	owners := map[string][]string{}
	for _, f := range obj.GetManagedFields() {
		var fields map[string]any
		if f.FieldsV1 == nil || json.Unmarshal(f.FieldsV1.Raw, &fields) != nil {
			continue
		}
		spec, _ := fields["f:spec"].(map[string]any)
		for k := range spec {
			if name, ok := strings.CutPrefix(k, "f:"); ok {
				owners[f.Manager] = append(owners[f.Manager], name)
			}
		}
		slices.Sort(owners[f.Manager])
	}
	return owners, obj, nil
}

// TestAccClusterSPIFFEIDFederation_adopt: an administrator's
// ClusterSPIFFEID on east (written by another field manager, as a Helm
// chart's) gets federation with west from zerotrust_cluster_spiffe_id_federation
// in the same apply as the federation itself. Afterwards the provider's
// manager owns spec.federatesWith alone and the administrator's manager
// still owns every other field; the pod workloads of east and west handshake
// both ways; import plans nothing; destroy removes federatesWith and leaves
// the object and its other fields.
func TestAccClusterSPIFFEIDFederation_adopt(t *testing.T) {
	east, west := acctest.Spire(t, acctest.East), acctest.Spire(t, acctest.West)
	app := acctest.UniqueName("adopt")
	ctx := context.Background()
	if err := east.ApplyClusterSPIFFEID(ctx, harness.ClusterSPIFFEIDOptions{
		Name: app, SPIFFEIDTemplate: csidTemplate, PodLabels: map[string]string{"app": app},
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = acctest.Dynamic(t, acctest.East).Resource(csidGVR).Delete(ctx, app, metav1.DeleteOptions{})
	})
	before, _, err := csidOwners(t, acctest.East, app)
	if err != nil {
		t.Fatal(err)
	}
	waitEast := startCSIDWorkload(t, east, app, west.TrustDomain)
	waitWest := startCSIDWorkload(t, west, app, east.TrustDomain)
	config := acctest.ProviderConfig(t) +
		csidFederation(t, "east", acctest.East, west) + csidFederation(t, "west", acctest.West, east) + fmt.Sprintf(`
resource "zerotrust_cluster_spiffe_id_federation" "east" {
  cluster        = "east"
  name           = %[1]q
  federates_with = [zerotrust_federated_trust_domain.east.trust_domain]
  timeouts = {
    create = "3m"
  }
}

resource "zerotrust_cluster_spiffe_id" "west" {
  cluster            = "west"
  name               = %[1]q
  spiffe_id_template = %[2]q
  pod_selector = {
    match_labels = { app = %[1]q }
  }
  federates_with = [zerotrust_federated_trust_domain.west.trust_domain]
  timeouts = {
    create = "3m"
  }
}
`, app, csidTemplate)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			owners, obj, err := csidOwners(t, acctest.East, app)
			if err != nil {
				return fmt.Errorf("east's ClusterSPIFFEID after destroy: %w", err)
			}
			if with, _, _ := unstructured.NestedStringSlice(obj.Object, "spec", "federatesWith"); len(with) > 0 {
				return fmt.Errorf("east's ClusterSPIFFEID still federates with %v after destroy", with)
			}
			if _, ok := owners[providerFieldManager]; ok {
				return fmt.Errorf("the provider still owns %v of east's ClusterSPIFFEID after destroy", owners[providerFieldManager])
			}
			if !slices.Equal(owners[harness.HarnessFieldManager], before[harness.HarnessFieldManager]) {
				return fmt.Errorf("the administrator's fields changed: %v, were %v", owners[harness.HarnessFieldManager], before[harness.HarnessFieldManager])
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					acctest.ClusterCheck(func(*terraform.State) error {
						owners, _, err := csidOwners(t, acctest.East, app)
						if err != nil {
							return err
						}
						if got := owners[providerFieldManager]; !slices.Equal(got, []string{"federatesWith"}) {
							return fmt.Errorf("the provider owns spec fields %v of the adopted ClusterSPIFFEID, want [federatesWith]", got)
						}
						if got, want := owners[harness.HarnessFieldManager], before[harness.HarnessFieldManager]; !slices.Equal(got, want) {
							return fmt.Errorf("the administrator's manager owns %v after the apply, %v before", got, want)
						}
						t.Logf("managers of spec fields after the apply: %v", owners)
						we, ww := waitEast(), waitWest()
						for _, p := range [][2]*harness.Workload{{we, ww}, {ww, we}} {
							if _, err := harness.WaitMTLS(ctx, p[0], p[1], true, 60*time.Second); err != nil {
								return fmt.Errorf("%s -> %s: %w", p[0].SPIFFEID, p[1].SPIFFEID, err)
							}
						}
						return nil
					}),
				},
			},
			{
				ResourceName:                         "zerotrust_cluster_spiffe_id_federation.east",
				ImportState:                          true,
				ImportStateId:                        "east/" + app,
				ImportStateVerify:                    true,
				ImportStateVerifyIdentifierAttribute: "id",
				ImportStateVerifyIgnore:              []string{"timeouts", "timeouts.%", "timeouts.create"},
			},
		},
	})
}

// TestAccClusterSPIFFEIDFederation_refusesOwnFullObject: a
// ClusterSPIFFEID that zerotrust_cluster_spiffe_id manages (the same field
// manager) cannot also get its federation from
// zerotrust_cluster_spiffe_id_federation: the plan refuses, naming the
// object and the field manager, since an apply of federatesWith alone by
// that manager would remove the object's other fields.
func TestAccClusterSPIFFEIDFederation_refusesOwnFullObject(t *testing.T) {
	acctest.Spire(t, acctest.East)
	name := acctest.UniqueName("own")
	full := acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_cluster_spiffe_id" "full" {
  cluster            = "east"
  name               = %q
  spiffe_id_template = %q
}
`, name, csidTemplate)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: full},
			{
				Config: full + fmt.Sprintf(`
resource "zerotrust_cluster_spiffe_id_federation" "also" {
  cluster        = "east"
  name           = %q
  federates_with = ["peer.zt.test"]
}
`, name),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)ClusterSPIFFEID Managed in Full by This Provider.*` + regexp.QuoteMeta(name) + `.*` + regexp.QuoteMeta(providerFieldManager)),
			},
		},
	})
}

// TestAccClusterSPIFFEIDFederation_undeclaredTrustDomain: a federates_with
// trust domain no federation of the cluster declares is a warning at plan
// (an earlier resource of the same apply may declare it) and is refused at
// apply before anything is written, on create and on an update that adds
// it: the administrator's ClusterSPIFFEID keeps the federatesWith it had,
// and the state what it held.
func TestAccClusterSPIFFEIDFederation_undeclaredTrustDomain(t *testing.T) {
	east := acctest.Spire(t, acctest.East)
	name := acctest.UniqueName("fedundecl")
	declared := name + ".test"
	ctx := context.Background()
	if err := east.ApplyClusterSPIFFEID(ctx, harness.ClusterSPIFFEIDOptions{
		Name: name, SPIFFEIDTemplate: csidTemplate, PodLabels: map[string]string{"app": name},
	}); err != nil {
		t.Fatal(err)
	}
	cftd := &unstructured.Unstructured{Object: map[string]any{"apiVersion": kube.ClusterFederatedTrustDomain.APIVersion(),
		"kind": kube.ClusterFederatedTrustDomain.Kind, "metadata": map[string]any{"name": name}, "spec": bootstrapCFTDSpec(t, declared)}}
	cftds := acctest.Dynamic(t, acctest.East).Resource(kube.ClusterFederatedTrustDomain.GVR())
	if _, err := cftds.Create(ctx, cftd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = acctest.Dynamic(t, acctest.East).Resource(csidGVR).Delete(ctx, name, metav1.DeleteOptions{})
		_ = cftds.Delete(ctx, name, metav1.DeleteOptions{})
	})
	config := func(tds ...string) string {
		list, _ := json.Marshal(tds)
		return acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_cluster_spiffe_id_federation" "this" {
  cluster        = "east"
  name           = %q
  federates_with = %s
  timeouts = {
    create = "1m"
    update = "1m"
  }
}
`, name, list)
	}
	federatesWith := func() []string {
		_, obj, err := csidOwners(t, acctest.East, name)
		if err != nil {
			t.Fatal(err)
		}
		list, _, _ := unstructured.NestedStringSlice(obj.Object, "spec", "federatesWith")
		return list
	}
	facts := `Attribute federates_with: Cluster "east" has no federation with "nobody-declares.test"`
	refused := func(w *cliWorkspace, what string, wantList []string, wantState string) {
		t.Helper()
		plan := w.run("plan")
		if !strings.Contains(plan, "Warning: Trust Domain Not Federated") || !strings.Contains(plan, facts) || strings.Contains(plan, "Error:") {
			t.Fatalf("plan of the %s: want the warning %q and no error:\n%s", what, facts, plan)
		}
		out, code := acctest.Terraform(t, "terraform", w.dir, w.reattach, "apply", "-auto-approve")
		apply := strings.Join(strings.Fields(out), " ")
		if code == 0 || !strings.Contains(apply, "Error: Trust Domain Not Federated") || !strings.Contains(apply, facts) {
			t.Fatalf("apply of the %s: want it to fail with %q:\n%s", what, facts, apply)
		}
		t.Logf("apply of the %s refused: %s", what, apply[strings.Index(apply, "Error:"):])
		if got := federatesWith(); !slices.Equal(got, wantList) {
			t.Fatalf("after the refused %s, spec.federatesWith is %q, want %q", what, got, wantList)
		}
		if state := strings.TrimSpace(acctest.MustTerraform(t, "terraform", w.dir, w.reattach, "state", "list")); state != wantState {
			t.Fatalf("after the refused %s, the state holds %q, want %q", what, state, wantState)
		}
	}
	w := newCLIWorkspace(t)
	w.write(config("nobody-declares.test"))
	w.run("init")
	refused(w, "create", nil, "")
	w.write(config(declared))
	w.run("apply", "-auto-approve")
	w.write(config(declared, "nobody-declares.test"))
	refused(w, "update", []string{declared}, "zerotrust_cluster_spiffe_id_federation.this")
	w.run("destroy", "-auto-approve")
}
