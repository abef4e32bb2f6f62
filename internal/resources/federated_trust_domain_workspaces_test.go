package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// TestAccFederatedTrustDomain_twoWorkspacesSamePeer: with one provider
// field_manager per Terraform workspace, a workspace declaring a peer that
// another workspace already federates on the same cluster fails at plan,
// naming the other workspace's field manager, whether it derives the same
// object name or chooses another one. Workspace a's object is applied here
// server-side as its field manager "zerotrust-ws-a" would (in one test case
// every provider alias shares one in-process provider, so two workspaces are
// two states: internal/examplestest runs them with the terraform CLI).
func TestAccFederatedTrustDomain_twoWorkspacesSamePeer(t *testing.T) {
	const cluster = acctest.West
	td := acctest.UniqueName("twows") + ".test"
	gvr := kube.ClusterFederatedTrustDomain.GVR()
	obj := &unstructured.Unstructured{Object: cftdObject(td, map[string]any{
		"trustDomain": td, "bundleEndpointURL": "https://spire." + td,
		"bundleEndpointProfile": map[string]any{"type": "https_web"},
	})}
	if _, err := acctest.Dynamic(t, cluster).Resource(gvr).Apply(context.Background(), td, obj,
		metav1.ApplyOptions{FieldManager: "zerotrust-ws-a"}); err != nil {
		t.Fatalf("%s: apply as workspace a: %v", cluster, err)
	}
	t.Cleanup(func() {
		_ = acctest.Dynamic(t, cluster).Resource(gvr).Delete(context.Background(), td, metav1.DeleteOptions{})
	})

	c := acctest.Cluster(t, cluster)
	workspaceB := fmt.Sprintf(`
provider "zerotrust" {
  field_manager = "zerotrust-ws-b"
  kubernetes = {
    host                   = %q
    token                  = %q
    cluster_ca_certificate = <<-EOT
%s
EOT
  }
}
`, c.Host, c.Token, strings.TrimSpace(string(c.CACertPEM)))
	federation := func(name string) string {
		return fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "peer" {
  name                    = %s
  trust_domain            = %q
  bundle_endpoint_url     = "https://spire.%s"
  bundle_endpoint_profile = { type = "https_web" }
}
`, name, td, td)
	}
	owner := `.*field\s+manager\s+` + regexp.QuoteMeta(`"zerotrust-ws-a"`)

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// The name derived from the trust domain: the object is a's.
				Config:      workspaceB + federation("null"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Object Already Exists.*` + regexp.QuoteMeta(td) + owner),
			},
			{
				// Another name, the same trust domain: spire-controller-manager
				// would ignore one of the two.
				Config:      workspaceB + federation(fmt.Sprintf("%q", "b-"+td)),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Duplicate Trust Domain.*` + regexp.QuoteMeta(td) + owner),
			},
		},
	})
}
