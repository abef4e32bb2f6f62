package resources_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// TestAccFederatedTrustDomain_classNotServed: a ClusterFederatedTrustDomain
// whose class_name is not the cluster's and that no controller is known to
// serve warns at plan, as a ClusterSPIFFEID does, naming the class, the
// cluster's class and what is lost (no federation relationship); the
// cluster's class plans without it.
func TestAccFederatedTrustDomain_classNotServed(t *testing.T) {
	acctest.Spire(t, acctest.East)
	td := acctest.UniqueName("cls") + ".test"
	config := func(class string) string {
		attr := ""
		if class != "" {
			attr = fmt.Sprintf("class_name = %q", class)
		}
		return acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "cls" {
  cluster             = "east"
  trust_domain        = %q
  bundle_endpoint_url = "https://bundle.%s"
  bundle_endpoint_profile = {
    type = "https_web"
  }
  %s
}
`, td, td, attr)
	}
	const warning = "Warning: No Controller Known to Serve This Class"
	w := newCLIWorkspace(t)
	w.write(config("nobody-serves-this"))
	out := w.run("plan")
	for _, want := range []string{warning, `The class of this ClusterFederatedTrustDomain is "nobody-serves-this"`,
		`spire.class_name is "` + harness.DefaultSpireClassName + `"`, `on cluster "east"`, `no federation relationship`} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan with an unserved class does not say %q: %s", want, out)
		}
	}
	w.write(config(""))
	if out := w.run("plan"); strings.Contains(out, warning) {
		t.Errorf("the plan with the cluster's class warns: %s", out)
	}
}
