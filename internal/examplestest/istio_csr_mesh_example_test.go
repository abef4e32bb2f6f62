package examplestest

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// exampleConfig is an example configuration with its terraform and provider
// blocks (registry source, the user's kubeconfig) swapped for the test's
// provider block; everything else is applied as written.
func exampleConfig(t *testing.T, dir string) string {
	t.Helper()
	return acctest.ProviderConfig(t) + exampleWithout(t, dir, "provider")
}

// TestAccExampleIstioCSRMesh applies examples/istio-csr-mesh on the default
// connection: the IstioCSR becomes Ready (the stand-in cert-manager
// Operator answers; see acctest.IstioCSRStandIn), and its gRPC endpoint and
// trust domain end up in a Sail Istio that existed before, whose former
// trust domain (Istio's default) stays an alias.
func TestAccExampleIstioCSRMesh(t *testing.T) {
	// The operator serves one IstioCSR per cluster; this is the package's
	// only IstioCSR test, so unlike the resources package's it need not run
	// alone. It pauses first, so the lab and the stand-in start without
	// holding up the package's serial tests (hence resource.Test rather than
	// resource.ParallelTest).
	t.Parallel()
	acctest.IstioCSRStandIn(t, acctest.East)
	// The Issuer lives with the Istio control plane, where the operator
	// looks for it, not with the IstioCSR.
	ns, istioNS := acctest.UniqueNamespace(t, acctest.East, "example"), acctest.UniqueNamespace(t, acctest.East, "exampleistio")
	acctest.CertManagerIssuer(t, acctest.East, istioNS, "mesh-ca", true)
	sail := acctest.UniqueName("example-sail")
	acctest.ApplyAsOperator(t, acctest.East, kube.SailIstio.GVR(), map[string]any{
		"apiVersion": "sailoperator.io/v1", "kind": "Istio", "metadata": map[string]any{"name": sail},
		"spec": map[string]any{"namespace": istioNS, "values": map[string]any{"pilot": map[string]any{"env": map[string]any{"ENABLE_CA_SERVER": "false"}}}},
	})
	td := "apps." + ns + ".test"
	endpoint := "cert-manager-istio-csr." + ns + ".svc:443"
	vars := config.Variables{
		"trust_domain":        config.StringVariable(td),
		"istio_csr_namespace": config.StringVariable(ns),
		"istio_namespace":     config.StringVariable(istioNS),
		"issuer_name":         config.StringVariable("mesh-ca"),
		"sail_istio_name":     config.StringVariable(sail),
	}
	get := acctest.ObjectGetter(t, acctest.East, kube.SailIstio.GVR(), "", sail)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			acctest.CheckIstioCSRGone(t, acctest.East, ns),
			acctest.CheckObjectFields(t, get, map[string]any{
				"spec.values.global.caAddress":       nil,
				"spec.values.meshConfig.trustDomain": nil,
				"spec.values.pilot.env":              map[string]any{"ENABLE_CA_SERVER": "false"},
			}),
		),
		Steps: []resource.TestStep{{
			Config:          exampleConfig(t, "istio-csr-mesh"),
			ConfigVariables: vars,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					// The endpoint is known only once the operator has run.
					plancheck.ExpectUnknownValue("zerotrust_mesh_trust_domain.this", tfjsonpath.New("ca_address")),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("ca_address", knownvalue.StringExact(endpoint)),
				statecheck.ExpectKnownOutputValue("spiffe_id_prefix", knownvalue.StringExact("spiffe://"+td+"/")),
				statecheck.ExpectKnownOutputValue("previous_trust_domains", knownvalue.ListExact(acctest.StringChecks("cluster.local"))),
			},
			Check: acctest.CheckObjectFields(t, get, map[string]any{
				"spec.values.global.caAddress":              endpoint,
				"spec.values.meshConfig.trustDomain":        td,
				"spec.values.meshConfig.trustDomainAliases": []any{"cluster.local"},
				"spec.values.pilot.env":                     map[string]any{"ENABLE_CA_SERVER": "false"},
			}),
		}},
	})
}
