package resources_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

// TestAccFederatedTrustDomain_publishedBundle federates east with a peer
// through its published bundle: the object is the peer's real SPIRE bundle
// (`bundle show -format spiffe`) served over HTTPS at a path-style URL, read
// with zerotrust_trust_bundle's published source and given to an https_web
// ClusterFederatedTrustDomain as its bootstrap bundle. The apply ends when
// east's real SPIRE server holds the peer's bundle (wait_for_bundle), and
// destroy removes it again. SPIRE fetching from a store a real publisher
// writes is the object-storage lab's end-to-end test; this one proves the
// provider's side of the bootstrap.
func TestAccFederatedTrustDomain_publishedBundle(t *testing.T) {
	east := acctest.Spire(t, acctest.East)
	peer := spireTrustPeer(t, "published")
	bundle, err := peer.BundleShow(context.Background(), "spiffe")
	if err != nil {
		t.Fatal(err)
	}
	objectPath := "/bundles/" + peer.TrustDomain + "/bundle.json"
	storeURL, ca := acctest.ObjectStore(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != objectPath {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(bundle)
	})
	config := acctest.ProviderConfig(t) + fmt.Sprintf(`
data "zerotrust_trust_bundle" "peer" {
  trust_domain = %[1]q
  published = {
    url             = %[2]q
    ca_certificates = <<-EOT
%[3]s
EOT
  }
}

resource "zerotrust_federated_trust_domain" "peer" {
  cluster                  = "east"
  trust_domain             = %[1]q
  bundle_endpoint_url      = %[2]q
  bundle_endpoint_profile  = { type = "https_web" }
  trust_domain_bundle      = data.zerotrust_trust_bundle.peer.spiffe_bundle
  wait_for_bundle          = true
  delete_bundle_on_destroy = true

  timeouts {
    create = "2m"
    delete = "2m"
  }
}
`, peer.TrustDomain, storeURL+objectPath, ca)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             spireReleasedOnDestroy(t, east, peer.TrustDomain),
		Steps:                    []resource.TestStep{spireHoldsStep(t, east, peer.TrustDomain, config)},
	})
}
