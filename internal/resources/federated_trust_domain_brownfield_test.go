package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

// providerFieldManager is the provider's default field manager, which the
// lab's provider blocks keep.
const providerFieldManager = "zerotrust"

// brownfieldManager stands for whoever created an object before Terraform
// knew about it (kubectl, a Helm chart, an operator's console).
const brownfieldManager = "kubectl-create"

// createAsOther creates obj on cluster with only what it holds, as another
// field manager, and returns it as the API server stored it (CRD defaults
// applied).
func createAsOther(t *testing.T, cluster string, gvr schema.GroupVersionResource, obj map[string]any) *unstructured.Unstructured {
	t.Helper()
	out, err := acctest.Dynamic(t, cluster).Resource(gvr).Create(context.Background(),
		&unstructured.Unstructured{Object: obj}, metav1.CreateOptions{FieldManager: brownfieldManager})
	if err != nil {
		t.Fatalf("%s: create %s as %s: %v", cluster, gvr.Resource, brownfieldManager, err)
	}
	return out
}

// checkUntouched asks the cluster whether the provider left an adopted
// object alone: spec as created, and no field owned by the provider's
// field manager (an import that wrote anything would own what it wrote).
func checkUntouched(t *testing.T, cluster string, gvr schema.GroupVersionResource, created *unstructured.Unstructured) resource.TestCheckFunc {
	return func(*terraform.State) error {
		obj, err := acctest.Dynamic(t, cluster).Resource(gvr).Get(context.Background(), created.GetName(), metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("%s: get %s %s: %w", cluster, gvr.Resource, created.GetName(), err)
		}
		for _, f := range obj.GetManagedFields() {
			if f.Manager == providerFieldManager {
				return fmt.Errorf("%s: %s %s has fields owned by %q after import (%s %s): import must write nothing",
					cluster, gvr.Resource, created.GetName(), providerFieldManager, f.Operation, f.FieldsV1)
			}
		}
		want, _, _ := unstructured.NestedMap(created.Object, "spec")
		got, _, _ := unstructured.NestedMap(obj.Object, "spec")
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("%s: %s %s spec = %v after import, want it unchanged: %v", cluster, gvr.Resource, created.GetName(), got, want)
		}
		return nil
	}
}

func cftdObject(name string, spec map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "spire.spiffe.io/v1alpha1", "kind": "ClusterFederatedTrustDomain",
		"metadata": map[string]any{"name": name}, "spec": spec,
	}
}

// TestAccFederatedTrustDomain_brownfieldImport adopts objects another field
// manager created, with `terraform import` and with an `import {}` block,
// using the configuration a user would write for them: each plans no change
// and writes nothing. The CRD defaults nothing, so the objects hold exactly
// what was created:
//   - required fields only (https_web, no className): class_name reads as null
//     and is not written, although new objects get the provider's
//     spire.class_name;
//   - a fuller object with its own className and a trust bundle, adopted by a
//     configuration that sets neither: both are kept, nothing is planned.
//
// Setting class_name afterwards writes it; removing it again plans nothing,
// since the provider's default is the value it now owns.
func TestAccFederatedTrustDomain_brownfieldImport(t *testing.T) {
	const cluster = acctest.West
	id := acctest.UniqueName("brown")
	byCommand, byBlock, full := "cmd-"+id+".test", "blk-"+id+".test", "full-"+id+".test"
	fullBundle := testBundle(t, full)
	created := map[string]*unstructured.Unstructured{
		byCommand: createAsOther(t, cluster, cftdGVR, cftdObject(byCommand, map[string]any{
			"trustDomain": byCommand, "bundleEndpointURL": "https://bundles." + byCommand,
			"bundleEndpointProfile": map[string]any{"type": "https_web"},
		})),
		byBlock: createAsOther(t, cluster, cftdGVR, cftdObject(byBlock, map[string]any{
			"trustDomain": byBlock, "bundleEndpointURL": "https://bundles." + byBlock,
			"bundleEndpointProfile": map[string]any{"type": "https_web"},
		})),
		full: createAsOther(t, cluster, cftdGVR, cftdObject(full, map[string]any{
			"trustDomain": full, "bundleEndpointURL": "https://spire." + full + ":8443",
			"bundleEndpointProfile": map[string]any{"type": "https_spiffe", "endpointSPIFFEID": "spiffe://" + full + "/spire/server"},
			"trustDomainBundle":     fullBundle,
			"className":             "someone-elses-class",
		})),
	}
	addr := func(name string) string { return "zerotrust_federated_trust_domain." + name }
	webConfig := func(resName, td, extra string) string {
		return fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" %q {
  cluster                 = %q
  trust_domain            = %q
  bundle_endpoint_url     = "https://bundles.%s"
  bundle_endpoint_profile = { type = "https_web" }
%s}
`, resName, cluster, td, td, extra)
	}
	fullConfig := fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "full" {
  cluster             = %q
  trust_domain        = %q
  bundle_endpoint_url = "https://spire.%s:8443"
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = "spiffe://%s/spire/server"
  }
}
`, cluster, full, full, full)
	cmdOnly := acctest.ProviderConfig(t) + webConfig("cmd", byCommand, "")
	all := cmdOnly + webConfig("blk", byBlock, "") + fullConfig
	importBlocks := fmt.Sprintf(`
import {
  to = zerotrust_federated_trust_domain.blk
  id = "%[1]s/%[2]s"
}

import {
  to = zerotrust_federated_trust_domain.full
  id = "%[1]s/%[3]s"
}
`, cluster, byBlock, full)
	untouched := func(names ...string) resource.TestCheckFunc {
		var checks []resource.TestCheckFunc
		for _, n := range names {
			checks = append(checks, checkUntouched(t, cluster, cftdGVR, created[n]))
		}
		return resource.ComposeAggregateTestCheckFunc(checks...)
	}

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkCFTDsGone(t, map[string]string{cluster: byCommand}),
		Steps: []resource.TestStep{
			{
				// terraform import, kept in state for the next step.
				Config:             cmdOnly,
				ResourceName:       addr("cmd"),
				ImportState:        true,
				ImportStateId:      cluster + "/" + byCommand,
				ImportStatePersist: true,
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if len(states) != 1 {
						return fmt.Errorf("imported %d objects, want 1", len(states))
					}
					if v, ok := states[0].Attributes["class_name"]; ok && v != "" {
						return fmt.Errorf("class_name = %q after import of an object without className, want null", v)
					}
					return nil
				},
			},
			{
				Config: cmdOnly,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr("cmd"), tfjsonpath.New("id"), knownvalue.StringExact(cluster+"/"+byCommand)),
					statecheck.ExpectKnownValue(addr("cmd"), tfjsonpath.New("class_name"), knownvalue.Null()),
					statecheck.ExpectKnownValue(addr("cmd"), tfjsonpath.New("trust_domain_bundle"), knownvalue.Null()),
					statecheck.ExpectKnownValue(addr("cmd"), tfjsonpath.New("bundle_endpoint_profile").AtMapKey("endpoint_spiffe_id"), knownvalue.Null()),
				},
				Check: untouched(byCommand),
			},
			{
				// The same, applied: both objects adopted, nothing written.
				Config: all + importBlocks,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectEmptyPlan(),
						plancheck.ExpectResourceAction(addr("blk"), plancheck.ResourceActionNoop),
						plancheck.ExpectResourceAction(addr("full"), plancheck.ResourceActionNoop),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr("blk"), tfjsonpath.New("class_name"), knownvalue.Null()),
					statecheck.ExpectKnownValue(addr("full"), tfjsonpath.New("class_name"), knownvalue.StringExact("someone-elses-class")),
					statecheck.ExpectKnownValue(addr("full"), tfjsonpath.New("trust_domain_bundle"), knownvalue.StringExact(fullBundle)),
				},
				Check: untouched(byCommand, byBlock, full),
			},
			{
				// terraform-plugin-testing's plannable import (it drops the
				// resource from a copy of the state and imports it again with
				// an import block): a no-op too.
				Config:          all,
				ResourceName:    addr("blk"),
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
				ImportStateId:   cluster + "/" + byBlock,
				ImportPlanChecks: resource.ImportPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr("blk"), plancheck.ResourceActionNoop),
						plancheck.ExpectKnownValue(addr("blk"), tfjsonpath.New("class_name"), knownvalue.Null()),
					},
				},
			},
			{
				// Configured, className is written: the provider now owns it.
				Config: cmdOnly + webConfig("blk", byBlock, `  class_name = "zero-trust-workload-identity-manager-spire"`+"\n") + fullConfig,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr("blk"), plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction(addr("cmd"), plancheck.ResourceActionNoop),
						plancheck.ExpectResourceAction(addr("full"), plancheck.ResourceActionNoop),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkCFTDSpec(t, cluster, byBlock, map[string]string{"className": "zero-trust-workload-identity-manager-spire"}),
					untouched(byCommand, full),
				),
			},
			{
				// Unset again, class_name means the provider's spire.class_name,
				// which is what the object holds: no change.
				Config: all,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr("blk"), tfjsonpath.New("class_name"),
						knownvalue.StringExact("zero-trust-workload-identity-manager-spire")),
				},
			},
			{
				// Destroy through the configuration, then ask the cluster.
				Config: acctest.ProviderConfig(t),
				ConfigStateChecks: []statecheck.StateCheck{
					acctest.ClusterCheck(checkCFTDsGone(t, map[string]string{cluster: byBlock})),
					acctest.ClusterCheck(func(*terraform.State) error {
						for _, n := range []string{byCommand, full} {
							if _, err := getCFTD(t, cluster, n); !apierrors.IsNotFound(err) {
								return fmt.Errorf("%s: %s after destroy: %v, want it deleted", cluster, n, err)
							}
						}
						return nil
					}),
				},
			},
		},
	})
}

// TestAccFederatedTrustDomain_duplicateTrustDomainAtPlan: a ClusterFederated-
// TrustDomain for the same trust domain that someone else created makes
// `terraform plan` fail, naming the attribute, the object and the cluster, and
// nothing is written. While the cluster's connection is unknown at plan (a
// cluster created in the same apply) the plan succeeds and the apply refuses
// before writing.
func TestAccFederatedTrustDomain_duplicateTrustDomainAtPlan(t *testing.T) {
	const cluster = acctest.West
	td := acctest.UniqueName("dupplan") + ".test"
	other := createAsOther(t, cluster, cftdGVR, cftdObject("other-"+td, map[string]any{
		"trustDomain": td, "bundleEndpointURL": "https://x.test",
		"bundleEndpointProfile": map[string]any{"type": "https_web"},
	}))
	wantErr := regexp.MustCompile(`(?s)Duplicate Trust Domain.*trust_domain.*ClusterFederatedTrustDomain\s+"other-` +
		regexp.QuoteMeta(td) + `"\s+on\s+cluster\s+"` + cluster + `"`)
	west := acctest.Cluster(t, cluster)
	lateConfig := acctest.LateProviderConfig(west) + fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "this" {
  cluster                 = "late"
  trust_domain            = %q
  bundle_endpoint_url     = "https://spire.%s"
  bundle_endpoint_profile = { type = "https_web" }
}
`, td, td)
	nothingWritten := func() {
		if _, err := getCFTD(t, cluster, td); !apierrors.IsNotFound(err) {
			t.Fatalf("%s: ClusterFederatedTrustDomain %s after the refused run: %v, want none", cluster, td, err)
		}
		if err := checkUntouched(t, cluster, cftdGVR, other)(nil); err != nil {
			t.Fatal(err)
		}
	}

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkCFTDsGone(t, map[string]string{cluster: td}),
		Steps: []resource.TestStep{
			{
				Config:      singleConfig(t, cluster, td, ""),
				PlanOnly:    true,
				ExpectError: wantErr,
			},
			{
				// The plan cannot ask the cluster; the apply refuses.
				PreConfig: nothingWritten,
				Config:    lateConfig,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("zerotrust_federated_trust_domain.this", plancheck.ResourceActionCreate),
					},
				},
				ExpectError: regexp.MustCompile(`(?s)Duplicate Trust Domain.*other-` + regexp.QuoteMeta(td)),
			},
			{
				PreConfig: func() {
					nothingWritten()
					if err := acctest.Dynamic(t, cluster).Resource(cftdGVR).Delete(context.Background(), other.GetName(), metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config: singleConfig(t, cluster, td, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkCFTDSpec(t, cluster, td, map[string]string{"trustDomain": td}),
			},
		},
	})
}
