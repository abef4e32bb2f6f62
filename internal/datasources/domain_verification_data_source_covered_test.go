package datasources_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/domainverification"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// createAsWebhook creates a v1 DomainVerification the way Kuadrant's ingress
// webhook does (its own field manager, only spec.domain) and deletes it when
// the test ends.
func createAsWebhook(t *testing.T, cluster, name, domain string) {
	t.Helper()
	ri := acctest.Dynamic(t, cluster).Resource(kube.DomainVerificationV1.GVR())
	_, err := ri.Create(context.Background(), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kube.DomainVerificationV1.APIVersion(), "kind": "DomainVerification",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"domain": domain},
	}}, metav1.CreateOptions{FieldManager: "ingress-webhook"})
	if err != nil {
		t.Fatalf("%s: create DomainVerification %s: %v", cluster, name, err)
	}
	t.Cleanup(func() { _ = ri.Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// TestAccDomainVerificationDataSource_coveredSubdomain: a verified domain
// covers its subdomains (Kuadrant's custom-domain design: they need no
// verification of their own).
// A subdomain without an object of its own reads as verified and covered,
// with no token and no DNS server asked, and `wait` ends at once; one with an
// unverified object of its own is covered too; a domain beside the verified
// one is not covered, and without an object it is an error.
func TestAccDomainVerificationDataSource_coveredSubdomain(t *testing.T) {
	const cluster = acctest.East
	acctest.DomainVerificationController(t, cluster)
	id := acctest.UniqueName("cover")
	parent := id + "." + acctest.DNSZone
	sub, own, beside := "api."+parent, "own."+parent, "beside-"+parent
	createAsWebhook(t, cluster, "webhook-"+id, parent)
	createAsWebhook(t, cluster, "webhook-own-"+id, own)
	if err := acctest.DNS(t).AddTXT(acctest.DNSZone, parent, dvToken(t, cluster, domainverification.V1, "webhook-"+id)); err != nil {
		t.Fatal(err)
	}
	waitVerified(t, cluster, "webhook-"+id)
	dvToken(t, cluster, domainverification.V1, "webhook-own-"+id)

	data := func(label, domain, extra string) string {
		return fmt.Sprintf(`
data "zerotrust_domain_verification" %q {
  domain        = %q
  nameservers   = %s
  poll_interval = "250ms"
%s
}
`, label, domain, acctest.NameserversHCL(t), extra)
	}
	const subAddr, ownAddr = "data.zerotrust_domain_verification.sub", "data.zerotrust_domain_verification.own"
	config := acctest.ProviderConfig(t) + data("sub", sub, "  wait    = true\n  timeout = \"20s\"") +
		data("own", own, `  name = "webhook-own-`+id+`"`)

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(subAddr, tfjsonpath.New("covered_by"), knownvalue.StringExact(parent)),
					statecheck.ExpectKnownValue(subAddr, tfjsonpath.New("verified"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(subAddr, tfjsonpath.New("token"), knownvalue.Null()),
					statecheck.ExpectKnownValue(subAddr, tfjsonpath.New("present"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(subAddr, tfjsonpath.New("servers"), knownvalue.ListExact([]knownvalue.Check{})),
					statecheck.ExpectKnownValue(ownAddr, tfjsonpath.New("covered_by"), knownvalue.StringExact(parent)),
					statecheck.ExpectKnownValue(ownAddr, tfjsonpath.New("verified"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(ownAddr, tfjsonpath.New("token"), knownvalue.NotNull()),
					statecheck.ExpectKnownValue(ownAddr, tfjsonpath.New("present"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(ownAddr, tfjsonpath.New("next_verification"), knownvalue.NotNull()),
				},
			},
			{
				Config:      acctest.ProviderConfig(t) + data("beside", beside, ""),
				ExpectError: regexp.MustCompile(`(?s)DomainVerification Not Found.*` + regexp.QuoteMeta(beside)),
			},
		},
	})
}
