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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// These tests follow the rules of what the Zero Trust Workload Identity
// Manager operator's controller (pkg/controller/spire-server) does with the
// SpireServer's spec.federation, one section each of
// docs/guides/operator-contracts.md, named in the test's comment: the plan refuses what its controller
// refuses, warns about what leaves it unready, and an apply ends on its
// verdict. The operator is acctest.ZTWIMStandIn.

// unreachableProvider is a provider block whose default connection points
// at a port nothing listens on: a plan that fails with it failed without a
// cluster.
const unreachableProvider = `
provider "zerotrust" {
  kubernetes = { host = "https://127.0.0.1:1", token = "none", insecure = true }
}
`

// refusedWithoutCluster plans body on the unreachable provider and expects
// want (a regexp whose spaces may be line breaks).
func refusedWithoutCluster(t *testing.T, providerExtra, body, want string) {
	t.Helper()
	provider := strings.Replace(unreachableProvider, "provider \"zerotrust\" {\n", "provider \"zerotrust\" {\n"+providerExtra, 1)
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      provider + "resource \"zerotrust_spire_federation\" \"this\" {\n" + body + "}\n",
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)` + strings.ReplaceAll(want, " ", `\s+`)),
		}},
	})
}

func acmeHCL(directoryURL, domain, tos string) string {
	return fmt.Sprintf(`
  bundle_endpoint = {
    profile = "https_web"
    https_web = {
      acme = {
        directory_url = %q
        domain_name   = %q
        email         = "admin@example.test"
        %s
      }
    }
  }
`, directoryURL, domain, tos)
}

// "ACME needs tosAccepted": ACME without tos_accepted = true is refused at
// plan (the operator's validateAcmeConfig would refuse it and stop
// reconciling), unset or false.
func TestAccSpireFederationOperator_acmeWithoutTOS(t *testing.T) {
	for name, tos := range map[string]string{"unset": "", "false": "tos_accepted = false"} {
		t.Run(name, func(t *testing.T) {
			refusedWithoutCluster(t, "", acmeHCL("https://acme.example.test/dir", "federation.east.test", tos),
				`ACME Terms of Service Not Accepted.*bundle_endpoint.https_web.acme.tos_accepted.*validation.go validateAcmeConfig: "tosAccepted must be true to use ACME"`)
		})
	}
}

// "At most 50 peers": more than 50 peers are refused at plan whatever the
// provider's limit says, and the provider's limit cannot be raised above the
// operator's.
func TestAccSpireFederationOperator_moreThan50Peers(t *testing.T) {
	t.Run("51 peers", func(t *testing.T) {
		refusedWithoutCluster(t, "", peersHCL(51),
			`Too Many Federated Trust Domains.*federates_with: 51 entries, more than the limit of 50.*validateFederationConfig: "federatesWith array cannot exceed 50 entries"`)
	})
	t.Run("provider limit above 50", func(t *testing.T) {
		refusedWithoutCluster(t, "  max_federated_trust_domains = 51\n", peersHCL(1),
			`max_federated_trust_domains.*between 1 and 50`)
	})
}

// "https:// is case-sensitive": the CRD's ^https:// and the operator's prefix
// checks are case-sensitive: HTTPS:// is refused at plan, with the spelling
// shown.
func TestAccSpireFederationOperator_upperCaseHTTPS(t *testing.T) {
	t.Run("peer bundle_endpoint_url", func(t *testing.T) {
		refusedWithoutCluster(t, "", `  federates_with = {
    "west.test" = { bundle_endpoint_url = "HTTPS://spire.west.test", bundle_endpoint_profile = "https_web" }
  }
`, `Invalid HTTPS URL.*federates_with\["west.test"\].bundle_endpoint_url.*the scheme is spelled "HTTPS", it must be lower-case "https://"`)
	})
	t.Run("acme directory_url", func(t *testing.T) {
		refusedWithoutCluster(t, "", acmeHCL("Https://acme.example.test/dir", "federation.east.test", "tos_accepted = true"),
			`Invalid HTTPS URL.*directory_url.*spelled "Https"`)
	})
}

// operatorCluster readies c for a test with the operator: no leftovers,
// the stand-in running, the ZeroTrustWorkloadIdentityManager and a
// SpireServer as the operator's administrator writes them (plus spec).
func operatorCluster(t *testing.T, c *harness.Cluster, prefix string, spec map[string]any) string {
	t.Helper()
	acctest.ResetSpireSingletons(t, c)
	acctest.ZTWIMStandIn(t, c)
	td := acctest.UniqueName(prefix) + ".test"
	acctest.ApplyAs(t, c, kube.ZeroTrustWorkloadIdentityManager, acctest.OperatorManager, acctest.ZTWIMObject(td, c.Name))
	acctest.ApplyAs(t, c, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(spec))
	acctest.WaitZTWIMReconciled(t, c)
	return td
}

// checkCondition checks one condition of the SpireServer's status.
func checkCondition(t *testing.T, c *harness.Cluster, conditionType, status, reason, message string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		obj := acctest.GetSingleton(t, c, kube.SpireServer)
		if obj == nil {
			return fmt.Errorf("%s: SpireServer cluster does not exist", c.Name)
		}
		items, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, item := range items {
			m, _ := item.(map[string]any)
			if m["type"] != conditionType {
				continue
			}
			if m["status"] != status || m["reason"] != reason || !strings.Contains(fmt.Sprint(m["message"]), message) {
				return fmt.Errorf("%s: condition %s = %v, want %s/%s %q", c.Name, conditionType, m, status, reason, message)
			}
			return nil
		}
		return fmt.Errorf("%s: no condition %s in %v", c.Name, conditionType, items)
	}
}

// checkRoute checks the operator's federation Route: absent when host is
// "", else with that host and TLS termination.
func checkRoute(t *testing.T, c *harness.Cluster, host, termination, externalCert string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		route := acctest.ZTWIMRoute(t, c)
		if host == "" {
			if route != nil {
				return fmt.Errorf("%s: Route %s/%s exists, want it gone: %v", c.Name, route.GetNamespace(), route.GetName(), route.Object["spec"])
			}
			return nil
		}
		if route == nil {
			return fmt.Errorf("%s: no Route %s/%s", c.Name, acctest.ZTWIMRouteNamespace, acctest.ZTWIMRouteName)
		}
		gotHost, _, _ := unstructured.NestedString(route.Object, "spec", "host")
		gotTermination, _, _ := unstructured.NestedString(route.Object, "spec", "tls", "termination")
		gotCert, _, _ := unstructured.NestedString(route.Object, "spec", "tls", "externalCertificate", "name")
		if gotHost != host || gotTermination != termination || gotCert != externalCert {
			return fmt.Errorf("%s: Route host %q tls %q externalCertificate %q, want %q %q %q", c.Name, gotHost, gotTermination, gotCert,
				host, termination, externalCert)
		}
		return nil
	}
}

// "An unmanaged Route leaves the SpireServer unready": managed_route = false
// is accepted; the plan warns (TestFederationChoiceWarnings), the apply ends
// on the operator's Ready=False/Failed "RouteAvailable: Federation managed
// route disabled" (a warning, not an error), and the next plan is empty.
func TestAccSpireFederationOperator_managedRouteFalse(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		operatorCluster(t, c, "noroute", nil)
		config := federationConfig(t, c, "  managed_route = false\n"+twoPeersHCL)
		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					Config: config,
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					ConfigStateChecks: []statecheck.StateCheck{
						statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("managed_route"), knownvalue.Bool(false)),
						statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("bundle_endpoint_url"), knownvalue.Null()),
					},
					Check: resource.ComposeAggregateTestCheckFunc(
						checkCondition(t, c, "RouteAvailable", "False", "FederationRouteDisabled", "Federation managed route disabled"),
						checkCondition(t, c, "Ready", "False", "Failed", "RouteAvailable: Federation managed route disabled"),
						checkRoute(t, c, "", "", ""),
					),
				},
				{
					// A change that leaves the verdict where it was (Ready stays
					// False, no lastTransitionTime moves) still ends the wait.
					Config: federationConfig(t, c, "  managed_route = false\n  bundle_endpoint = { refresh_hint = 900 }\n"+twoPeersHCL),
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					Check: checkFederation(t, c, map[string]any{"bundleEndpoint.refreshHint": int64(900), "managedRoute": "false"}),
				},
			},
		}
	})
}

// "The operator never deletes its Route": the operator never deletes its
// Route when managedRoute goes true -> false; the provider deletes it (only
// when it carries the operator's label) and bundle_endpoint_url becomes null.
// A Route of the user's own under that name is left alone and read.
func TestAccSpireFederationOperator_routeDeletedWhenUnmanaged(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		td := operatorCluster(t, c, "unmanaged", nil)
		host := "federation." + td
		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					Config: federationConfig(t, c, "  managed_route = true\n"),
					ConfigStateChecks: []statecheck.StateCheck{
						statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("bundle_endpoint_url"), knownvalue.StringExact("https://"+host)),
					},
					Check: checkRoute(t, c, host, "passthrough", ""),
				},
				{
					Config: federationConfig(t, c, "  managed_route = false\n"),
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply:             []plancheck.PlanCheck{plancheck.ExpectUnknownValue(federationAddr, tfjsonpath.New("bundle_endpoint_url"))},
						PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					ConfigStateChecks: []statecheck.StateCheck{
						statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("bundle_endpoint_url"), knownvalue.Null()),
					},
					Check: checkRoute(t, c, "", "", ""),
				},
				{
					// The user exposes the endpoint with a Route of their own under
					// the operator's name (no managed-by label): never deleted, and
					// it is where peers reach the endpoint.
					PreConfig: func() {
						own := &unstructured.Unstructured{Object: map[string]any{
							"apiVersion": "route.openshift.io/v1", "kind": "Route",
							"metadata": map[string]any{"name": acctest.ZTWIMRouteName, "namespace": acctest.ZTWIMRouteNamespace},
							"spec":     map[string]any{"host": "bundles." + td, "to": map[string]any{"kind": "Service", "name": "spire-server"}},
						}}
						if _, err := dynamicClient(t, c).Resource(kube.Route.GVR()).Namespace(acctest.ZTWIMRouteNamespace).Create(
							context.Background(), own, metav1.CreateOptions{}); err != nil {
							t.Fatalf("%s: create the user's Route: %v", c.Name, err)
						}
					},
					Config: federationConfig(t, c, "  managed_route = false\n  bundle_endpoint = { refresh_hint = 600 }\n"),
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					ConfigStateChecks: []statecheck.StateCheck{
						statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("bundle_endpoint_url"), knownvalue.StringExact("https://bundles."+td)),
					},
					Check: checkRoute(t, c, "bundles."+td, "", ""),
				},
			},
		}
	})
}

// "The Route's host is federation.<trust domain>": an ACME domain_name other
// than federation.<trust domain> is accepted with a warning
// (TestFederationChoiceWarnings); the operator's Route is passthrough for
// federation.<trust domain> whatever domain_name says.
func TestAccSpireFederationOperator_acmeDomainName(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		td := operatorCluster(t, c, "acme", nil)
		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{{
				Config: federationConfig(t, c, acmeHCL("https://acme.example.test/dir", "bundles."+td, "tos_accepted = true")),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("bundle_endpoint_url"), knownvalue.StringExact("https://federation."+td)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkRoute(t, c, "federation."+td, "passthrough", ""),
					checkCondition(t, c, "Ready", "True", "Ready", "All components are ready"),
				),
			}},
		}
	})
}

// "A serving certificate reaches the Route only through externalSecretRef":
// serving_cert without external_secret_ref is accepted with a warning
// (TestFederationChoiceWarnings): the operator's Route re-encrypts with no
// certificate of the user's; external_secret_ref reaches the Route only.
func TestAccSpireFederationOperator_servingCertWithoutSecret(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		td := operatorCluster(t, c, "cert", nil)
		web := func(inner string) string {
			return fmt.Sprintf("  bundle_endpoint = {\n    profile = \"https_web\"\n    https_web = { serving_cert = { %s } }\n  }\n", inner)
		}
		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					Config: federationConfig(t, c, web("")),
					Check:  checkRoute(t, c, "federation."+td, "reencrypt", ""),
				},
				{
					Config: federationConfig(t, c, web(`external_secret_ref = "federation-tls"`)),
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					Check: checkRoute(t, c, "federation."+td, "reencrypt", "federation-tls"),
				},
			},
		}
	})
}

// "The Route lives in a constant namespace": the Route is read in the
// operator's constant namespace, whatever the provider's spire.namespace
// says, by the resource and the data source.
func TestAccSpireFederationOperator_routeNamespaceConstant(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		td := operatorCluster(t, c, "constns", nil)
		provider := strings.Replace(acctest.ProviderConfigFor(t, c), "provider \"zerotrust\" {\n",
			"provider \"zerotrust\" {\n  spire = { namespace = \"spire-elsewhere\" }\n", 1)
		config := provider + fmt.Sprintf(`
resource "zerotrust_spire_federation" "this" {
  cluster = %q
}

data "zerotrust_spire_server" "this" {
  cluster    = %q
  depends_on = [zerotrust_spire_federation.this]
}
`, c.Name, c.Name)
		url := "https://federation." + td
		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("bundle_endpoint_url"), knownvalue.StringExact(url)),
					statecheck.ExpectKnownValue("data.zerotrust_spire_server.this", tfjsonpath.New("bundle_endpoint_url"), knownvalue.StringExact(url)),
					statecheck.ExpectKnownValue("data.zerotrust_spire_server.this", tfjsonpath.New("namespace"), knownvalue.StringExact("spire-elsewhere")),
				},
				Check: checkRoute(t, c, "federation."+td, "passthrough", ""),
			}},
		}
	})
}

// "The Route appears after the reconcile": the Route appears only after the
// operator's reconcile (the stand-in takes acctest.ZTWIMStandInRouteDelay
// after the apply), and create waits for it: bundle_endpoint_url is known
// when create returns, so a peer wired to it in the same apply gets the URL,
// not null.
func TestAccSpireFederationOperator_bundleEndpointURLAtCreate(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		td := operatorCluster(t, c, "atcreate", nil)
		url := "https://federation." + td
		config := federationConfig(t, c, "") + `
resource "terraform_data" "peer" {
  input = zerotrust_spire_federation.this.bundle_endpoint_url
}
`
		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectUnknownValue(federationAddr, tfjsonpath.New("bundle_endpoint_url"))},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("bundle_endpoint_url"), knownvalue.StringExact(url)),
					statecheck.ExpectKnownValue("terraform_data.peer", tfjsonpath.New("output"), knownvalue.StringExact(url)),
				},
			}},
		}
	})
}

// TestAccSpireFederationOperator_refusalIsApplyError: a refusal only the
// operator can see (the ZeroTrustWorkloadIdentityManager, and with it the
// trust domain, appears while the apply waits, so neither the plan nor the
// apply's own check knows it) ends the apply with the operator's message;
// Terraform records nothing (a failed create would be tainted and
// replaced), and the corrected configuration is a create again.
func TestAccSpireFederationOperator_refusalIsApplyError(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		acctest.ResetSpireSingletons(t, c)
		acctest.ZTWIMStandIn(t, c)
		td := acctest.UniqueName("refused") + ".test"
		acctest.ApplyAs(t, c, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(nil))
		// The operator's installer creates the ZeroTrustWorkloadIdentityManager
		// once the federation is written.
		installLate := func() {
			go func() {
				deadline := time.Now().Add(time.Minute)
				for time.Now().Before(deadline) {
					if fed, err := federationOf(t, c); err == nil && fed != nil {
						if _, found, _ := unstructured.NestedSlice(fed, "federatesWith"); found {
							acctest.ApplyAs(t, c, kube.ZeroTrustWorkloadIdentityManager, acctest.OperatorManager, acctest.ZTWIMObject(td, c.Name))
							return
						}
					}
					time.Sleep(100 * time.Millisecond)
				}
			}()
		}
		peers := func(extra string) string {
			return fmt.Sprintf(`
  managed_route = true
  federates_with = {
    "west.test" = { bundle_endpoint_url = "https://spire.west.test", bundle_endpoint_profile = "https_web" }
%s  }`, extra)
		}
		self := peers(fmt.Sprintf("    %q = { bundle_endpoint_url = \"https://spire.%s\", bundle_endpoint_profile = \"https_web\" }\n", td, td))
		config := func(body string) string {
			return acctest.LateProviderConfig(c) + "\nresource \"zerotrust_spire_federation\" \"this\" {\n  cluster = \"late\"\n" + body + "\n}\n"
		}
		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					PreConfig: installLate,
					Config:    config(self),
					ExpectError: regexp.MustCompile(`(?s)SpireServer Configuration Refused.*ConfigurationValid=False.*InvalidFederationConfiguration.*` +
						`Federation\s+configuration\s+validation\s+failed:\s+federatesWith\[\d\]:\s+cannot\s+federate\s+with\s+own\s+trust\s+domain\s+` +
						regexp.QuoteMeta(td)),
				},
				{
					// The refused federation was written, but the failed create
					// left no state (so nothing tainted to replace): the
					// corrected configuration is a create, which writes it over.
					Config: config(peers("")),
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(federationAddr, plancheck.ResourceActionCreate)},
					},
					ConfigStateChecks: []statecheck.StateCheck{
						statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("trust_domain"), knownvalue.StringExact(td)),
						statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("bundle_endpoint_url"), knownvalue.StringExact("https://federation."+td)),
					},
					Check: resource.ComposeAggregateTestCheckFunc(
						checkCondition(t, c, "ConfigurationValid", "True", "Ready", "Configuration validation passed"),
						checkCondition(t, c, "Ready", "True", "Ready", "All components are ready"),
					),
				},
			},
		}
	})
}

// TestAccSpireFederationOperator_noDriftAfterOwnerUpdate: the operator's
// owner-reference Update re-serialises the whole spec (caValidity 24h ->
// 24h0m0s, connMaxLifetime 0); the provider owns only spec.federation, so
// it sees no drift and its later applies conflict with nothing.
func TestAccSpireFederationOperator_noDriftAfterOwnerUpdate(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		operatorCluster(t, c, "owner", map[string]any{"caValidity": "24h", "defaultX509Validity": "90m"})
		rewritten := func(*terraform.State) error {
			obj := acctest.GetSingleton(t, c, kube.SpireServer)
			if obj == nil {
				return fmt.Errorf("%s: no SpireServer", c.Name)
			}
			if refs := obj.GetOwnerReferences(); len(refs) != 1 || refs[0].Kind != "ZeroTrustWorkloadIdentityManager" {
				return fmt.Errorf("%s: owner references %v, want the ZeroTrustWorkloadIdentityManager", c.Name, refs)
			}
			ca, _, _ := unstructured.NestedString(obj.Object, "spec", "caValidity")
			x509, _, _ := unstructured.NestedString(obj.Object, "spec", "defaultX509Validity")
			if ca != "24h0m0s" || x509 != "1h30m0s" {
				return fmt.Errorf("%s: caValidity %q defaultX509Validity %q, want the operator's re-serialised 24h0m0s and 1h30m0s", c.Name, ca, x509)
			}
			return nil
		}
		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					Config: federationConfig(t, c, twoPeersHCL),
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					Check: rewritten,
				},
				{
					Config: federationConfig(t, c, twoPeersHCL),
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
				},
				{
					// A later change applies without force_conflicts.
					Config: federationConfig(t, c, "  bundle_endpoint = { refresh_hint = 1200 }\n"+twoPeersHCL),
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					Check: resource.ComposeAggregateTestCheckFunc(rewritten,
						checkFederation(t, c, map[string]any{"bundleEndpoint.refreshHint": int64(1200)})),
				},
			},
		}
	})
}

// TestAccSpireFederationOperator_refusedCreateKeepsPeers: the operator
// refuses the SpireServer for a field this resource does not manage
// (jwtIssuer, controller.go validateConfiguration: InvalidJWTIssuerURL), so
// the create fails after writing the federation. Once jwtIssuer is fixed
// where it is managed, the operator renders server.conf with the peers; the
// next apply is a create again (nothing tainted, no replacement), writes the
// same fields (the SpireServer's generation does not move) and leaves the
// plan empty, and every server.conf the operator rendered, from the refusal
// to the end, holds both peers.
func TestAccSpireFederationOperator_refusedCreateKeepsPeers(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		operatorCluster(t, c, "keep", nil)
		// The CRD's pattern admits the bad one; the operator cannot parse its port.
		const goodIssuer, badIssuer = "https://oidc-discovery.apps.example.test", "https://oidc-discovery.apps.example.test:oidc"
		setIssuer := func(issuer string) {
			acctest.ApplyAs(t, c, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(map[string]any{"jwtIssuer": issuer}))
			acctest.WaitZTWIMReconciled(t, c)
		}
		wantPeers := []string{"north.test", "west.test"}
		var start time.Time
		var generation int64
		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					PreConfig: func() {
						setIssuer(badIssuer)
						start = time.Now()
					},
					Config: federationConfig(t, c, twoPeersHCL),
					ExpectError: regexp.MustCompile(`(?s)SpireServer Configuration Refused.*ConfigurationValid=False\s+\(InvalidJWTIssuerURL\):\s+JWT\s+issuer\s+URL\s+validation\s+failed.*` +
						`Terraform\s+does\s+not\s+record\s+the\s+resource.*does\s+not\s+manage:\s+fix\s+it\s+where\s+it\s+is\s+managed`),
				},
				{
					PreConfig: func() {
						setIssuer(goodIssuer)
						generation = acctest.GetSingleton(t, c, kube.SpireServer).GetGeneration()
					},
					Config: federationConfig(t, c, twoPeersHCL),
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(federationAddr, plancheck.ResourceActionCreate)},
						PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					Check: resource.ComposeAggregateTestCheckFunc(
						checkCondition(t, c, "Ready", "True", "Ready", "All components are ready"),
						func(*terraform.State) error {
							if got := acctest.GetSingleton(t, c, kube.SpireServer).GetGeneration(); got != generation {
								return fmt.Errorf("%s: the apply after the fix moved the SpireServer from generation %d to %d: it must write only what is already there", c.Name, generation, got)
							}
							acctest.WaitZTWIMReconciled(t, c)
							renders := acctest.ZTWIMRenders(t, c, start)
							if len(renders) == 0 {
								return fmt.Errorf("%s: the operator rendered no server.conf after jwtIssuer was fixed", c.Name)
							}
							for i, r := range renders {
								t.Logf("server.conf render %d at +%s: federates_with %v", i+1, r.At.Sub(start).Round(time.Millisecond), r.Peers)
								if strings.Join(r.Peers, ",") != strings.Join(wantPeers, ",") {
									return fmt.Errorf("%s: render %d at +%s has federates_with %v, want %v throughout", c.Name, i+1, r.At.Sub(start), r.Peers, wantPeers)
								}
							}
							return nil
						},
					),
				},
				{
					Config: federationConfig(t, c, twoPeersHCL),
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
				},
			},
		}
	})
}
