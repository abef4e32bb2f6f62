package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
)

var cftdGVR = kube.ClusterFederatedTrustDomain.GVR()

// testBundle returns a SPIFFE bundle JSON for td holding one fresh CA.
func testBundle(t *testing.T, td string) string {
	t.Helper()
	now := time.Now()
	return bundletest.BundleJSON(t, spiffeid.RequireTrustDomainFromString(td),
		bundletest.NewCA(t, spiffeid.RequireTrustDomainFromString(td), now.Add(-time.Hour), now.Add(24*time.Hour)))
}

func getCFTD(t *testing.T, cluster, name string) (*unstructured.Unstructured, error) {
	t.Helper()
	return acctest.Dynamic(t, cluster).Resource(cftdGVR).Get(context.Background(), name, metav1.GetOptions{})
}

// checkCFTDSpec asks the cluster, not the state, what the object holds.
func checkCFTDSpec(t *testing.T, cluster, name string, want map[string]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		obj, err := getCFTD(t, cluster, name)
		if err != nil {
			return fmt.Errorf("%s: get %s: %w", cluster, name, err)
		}
		for field, w := range want {
			got, _, _ := unstructured.NestedString(obj.Object, strings.Split("spec."+field, ".")...)
			if got != w {
				return fmt.Errorf("%s: %s spec.%s = %q, want %q", cluster, name, field, got, w)
			}
		}
		return nil
	}
}

// checkCFTDsGone asks each cluster of names that its ClusterFederatedTrustDomain is gone.
func checkCFTDsGone(t *testing.T, names map[string]string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		for cluster, name := range names {
			if err := acctest.CheckGone(t, cluster, cftdGVR, "", name)(s); err != nil {
				return err
			}
		}
		return nil
	}
}

// ftdPair is what the two-cluster tests share: east and west federated with
// each other by testdata/federated_trust_domain/pair.tf, with trust domains
// of the test's own.
type ftdPair struct {
	tds, bundles map[string]string
	// onEast and onWest name the objects: on east lives the object for
	// west's trust domain, and the other way round.
	onEast, onWest string
}

const (
	ftdPeerEast = `zerotrust_federated_trust_domain.peer["east"]`
	ftdPeerWest = `zerotrust_federated_trust_domain.peer["west"]`
)

func newFTDPair(t *testing.T, prefix string) ftdPair {
	t.Helper()
	id := acctest.UniqueName(prefix)
	tds := map[string]string{"east": "east-" + id + ".test", "west": "west-" + id + ".test"}
	return ftdPair{
		tds: tds, bundles: map[string]string{"east": testBundle(t, tds["east"]), "west": testBundle(t, tds["west"])},
		onEast: tds["west"], onWest: tds["east"],
	}
}

// step applies pair.tf with bundles and the endpoint URLs' suffix.
func (p ftdPair) step(t *testing.T, bundles map[string]string, urlSuffix string) resource.TestStep {
	t.Helper()
	return resource.TestStep{
		Config: testdataConfig(t, acctest.ProviderConfig(t), "federated_trust_domain/pair.tf"),
		ConfigVariables: config.Variables{
			"trust_domains": stringMapVariable(p.tds), "bundles": stringMapVariable(bundles),
			"url_suffix": config.StringVariable(urlSuffix),
		},
	}
}

// create is the first apply of pair.tf, creating both objects.
func (p ftdPair) create(t *testing.T) resource.TestStep {
	step := p.step(t, p.bundles, "")
	step.ConfigPlanChecks = resource.ConfigPlanChecks{
		PreApply: []plancheck.PlanCheck{
			plancheck.ExpectResourceAction(ftdPeerEast, plancheck.ResourceActionCreate),
			plancheck.ExpectResourceAction(ftdPeerWest, plancheck.ResourceActionCreate),
		},
		PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
	}
	return step
}

// destroyed is the last step of a test holding for_each instances: destroy
// through the configuration, since the test framework's own post-test
// destroy reads state through a shim that cannot address them.
func destroyed(t *testing.T, gone ...map[string]string) resource.TestStep {
	checks := make([]statecheck.StateCheck, len(gone))
	for i, names := range gone {
		checks[i] = acctest.ClusterCheck(checkCFTDsGone(t, names))
	}
	return resource.TestStep{Config: acctest.ProviderConfig(t), ConfigStateChecks: checks}
}

func stringMapVariable(m map[string]string) config.Variable {
	values := make(map[string]config.Variable, len(m))
	for k, v := range m {
		values[k] = config.StringVariable(v)
	}
	return config.MapVariable(values)
}

// TestAccFederatedTrustDomain_twoClusters federates two clusters with each
// other from one provider block; a rotated bundle is bootstrap input only,
// so it plans no diff.
func TestAccFederatedTrustDomain_twoClusters(t *testing.T) {
	p := newFTDPair(t, "pair")
	rotated := map[string]string{"east": testBundle(t, p.tds["east"]), "west": testBundle(t, p.tds["west"])}
	create := p.create(t)
	create.ConfigStateChecks = []statecheck.StateCheck{
		statecheck.ExpectKnownValue(ftdPeerEast, tfjsonpath.New("id"), knownvalue.StringExact("east/"+p.onEast)),
		statecheck.ExpectKnownValue(ftdPeerEast, tfjsonpath.New("name"), knownvalue.StringExact(p.onEast)),
		statecheck.ExpectKnownValue(ftdPeerWest, tfjsonpath.New("trust_domain"), knownvalue.StringExact(p.onWest)),
		statecheck.ExpectKnownValue(ftdPeerWest, tfjsonpath.New("class_name"),
			knownvalue.StringExact("zero-trust-workload-identity-manager-spire")),
		statecheck.ExpectKnownValue(ftdPeerWest, tfjsonpath.New("bundle_endpoint_profile").AtMapKey("endpoint_spiffe_id"),
			knownvalue.StringExact("spiffe://"+p.onWest+"/spire/server")),
		statecheck.ExpectKnownValue(ftdPeerEast, tfjsonpath.New("force_conflicts"), knownvalue.Bool(false)),
		acctest.ClusterCheck(checkCFTDSpec(t, "east", p.onEast, map[string]string{
			"trustDomain": p.onEast, "bundleEndpointURL": "https://spire-west.example.test:8443",
			"bundleEndpointProfile.type": "https_spiffe", "trustDomainBundle": p.bundles["west"],
			"className": "zero-trust-workload-identity-manager-spire",
		})),
		acctest.ClusterCheck(checkCFTDSpec(t, "west", p.onWest, map[string]string{
			"trustDomain": p.onWest, "bundleEndpointProfile.endpointSPIFFEID": "spiffe://" + p.onWest + "/spire/server",
			"trustDomainBundle": p.bundles["east"],
		})),
	}
	rotate := p.step(t, rotated, "")
	rotate.ConfigPlanChecks = resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}
	rotate.ConfigStateChecks = []statecheck.StateCheck{
		acctest.ClusterCheck(checkCFTDSpec(t, "east", p.onEast, map[string]string{"trustDomainBundle": p.bundles["west"]})),
	}
	gone := map[string]string{"east": p.onEast, "west": p.onWest}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkCFTDsGone(t, gone),
		Steps:                    []resource.TestStep{create, rotate, destroyed(t, gone)},
	})
}

// TestAccFederatedTrustDomain_endpointChange: an endpoint change updates in
// place and releases the bundle field, so a stale bundle cannot overwrite
// what SPIRE holds.
func TestAccFederatedTrustDomain_endpointChange(t *testing.T) {
	p := newFTDPair(t, "endpt")
	moved := p.step(t, p.bundles, "/v2")
	moved.ConfigPlanChecks = resource.ConfigPlanChecks{
		PreApply: []plancheck.PlanCheck{
			plancheck.ExpectResourceAction(ftdPeerEast, plancheck.ResourceActionUpdate),
			plancheck.ExpectResourceAction(ftdPeerWest, plancheck.ResourceActionUpdate),
		},
		PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
	}
	moved.ConfigStateChecks = []statecheck.StateCheck{
		acctest.ClusterCheck(checkCFTDSpec(t, "east", p.onEast, map[string]string{
			"bundleEndpointURL": "https://spire-west.example.test:8443/v2", "trustDomainBundle": "",
		})),
		acctest.ClusterCheck(checkCFTDSpec(t, "west", p.onWest, map[string]string{
			"bundleEndpointURL": "https://spire-east.example.test:8443/v2", "trustDomainBundle": "",
		})),
	}
	gone := map[string]string{"east": p.onEast, "west": p.onWest}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkCFTDsGone(t, gone),
		Steps:                    []resource.TestStep{p.create(t), moved, destroyed(t, gone)},
	})
}

// TestAccFederatedTrustDomain_importBlocks: objects made outside Terraform on
// both clusters are adopted with for_each import blocks
// (terraform-plugin-testing's ImportState step cannot address for_each
// instances), and the plan after the import is empty.
func TestAccFederatedTrustDomain_importBlocks(t *testing.T) {
	id := acctest.UniqueName("impb")
	imported := map[string]string{"east": "imp-east-" + id + ".test", "west": "imp-west-" + id + ".test"}
	adopt := resource.TestStep{
		PreConfig: func() {
			for cluster, td := range imported {
				createCFTD(t, cluster, td, "zero-trust-workload-identity-manager-spire")
			}
		},
		Config:          testdataConfig(t, acctest.ProviderConfig(t), "federated_trust_domain/import_blocks.tf"),
		ConfigVariables: config.Variables{"imported": stringMapVariable(imported)},
		ConfigPlanChecks: resource.ConfigPlanChecks{
			PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(`zerotrust_federated_trust_domain.imported["east"]`, plancheck.ResourceActionNoop),
				plancheck.ExpectResourceAction(`zerotrust_federated_trust_domain.imported["west"]`, plancheck.ResourceActionNoop),
				plancheck.ExpectKnownValue(`zerotrust_federated_trust_domain.imported["west"]`, tfjsonpath.New("id"),
					knownvalue.StringExact("west/"+imported["west"])),
			},
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
		},
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkCFTDsGone(t, imported),
		Steps:                    []resource.TestStep{adopt, destroyed(t, imported)},
	})
}

// createCFTD makes an object the way another tool would (not server-side apply).
func createCFTD(t *testing.T, cluster, td, className string) {
	t.Helper()
	spec := map[string]any{"trustDomain": td, "bundleEndpointURL": "https://bundles." + td,
		"bundleEndpointProfile": map[string]any{"type": "https_web"}}
	if className != "" {
		spec["className"] = className
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "spire.spiffe.io/v1alpha1", "kind": "ClusterFederatedTrustDomain",
		"metadata": map[string]any{"name": td}, "spec": spec,
	}}
	if _, err := acctest.Dynamic(t, cluster).Resource(cftdGVR).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("%s: create %s: %v", cluster, td, err)
	}
}

func singleConfig(t *testing.T, cluster, td, extra string) string {
	t.Helper()
	return acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "this" {
  cluster             = %q
  trust_domain        = %q
  bundle_endpoint_url = "https://spire.%s:8443"
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = "spiffe://%s/spire/server"
  }
%s
}
`, cluster, td, td, td, extra)
}

func TestAccFederatedTrustDomain_drift(t *testing.T) {
	td := acctest.UniqueName("drift") + ".test"
	ctx := context.Background()
	dyn := acctest.Dynamic(t, "west")

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkCFTDsGone(t, map[string]string{"west": td}),
		Steps: []resource.TestStep{
			{Config: singleConfig(t, "west", td, "")},
			{
				// Deleted outside Terraform: the plan recreates it.
				PreConfig: func() {
					if err := dyn.Resource(cftdGVR).Delete(ctx, td, metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config: singleConfig(t, "west", td, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("zerotrust_federated_trust_domain.this", plancheck.ResourceActionCreate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkCFTDSpec(t, "west", td, map[string]string{"trustDomain": td}),
			},
			{
				// Edited by another field manager: the plan changes it back, and
				// applying without force names that manager.
				PreConfig: func() {
					patch := []byte(`{"spec":{"bundleEndpointURL":"https://elsewhere.test"}}`)
					if _, err := dyn.Resource(cftdGVR).Patch(ctx, td, types.MergePatchType, patch,
						metav1.PatchOptions{FieldManager: "drift-editor"}); err != nil {
						t.Fatal(err)
					}
				},
				Config: singleConfig(t, "west", td, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("zerotrust_federated_trust_domain.this", plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue("zerotrust_federated_trust_domain.this", tfjsonpath.New("bundle_endpoint_url"),
							knownvalue.StringExact("https://spire."+td+":8443")),
					},
				},
				ExpectError: regexp.MustCompile(`(?s)Field Manager Conflict.*drift-editor.*force_conflicts`),
			},
			{
				Config: singleConfig(t, "west", td, "  force_conflicts = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkCFTDSpec(t, "west", td, map[string]string{"bundleEndpointURL": "https://spire." + td + ":8443"}),
			},
		},
	})
}

func TestAccFederatedTrustDomain_defaultConnectionAndName(t *testing.T) {
	// Underscores are legal in trust domains, not in object names.
	td := strings.ReplaceAll(acctest.UniqueName("under"), "-", "_") + ".test"
	name := strings.ReplaceAll(td, "_", "-")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkCFTDsGone(t, map[string]string{"east": name}),
		Steps: []resource.TestStep{
			{
				Config: acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "this" {
  trust_domain            = %q
  bundle_endpoint_url     = "https://bundles.example.test/%s"
  bundle_endpoint_profile = { type = "https_web" }
  class_name              = ""
}
`, td, td),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("zerotrust_federated_trust_domain.this", tfjsonpath.New("id"), knownvalue.StringExact(name)),
					statecheck.ExpectKnownValue("zerotrust_federated_trust_domain.this", tfjsonpath.New("cluster"), knownvalue.Null()),
					statecheck.ExpectKnownValue("zerotrust_federated_trust_domain.this", tfjsonpath.New("class_name"), knownvalue.StringExact("")),
				},
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            checkCFTDSpec(t, "east", name, map[string]string{"trustDomain": td, "bundleEndpointProfile.type": "https_web", "className": ""}),
			},
			{
				ResourceName:      "zerotrust_federated_trust_domain.this",
				ImportState:       true,
				ImportStateId:     name,
				ImportStateVerify: true,
				// class_name = "" and no class are the same object; import reads it as unset.
				ImportStateVerifyIgnore: []string{"class_name"},
			},
		},
	})
}

func TestAccFederatedTrustDomain_duplicateTrustDomain(t *testing.T) {
	td := acctest.UniqueName("dup") + ".test"
	ctx := context.Background()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkCFTDsGone(t, map[string]string{"west": "other-" + td}),
		Steps: []resource.TestStep{
			{
				// Two resources for one trust domain in one configuration.
				Config: singleConfig(t, "west", td, `  name = "first-`+td+`"`) + fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "again" {
  cluster                 = "west"
  name                    = "second-%s"
  trust_domain            = %q
  bundle_endpoint_url     = "https://spire.%s:8443"
  bundle_endpoint_profile = { type = "https_web" }
}
`, td, td, td),
				ExpectError: regexp.MustCompile(`Duplicate Trust Domain`),
			},
			{
				// An object for the trust domain made outside Terraform.
				PreConfig: func() {
					for _, n := range []string{"first-" + td, "second-" + td} {
						_ = acctest.Dynamic(t, "west").Resource(cftdGVR).Delete(ctx, n, metav1.DeleteOptions{})
					}
					obj := &unstructured.Unstructured{Object: map[string]any{
						"apiVersion": "spire.spiffe.io/v1alpha1", "kind": "ClusterFederatedTrustDomain",
						"metadata": map[string]any{"name": "other-" + td},
						"spec": map[string]any{"trustDomain": td, "bundleEndpointURL": "https://x.test",
							"bundleEndpointProfile": map[string]any{"type": "https_web"}},
					}}
					if _, err := acctest.Dynamic(t, "west").Resource(cftdGVR).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config:      singleConfig(t, "west", td, ""),
				ExpectError: regexp.MustCompile(`(?s)Duplicate Trust Domain.*other-` + regexp.QuoteMeta(td)),
			},
			{
				PreConfig: func() {
					_ = acctest.Dynamic(t, "west").Resource(cftdGVR).Delete(ctx, "other-"+td, metav1.DeleteOptions{})
				},
				Config: singleConfig(t, "west", td, ""),
				Check:  checkCFTDSpec(t, "west", td, map[string]string{"trustDomain": td}),
			},
		},
	})
}

func TestAccFederatedTrustDomain_missingCRD(t *testing.T) {
	td := acctest.UniqueName("nocrd") + ".test"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: singleConfig(t, acctest.Bare, td, ""),
			ExpectError: regexp.MustCompile(
				`(?s)CustomResourceDefinition Not Installed.*clusterfederatedtrustdomains\.spire\.spiffe\.io.*spire-controller-manager`),
		}},
	})
}

// TestAccFederatedTrustDomain_unknownHost plans while the cluster's host is
// not known yet, as when the cluster is created in the same apply.
func TestAccFederatedTrustDomain_unknownHost(t *testing.T) {
	td := acctest.UniqueName("late") + ".test"
	west := acctest.Cluster(t, "west")
	config := acctest.LateProviderConfig(west) + fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "this" {
  cluster                 = "late"
  trust_domain            = %q
  bundle_endpoint_url     = "https://spire.%s"
  bundle_endpoint_profile = { type = "https_web" }
}
`, td, td)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkCFTDsGone(t, map[string]string{"west": td}),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue("terraform_data.cluster", tfjsonpath.New("output")),
					plancheck.ExpectResourceAction("zerotrust_federated_trust_domain.this", plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue("zerotrust_federated_trust_domain.this", tfjsonpath.New("id"), knownvalue.StringExact("late/"+td)),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: checkCFTDSpec(t, "west", td, map[string]string{"trustDomain": td}),
		}},
	})
}
