package resources_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

// exampleConfig reads an example configuration and swaps its terraform and
// provider blocks (registry source, the user's kubeconfig) for the test's
// provider block; everything else is applied as written.
func exampleConfig(t *testing.T, dir string) string {
	t.Helper()
	file := filepath.Join("..", "..", "examples", dir, "main.tf")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f, diags := hclwrite.ParseConfig(src, file, hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("%s: %s", file, diags)
	}
	for _, block := range f.Body().Blocks() {
		if block.Type() == "terraform" || block.Type() == "provider" {
			f.Body().RemoveBlock(block)
		}
	}
	return acctest.ProviderConfig(t) + string(f.Bytes())
}

// TestAccExampleIstioCSRMesh applies examples/istio-csr-mesh on the default
// connection: the IstioCSR becomes Ready (the stand-in cert-manager
// Operator answers; see acctest.IstioCSRStandIn), and its gRPC endpoint and
// trust domain end up in a Sail Istio that existed before, whose former
// trust domain (Istio's default) stays an alias.
func TestAccExampleIstioCSRMesh(t *testing.T) {
	istioCSRAlone(t)
	// The Issuer lives with the Istio control plane, where the operator
	// looks for it, not with the IstioCSR.
	ns, istioNS := meshTestNamespace(t, acctest.East, "example"), meshTestNamespace(t, acctest.East, "exampleistio")
	acctest.CertManagerIssuer(t, acctest.East, istioNS, "mesh-ca", true)
	sail := acctest.UniqueName("example-sail")
	applyAsOperator(t, acctest.East, sailIstioGVR, map[string]any{
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
	get := meshGetter(t, acctest.East, sailIstioGVR, "", sail)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkIstioCSRGone(t, acctest.East, ns),
			checkObjectFields(t, get, map[string]any{
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
				statecheck.ExpectKnownOutputValue("previous_trust_domains", knownvalue.ListExact(strs("cluster.local"))),
			},
			Check: checkObjectFields(t, get, map[string]any{
				"spec.values.global.caAddress":              endpoint,
				"spec.values.meshConfig.trustDomain":        td,
				"spec.values.meshConfig.trustDomainAliases": []any{"cluster.local"},
				"spec.values.pilot.env":                     map[string]any{"ENABLE_CA_SERVER": "false"},
			}),
		}},
	})
}
