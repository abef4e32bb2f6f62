package resources_test

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

// unreachablePlanBound is far above what the plan takes (the measured time
// is logged; bench/ measures it): the assertion only catches a plan that
// waits out retries again (16 s before the cluster was asked once).
const unreachablePlanBound = 40 * time.Second

// TestAccPlan_unreachableCluster plans new objects on three clusters, one of
// which does not answer: once an address where nothing listens, once a
// listener that accepts connections and never answers. The plan succeeds,
// names the dead cluster, its address and the checks it skipped in exactly
// one warning, and does not wait out the client's retries.
func TestAccPlan_unreachableCluster(t *testing.T) {
	t.Parallel()
	for name, address := range map[string]func(*testing.T) string{
		"closed port":     acctest.ClosedAddress,
		"silent listener": silentListener,
	} {
		t.Run(name, func(t *testing.T) {
			host := "https://" + address(t)
			td := acctest.UniqueName("unreach")
			config := strings.Replace(acctest.ProviderConfig(t), "  clusters = {\n",
				fmt.Sprintf("  clusters = {\n    dead = { host = %q, token = \"x\", insecure = true }\n", host), 1) + fmt.Sprintf(`
resource "zerotrust_spire_federation" "dead" {
  cluster = "dead"
  bundle_endpoint = {
    profile = "https_web"
    https_web = {
      acme = {
        directory_url = "https://acme.example.test/directory"
        domain_name   = "federation.wrong.test"
        email         = "admin@example.test"
        tos_accepted  = true
      }
    }
  }
}

resource "zerotrust_istio_csr" "dead" {
  cluster      = "dead"
  namespace    = "cert-manager"
  cert_manager = { issuer_ref = { name = "istio-ca", kind = "Issuer" } }
  istiod_tls   = { trust_domain = "cluster.local" }
  istio        = { namespace = "istio-system" }
}

resource "zerotrust_federated_trust_domain" "live" {
  for_each                = toset([%q, %q])
  cluster                 = each.key
  trust_domain            = "%s.test"
  bundle_endpoint_url     = "https://bundle.%s.test/spiffe"
  bundle_endpoint_profile = { type = "https_web" }
}
`, acctest.East, acctest.West, td, td)
			w := newCLIWorkspace(t)
			w.write(config)
			w.run("init")
			start := time.Now()
			out := w.run("plan")
			took := time.Since(start)
			t.Logf("plan with one of three clusters at %s (%s) took %s", host, name, took.Round(time.Millisecond))

			const summary = "Warning: Cluster Unreachable: Plan-Time Checks Skipped"
			if n := strings.Count(out, summary); n != 1 {
				t.Fatalf("want the warning %q once, got %d times:\n%s", summary, n, out)
			}
			for _, want := range []string{
				fmt.Sprintf("Cluster \"dead\" at %s did not answer within 3s:", host),
				"zerotrust_spire_federation: the cluster's trust domain",
				"that an ACME domain_name is the host of the operator's Route",
				"zerotrust_istio_csr: that no other IstioCSR exists on the cluster",
				"that the cert-manager issuer exists and is not an ACME issuer",
				"that the CA ConfigMap of ca_certificate holds a CA certificate",
				"that no other ClusterFederatedTrustDomain federates with the same trust domain",
				"4 to add",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("want %q in the plan output:\n%s", want, out)
				}
			}
			if strings.Contains(out, "\"east\" at") || strings.Contains(out, "\"west\" at") {
				t.Errorf("a live cluster was reported unreachable:\n%s", out)
			}
			if took > unreachablePlanBound {
				t.Errorf("plan took %s, more than %s", took, unreachablePlanBound)
			}
		})
	}
}

// silentListener accepts connections and never writes to them (not even a
// TLS handshake) until the test ends.
func silentListener(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return l.Addr().String()
}
