package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

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

// clusterCheck runs a check against the cluster as a state check: the legacy
// Check field cannot address for_each instances.
type clusterCheck resource.TestCheckFunc

func (c clusterCheck) CheckState(_ context.Context, _ statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	resp.Error = c(nil)
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

// pairConfig federates east and west with each other from one provider block:
// each cluster gets a ClusterFederatedTrustDomain for the other's trust domain.
func pairConfig(t *testing.T, tds map[string]string, bundles map[string]string, urlSuffix string) string {
	t.Helper()
	return acctest.ProviderConfig(t) + fmt.Sprintf(`
locals {
  trust_domains = { east = %q, west = %q }
  bundles       = { east = %q, west = %q }
  peer          = { east = "west", west = "east" }
}

resource "zerotrust_federated_trust_domain" "peer" {
  for_each = local.peer

  cluster             = each.key
  trust_domain        = local.trust_domains[each.value]
  bundle_endpoint_url = "https://spire-${each.value}.example.test:8443%s"
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = provider::zerotrust::spiffe_id(local.trust_domains[each.value], "spire", "server")
  }
  trust_domain_bundle = local.bundles[each.value]
}
`, tds["east"], tds["west"], bundles["east"], bundles["west"], urlSuffix)
}

func TestAccFederatedTrustDomain_twoClusters(t *testing.T) {
	id := acctest.UniqueName("pair")
	tds := map[string]string{"east": "east-" + id + ".test", "west": "west-" + id + ".test"}
	bundles := map[string]string{"east": testBundle(t, tds["east"]), "west": testBundle(t, tds["west"])}
	rotated := map[string]string{"east": testBundle(t, tds["east"]), "west": testBundle(t, tds["west"])}
	// On east lives the object for west's trust domain, and the other way round.
	onEast, onWest := tds["west"], tds["east"]
	imported := map[string]string{"east": "imp-east-" + id + ".test", "west": "imp-west-" + id + ".test"}

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkCFTDsGone(t, map[string]string{"east": onEast, "west": onWest}),
			checkCFTDsGone(t, imported),
		),
		Steps: []resource.TestStep{
			{
				Config: pairConfig(t, tds, bundles, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(`zerotrust_federated_trust_domain.peer["east"]`, plancheck.ResourceActionCreate),
						plancheck.ExpectResourceAction(`zerotrust_federated_trust_domain.peer["west"]`, plancheck.ResourceActionCreate),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(`zerotrust_federated_trust_domain.peer["east"]`, tfjsonpath.New("id"), knownvalue.StringExact("east/"+onEast)),
					statecheck.ExpectKnownValue(`zerotrust_federated_trust_domain.peer["east"]`, tfjsonpath.New("name"), knownvalue.StringExact(onEast)),
					statecheck.ExpectKnownValue(`zerotrust_federated_trust_domain.peer["west"]`, tfjsonpath.New("trust_domain"), knownvalue.StringExact(onWest)),
					statecheck.ExpectKnownValue(`zerotrust_federated_trust_domain.peer["west"]`, tfjsonpath.New("class_name"),
						knownvalue.StringExact("zero-trust-workload-identity-manager-spire")),
					statecheck.ExpectKnownValue(`zerotrust_federated_trust_domain.peer["west"]`, tfjsonpath.New("bundle_endpoint_profile").AtMapKey("endpoint_spiffe_id"),
						knownvalue.StringExact("spiffe://"+onWest+"/spire/server")),
					statecheck.ExpectKnownValue(`zerotrust_federated_trust_domain.peer["east"]`, tfjsonpath.New("force_conflicts"), knownvalue.Bool(false)),
					clusterCheck(checkCFTDSpec(t, "east", onEast, map[string]string{
						"trustDomain": onEast, "bundleEndpointURL": "https://spire-west.example.test:8443",
						"bundleEndpointProfile.type": "https_spiffe", "trustDomainBundle": bundles["west"],
						"className": "zero-trust-workload-identity-manager-spire",
					})),
					clusterCheck(checkCFTDSpec(t, "west", onWest, map[string]string{
						"trustDomain": onWest, "bundleEndpointProfile.endpointSPIFFEID": "spiffe://" + onWest + "/spire/server",
						"trustDomainBundle": bundles["east"],
					})),
				},
			},
			{
				// A rotated bundle is bootstrap input only: no diff.
				Config: pairConfig(t, tds, rotated, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					clusterCheck(checkCFTDSpec(t, "east", onEast, map[string]string{"trustDomainBundle": bundles["west"]})),
				},
			},
			{
				// An endpoint change updates in place and releases the bundle field,
				// so a stale bundle cannot overwrite what SPIRE holds.
				Config: pairConfig(t, tds, rotated, "/v2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(`zerotrust_federated_trust_domain.peer["east"]`, plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction(`zerotrust_federated_trust_domain.peer["west"]`, plancheck.ResourceActionUpdate),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					clusterCheck(checkCFTDSpec(t, "east", onEast, map[string]string{
						"bundleEndpointURL": "https://spire-west.example.test:8443/v2", "trustDomainBundle": "",
					})),
					clusterCheck(checkCFTDSpec(t, "west", onWest, map[string]string{
						"bundleEndpointURL": "https://spire-east.example.test:8443/v2", "trustDomainBundle": "",
					})),
				},
			},
			{
				// Objects made outside Terraform on both clusters, adopted with
				// for_each import blocks (terraform-plugin-testing's ImportState
				// step cannot address for_each instances).
				PreConfig: func() {
					for cluster, td := range imported {
						createCFTD(t, cluster, td, "zero-trust-workload-identity-manager-spire")
					}
				},
				Config: pairConfig(t, tds, rotated, "/v2") + importConfig(imported),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(`zerotrust_federated_trust_domain.imported["east"]`, plancheck.ResourceActionNoop),
						plancheck.ExpectResourceAction(`zerotrust_federated_trust_domain.imported["west"]`, plancheck.ResourceActionNoop),
						plancheck.ExpectKnownValue(`zerotrust_federated_trust_domain.imported["west"]`, tfjsonpath.New("id"),
							knownvalue.StringExact("west/"+imported["west"])),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				// Destroy through the configuration: the test framework's own
				// post-test destroy reads state through a shim that cannot
				// address for_each instances.
				Config: acctest.ProviderConfig(t),
				ConfigStateChecks: []statecheck.StateCheck{
					clusterCheck(checkCFTDsGone(t, map[string]string{"east": onEast, "west": onWest})),
					clusterCheck(checkCFTDsGone(t, imported)),
				},
			},
		},
	})
}

// importConfig adopts one existing object per cluster (cluster => trust domain).
func importConfig(imported map[string]string) string {
	return fmt.Sprintf(`
locals {
  imported = { east = %q, west = %q }
}

import {
  for_each = local.imported
  to       = zerotrust_federated_trust_domain.imported[each.key]
  id       = "${each.key}/${each.value}"
}

resource "zerotrust_federated_trust_domain" "imported" {
  for_each = local.imported

  cluster                 = each.key
  trust_domain            = each.value
  bundle_endpoint_url     = "https://bundles.${each.value}"
  bundle_endpoint_profile = { type = "https_web" }
}
`, imported["east"], imported["west"])
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
