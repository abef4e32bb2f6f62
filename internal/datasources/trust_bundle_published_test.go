package datasources_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

// tbObjectStore is a store serving objects at path-style URLs
// (/<bucket>/<key>), as an S3-compatible store with a custom endpoint does:
// every path not in objects is a 404, /bundles/private a 403 (an object
// without public read), and /bundles/flaky answers 503 twice before serving
// /bundles/east.json (an outage the read waits out). caPEM is its CA.
type tbObjectStore struct {
	url, caPEM  string
	flakyServed *atomic.Int32
}

func tbStartObjectStore(t *testing.T, objects map[string][]byte) tbObjectStore {
	t.Helper()
	flaky := &atomic.Int32{}
	url, ca := acctest.ObjectStore(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/bundles/private":
			http.Error(w, "<Error><Code>AccessDenied</Code></Error>", http.StatusForbidden)
		case r.URL.Path == "/bundles/flaky" && flaky.Add(1) <= 2:
			http.Error(w, "<Error><Code>SlowDown</Code></Error>", http.StatusServiceUnavailable)
		case r.URL.Path == "/bundles/flaky":
			_, _ = w.Write(objects["/bundles/east.json"])
		case objects[r.URL.Path] != nil:
			_, _ = w.Write(objects[r.URL.Path])
		default:
			http.Error(w, "<Error><Code>NoSuchKey</Code></Error>", http.StatusNotFound)
		}
	})
	return tbObjectStore{url: url, caPEM: ca, flakyServed: flaky}
}

// TestAccTrustBundleDataSource_published reads east's bundle as a SPIRE
// BundlePublisher would have published it: the object is what east's real
// SPIRE server prints with `bundle show -format spiffe` (and `-format pem`
// for the PEM object), served over HTTPS by a store on 127.0.0.1 whose CA
// is given in ca_certificates. The SPIFFE object gives the same bundle as
// `bundle show`; a store in an outage (503) is waited out; a PEM object,
// another trust domain, a 404, a 403, a closed port and an untrusted
// certificate each fail naming what is wrong.
func TestAccTrustBundleDataSource_published(t *testing.T) {
	east := acctest.Spire(t, acctest.East)
	shown := tbShow(t, east)
	pemOut, err := east.BundleShow(context.Background(), "pem")
	if err != nil {
		t.Fatal(err)
	}
	store := tbStartObjectStore(t, map[string][]byte{
		"/bundles/east.json": []byte(shown.json),
		"/bundles/east.pem":  pemOut,
	})
	read := func(td, url string, withCA bool) string {
		ca := ""
		if withCA {
			ca = fmt.Sprintf("    ca_certificates = <<-EOT\n%s\nEOT\n", store.caPEM)
		}
		return acctest.ProviderConfig(t) + fmt.Sprintf(`
data "zerotrust_trust_bundle" "published" {
  trust_domain = %q
  timeout      = "8s"
  published = {
    url = %q
%s  }
}
`, td, url, ca)
	}
	const addr = "data.zerotrust_trust_bundle.published"
	fails := func(config, want string) resource.TestStep {
		return resource.TestStep{Config: config, PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)` + want)}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: read(east.TrustDomain, store.url+"/bundles/east.json", true),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("spiffe_bundle"), knownvalue.StringExact(shown.normalized)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("x509_authorities_pem"), knownvalue.StringExact(shown.pem)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("x509_fingerprints_sha256"), tbStrings(shown.fingerprints)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("sequence_number"), knownvalue.NotNull()),
				},
			},
			{
				// Reading the unchanged object again changes nothing.
				Config:            read(east.TrustDomain, store.url+"/bundles/east.json", true),
				ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(addr, tfjsonpath.New("spiffe_bundle"), knownvalue.StringExact(shown.normalized))},
			},
			fails(read(east.TrustDomain, store.url+"/bundles/east.pem", true),
				`Cannot Read the Trust Bundle.*published bundle.*east\.pem.*PEM certificates \(format "pem"\),\s+not\s+a\s+SPIFFE\s+bundle.*format\s+to\s+"spiffe"`),
			fails(read("west.zt.test", store.url+"/bundles/east.json", true),
				`Unusable Trust Bundle.*belongs\s+to\s+trust\s+domain\s+"east.zt.test",\s+not\s+"west.zt.test"`),
			fails(read(east.TrustDomain, store.url+"/bundles/missing.json", true),
				`Cannot Read the Trust Bundle.*404 Not Found:\s+no\s+such\s+bucket\s+or\s+object`),
			fails(read(east.TrustDomain, store.url+"/bundles/private", true),
				`Cannot Read the Trust Bundle.*403 Forbidden.*public\s+read`),
			fails(read(east.TrustDomain, "https://"+acctest.ClosedAddress(t)+"/bundles/east.json", true),
				`Trust Bundle Not Available.*within 8s.*Last error:.*object\s+store\s+does\s+not\s+answer.*connection\s+refused`),
			// The system roots do not know the store's CA.
			fails(read(east.TrustDomain, store.url+"/bundles/east.json", false),
				`Cannot Read the Trust Bundle.*certificate\s+is\s+not\s+trusted.*ca_certificates`),
			fails(read(east.TrustDomain, strings.Replace(store.url, "https://", "http://", 1)+"/bundles/east.json", true),
				`published\.url.*https`),
			{
				// Two 503s, then the object: an outage is retried within the timeout.
				// Last, so that the test's closing destroy has a configuration that reads.
				Config: read(east.TrustDomain, store.url+"/bundles/flaky", true),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("spiffe_bundle"), knownvalue.StringExact(shown.normalized)),
					tbCheck(func() error {
						if n := store.flakyServed.Load(); n < 3 {
							return fmt.Errorf("the store was asked %d times; the read cannot have waited out two 503s", n)
						}
						return nil
					}),
				},
			},
		},
	})
}
