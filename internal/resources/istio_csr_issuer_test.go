package resources_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

// cliWorkspace is a directory where the terraform CLI runs against the
// provider served from the test process: for what terraform-plugin-testing
// cannot assert, the warnings of a plan.
type cliWorkspace struct {
	t        *testing.T
	dir      string
	reattach string
}

func newCLIWorkspace(t *testing.T) *cliWorkspace {
	t.Helper()
	return &cliWorkspace{t: t, dir: t.TempDir(), reattach: acctest.ServeProvider(t)}
}

// write replaces the configuration (RequiredProviders is added).
func (w *cliWorkspace) write(config string) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.dir, "main.tf"), []byte(acctest.RequiredProviders+config), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// run runs a terraform command that must succeed and returns its output
// with every run of white space made one space (Terraform wraps diagnostics).
func (w *cliWorkspace) run(args ...string) string {
	w.t.Helper()
	return strings.Join(strings.Fields(acctest.MustTerraform(w.t, "terraform", w.dir, w.reattach, args...)), " ")
}

// TestAccIstioCSR_issuerInIstioNamespace: an issuer_ref of kind Issuer is
// looked up in istio.namespace, as the IstioCSR API says, not in the
// IstioCSR's namespace. With the Issuer only in the IstioCSR's namespace the
// plan warns, naming both namespaces; with the Issuer in istio.namespace the
// plan is silent and the operator reports Ready.
func TestAccIstioCSR_issuerInIstioNamespace(t *testing.T) {
	istioCSRAlone(t)
	ns := acctest.UniqueNamespace(t, acctest.East, "csriss")
	istioNS := acctest.UniqueNamespace(t, acctest.East, "csristio")
	issuer := "ca-" + ns
	acctest.CertManagerIssuer(t, acctest.East, ns, issuer, true)
	config := istioCSRConfig(t, acctest.East, ns, fmt.Sprintf(`
  cert_manager = { issuer_ref = { name = %q, kind = "Issuer" } }
  istiod_tls   = { trust_domain = "cluster.local" }
  istio        = { namespace = %q }`, issuer, istioNS))

	w := newCLIWorkspace(t)
	w.write(config)
	w.run("init")
	out := w.run("plan")
	for _, want := range []string{
		"Warning: Issuer Not Found",
		fmt.Sprintf("The cert-manager Issuer %q does not exist in the namespace %q (istio.namespace)", issuer, istioNS),
		fmt.Sprintf("An Issuer %q exists in the IstioCSR's namespace %q: the operator does not use it.", issuer, ns),
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("plan with the Issuer only in the IstioCSR's namespace: want %q in the output:\n%s", want, out)
		}
	}

	acctest.CertManagerIssuer(t, acctest.East, istioNS, issuer, true)
	if out := w.run("plan"); strings.Contains(out, "Issuer Not Found") {
		t.Fatalf("plan with the Issuer in istio.namespace warns:\n%s", out)
	}

	const addr = "zerotrust_istio_csr.this"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckIstioCSRGone(t, acctest.East, ns),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("conditions").AtMapKey("Ready").AtMapKey("status"), knownvalue.StringExact("True")),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("conditions").AtMapKey("Degraded").AtMapKey("status"), knownvalue.StringExact("False")),
			},
			Check: acctest.CheckObjectFields(t, func() (*unstructured.Unstructured, error) { return getIstioCSR(t, acctest.East, ns) }, map[string]any{
				"spec.istioCSRConfig.certManager.issuerRef": map[string]any{"name": issuer, "kind": "Issuer", "group": "cert-manager.io"},
				"spec.istioCSRConfig.istio.namespace":       istioNS,
			}),
		}},
	})
}
