package harness

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// startWorkload starts an agent and one workload on s that accepts peer.
func startWorkload(t *testing.T, s *Spire, peer string) *Workload {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	a, err := StartSpireAgent(ctx, s, "node")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.Stop(); err != nil {
			t.Error(err)
		}
	})
	w, err := StartWorkload(ctx, a, WorkloadOptions{Name: "app", Allow: []string{peer}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Stop(); err != nil {
			t.Error(err)
		}
	})
	t.Logf("%s: agent pid %d and workload %s on %s ready in %v", s.TrustDomain, a.PID(), w.SPIFFEID, w.Addr, time.Since(start).Round(time.Millisecond))
	return w
}

// expectMTLS checks the handshake both ways, waiting up to timeout for the
// outcome want, and returns the details.
func expectMTLS(ctx context.Context, t *testing.T, a, b *Workload, want bool, timeout time.Duration) []string {
	t.Helper()
	var details []string
	for _, p := range [][2]*Workload{{a, b}, {b, a}} {
		detail, err := WaitMTLS(ctx, p[0], p[1], want, timeout)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s -> %s: %s", p[0].SPIFFEID, p[1].SPIFFEID, detail)
		details = append(details, detail)
	}
	return details
}

// federationRelationships lists the trust domains s has a federation
// relationship with (`spire-server federation list`), sorted.
func federationRelationships(ctx context.Context, t *testing.T, s *Spire) []string {
	t.Helper()
	out, err := s.CLI(ctx, "federation", "list", "-output", "json")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Relationships []struct {
			TrustDomain string `json:"trust_domain"`
		} `json:"federation_relationships"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("federation list: %v in %q", err, out)
	}
	var tds []string
	for _, r := range list.Relationships {
		tds = append(tds, r.TrustDomain)
	}
	slices.Sort(tds)
	return tds
}

// TestAccWorkloadsMTLS: workloads of two clusters, each with a real
// spire-agent, trust each other exactly while the servers hold each other's
// bundles and the entries federate with the peer.
func TestAccWorkloadsMTLS(t *testing.T) {
	lab := startLab(t, Options{Names: []string{"east", "west"}})
	ctx := context.Background()
	east := startSpire(t, lab.Cluster("east"), SpireOptions{TrustDomain: "east.zt.test", ControllerManager: true})
	west := startSpire(t, lab.Cluster("west"), SpireOptions{TrustDomain: "west.zt.test", ControllerManager: true})
	we := startWorkload(t, east, "spiffe://west.zt.test/workload/app")
	ww := startWorkload(t, west, "spiffe://east.zt.test/workload/app")

	// Not federated: neither side has the other's bundle.
	for _, d := range expectMTLS(ctx, t, we, ww, false, 10*time.Second) {
		if !strings.Contains(d, "bundle") {
			t.Errorf("before federation the handshake failed for another reason than a missing bundle: %s", d)
		}
	}
	// SPIRE refuses to federate an entry with a trust domain whose bundle it
	// does not hold (datastore: "unable to find federated bundle").
	if err := we.SetFederatesWith(ctx, "west.zt.test"); err == nil || !strings.Contains(err.Error(), "unable to find federated bundle") {
		t.Fatalf("SetFederatesWith before the bundle exists: %v, want SPIRE's refusal", err)
	}

	// Federate both ways as an administrator would (ClusterFederatedTrustDomains
	// reconciled by spire-controller-manager), then let the entries federate.
	createCFTD(ctx, t, dynamicClient(t, east.Cluster), west, DefaultSpireClassName)
	createCFTD(ctx, t, dynamicClient(t, west.Cluster), east, DefaultSpireClassName)
	waitFederated(ctx, t, east, "west.zt.test")
	waitFederated(ctx, t, west, "east.zt.test")
	// Bundles alone are not enough: the entries must federate with the peer.
	expectMTLS(ctx, t, we, ww, false, 10*time.Second)
	if err := we.SetFederatesWith(ctx, "west.zt.test"); err != nil {
		t.Fatal(err)
	}
	// One way only: east's client now verifies west's server, and west's
	// server refuses east's certificate after the client's handshake is done.
	var detail string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		var ok bool
		ok, detail = CheckMTLS(ctx, we, ww)
		return !ok && strings.Contains(detail, "refused us after the handshake") && strings.Contains(detail, "tls: bad certificate"), nil
	})
	if err != nil {
		t.Fatalf("east -> west with only east's entry federated: %s, want west's server to refuse the client certificate", detail)
	}
	t.Logf("east -> west, only east federated: %s", detail)
	if err := ww.SetFederatesWith(ctx, "spiffe://east.zt.test"); err != nil {
		t.Fatal(err)
	}
	for _, d := range expectMTLS(ctx, t, we, ww, true, 60*time.Second) {
		if !strings.HasPrefix(d, "ok spiffe://") || !strings.Contains(d, "hello spiffe://") {
			t.Errorf("handshake detail %q, want ok <server ID>: hello <client ID>", d)
		}
	}

	// Deleting the ClusterFederatedTrustDomains removes the federation
	// relationships but not the bundles: workloads keep trusting each other.
	for _, s := range []*Spire{east, west} {
		for _, name := range []string{"east.zt.test", "west.zt.test"} {
			if name == s.TrustDomain {
				continue
			}
			if err := dynamicClient(t, s.Cluster).Resource(cftdResource).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, s := range []*Spire{east, west} {
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			return len(federationRelationships(ctx, t, s)) == 0, nil
		})
		if err != nil {
			t.Fatalf("SPIRE %s still has federation relationships %v 60s after the CFTD delete", s.TrustDomain, federationRelationships(ctx, t, s))
		}
		if got, err := s.FederatedTrustDomains(ctx); err != nil || len(got) != 1 {
			t.Fatalf("SPIRE %s holds bundles %v (%v) after the CFTD delete, want the peer's still", s.TrustDomain, got, err)
		}
	}
	expectMTLS(ctx, t, we, ww, true, 10*time.Second)

	// Deleting the bundles too (dissociating the entries) ends the trust.
	for _, p := range [][2]*Spire{{east, west}, {west, east}} {
		if _, err := p[0].CLI(ctx, "bundle", "delete", "-id", "spiffe://"+p[1].TrustDomain, "-mode", "dissociate"); err != nil {
			t.Fatal(err)
		}
	}
	// Each side drops the peer's bundle on its own schedule: a handshake fails
	// on the client's side (no bundle to verify the server) or, when the
	// server's agent was faster, on the server's side (it refuses the client's
	// certificate). Both are the trust ending; anything else is not.
	for _, d := range expectMTLS(ctx, t, we, ww, false, 60*time.Second) {
		if !strings.Contains(d, "no X.509 bundle") && !strings.Contains(d, "bad certificate") {
			t.Errorf("after the bundle delete the handshake failed for another reason than a missing bundle: %s", d)
		}
	}
	// Dissociating dropped the peer from the entries.
	for _, w := range []*Workload{we, ww} {
		out, err := w.Agent.Server.CLI(ctx, "entry", "show", "-entryID", w.EntryID, "-output", "json")
		if err != nil {
			t.Fatal(err)
		}
		var shown struct {
			Entries []struct {
				FederatesWith []string `json:"federates_with"`
			} `json:"entries"`
		}
		if err := json.Unmarshal(out, &shown); err != nil || len(shown.Entries) != 1 || len(shown.Entries[0].FederatesWith) != 0 {
			t.Errorf("entry of %s after the dissociating bundle delete (%v): %s", w.SPIFFEID, err, out)
		}
	}
}
