package harness

import (
	"context"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// startPSATAgent starts a k8s_psat agent named "node" on s.
func startPSATAgent(t *testing.T, s *Spire) *SpireAgent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	a, err := StartSpireAgentWith(ctx, s, SpireAgentOptions{Name: "node", K8sPSAT: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.Stop(); err != nil {
			t.Error(err)
		}
	})
	t.Logf("%s: k8s_psat agent %s (pid %d) attested in %v", s.TrustDomain, a.SPIFFEID, a.PID(), time.Since(start).Round(time.Millisecond))
	return a
}

func startPodWorkload(t *testing.T, a *SpireAgent, opts PodWorkloadOptions) *Workload {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	w, err := StartPodWorkload(ctx, a, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Stop(); err != nil {
			t.Error(err)
		}
	})
	t.Logf("%s: pod workload %s/%s (uid %s) serves as %s on %s (entry %s) after %v", a.Server.TrustDomain,
		w.Pod.Namespace, w.Pod.Name, w.Pod.UID, w.SPIFFEID, w.Addr, w.EntryID, time.Since(start).Round(time.Millisecond))
	return w
}

// entryFederatesWith reads the trust domains entry id federates with.
func entryFederatesWith(ctx context.Context, t *testing.T, s *Spire, id string) []string {
	t.Helper()
	e, err := s.Entry(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return e.FederatesWith
}

// TestAccClusterSPIFFEIDWorkloads: workloads whose registration entries come
// from ClusterSPIFFEIDs (spire-controller-manager, k8s_psat agents, pod
// workloads attested through the kubelet stand-in) trust each other across
// two federated clusters; after `bundle delete -mode dissociate`, the
// controller restores federatesWith on its entries once SPIRE holds the bundle
// again, while a hand-made entry stays without it.
func TestAccClusterSPIFFEIDWorkloads(t *testing.T) {
	lab := startLab(t, Options{Names: []string{"east", "west"}})
	ctx := context.Background()
	east := startSpire(t, lab.Cluster("east"), SpireOptions{TrustDomain: "east.zt.test", ControllerManager: true})
	west := startSpire(t, lab.Cluster("west"), SpireOptions{TrustDomain: "west.zt.test", ControllerManager: true})

	// Federated first: SPIRE refuses an entry that federates with a trust
	// domain whose bundle it does not hold, so the controller could not
	// create the pods' entries before.
	createCFTD(ctx, t, dynamicClient(t, east.Cluster), west, DefaultSpireClassName)
	createCFTD(ctx, t, dynamicClient(t, west.Cluster), east, DefaultSpireClassName)
	waitFederated(ctx, t, east, "west.zt.test")
	waitFederated(ctx, t, west, "east.zt.test")

	const template = "spiffe://{{ .TrustDomain }}/ns/{{ .PodMeta.Namespace }}/sa/{{ .PodSpec.ServiceAccountName }}"
	for _, p := range [][2]*Spire{{east, west}, {west, east}} {
		err := p[0].ApplyClusterSPIFFEID(ctx, ClusterSPIFFEIDOptions{
			Name: "web", SPIFFEIDTemplate: template, PodLabels: map[string]string{"app": "web"},
			FederatesWith: []string{p[1].TrustDomain},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	agentEast, agentWest := startPSATAgent(t, east), startPSATAgent(t, west)
	for _, a := range []*SpireAgent{agentEast, agentWest} {
		prefix := "spiffe://" + a.Server.TrustDomain + "/spire/agent/k8s_psat/" + a.Server.Cluster.Name + "/"
		if a.SPIFFEID != prefix+a.NodeUID || a.NodeUID == "" {
			t.Fatalf("agent ID %s, want %s<node UID %q>", a.SPIFFEID, prefix, a.NodeUID)
		}
	}
	podOpts := func(peer string) PodWorkloadOptions {
		return PodWorkloadOptions{
			Namespace: "apps", Pod: "web-0", ServiceAccount: "web", Labels: map[string]string{"app": "web"},
			Allow: []string{"spiffe://" + peer},
		}
	}
	podEast := startPodWorkload(t, agentEast, podOpts("west.zt.test"))
	podWest := startPodWorkload(t, agentWest, podOpts("east.zt.test"))
	for _, w := range []*Workload{podEast, podWest} {
		td := w.Agent.Server.TrustDomain
		if want := "spiffe://" + td + "/ns/apps/sa/web"; w.SPIFFEID != want {
			t.Errorf("pod workload SPIFFE ID %s, want the template's %s", w.SPIFFEID, want)
		}
		e, err := w.Agent.Server.Entry(ctx, w.EntryID)
		if err != nil {
			t.Fatal(err)
		}
		// The entry's shape is spire-controller-manager's (spireentry.renderPodEntry).
		if e.ParentID != w.Agent.SPIFFEID || !slices.Equal(e.Selectors, []string{"k8s:pod-uid:" + w.Pod.UID}) {
			t.Errorf("entry of %s: parent %s selectors %v, want parent %s and k8s:pod-uid:%s", w.SPIFFEID, e.ParentID, e.Selectors, w.Agent.SPIFFEID, w.Pod.UID)
		}
	}
	// A hand-made entry on the same agent (unix selectors), federated the same way.
	manual, err := StartWorkload(ctx, agentEast, WorkloadOptions{Name: "manual", Allow: []string{"spiffe://west.zt.test"}, FederatesWith: []string{"west.zt.test"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := manual.Stop(); err != nil {
			t.Error(err)
		}
	})
	for _, id := range []string{podEast.EntryID, manual.EntryID} {
		if got := entryFederatesWith(ctx, t, east, id); !slices.Equal(got, []string{"west.zt.test"}) {
			t.Fatalf("east entry %s federates with %v before the bundle delete, want [west.zt.test]", id, got)
		}
	}
	expectMTLS(ctx, t, podEast, podWest, true, 60*time.Second)
	if detail, err := WaitMTLS(ctx, manual, podWest, true, 30*time.Second); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("hand-made east -> pod west: %s", detail)
	}

	// An operator's mistake: east drops west's bundle and, dissociating,
	// every entry's federation with west.
	deleted := time.Now()
	if _, err := east.CLI(ctx, "bundle", "delete", "-id", "spiffe://west.zt.test", "-mode", "dissociate"); err != nil {
		t.Fatal(err)
	}
	// SCM declares federatesWith [west] for its entry and updates the entry
	// when it differs (spireentry: getOutdatedEntryFields), but SPIRE refuses
	// to federate an entry with a trust domain whose bundle it lacks
	// (sqlstore: makeFederatesWith, "unable to find federated bundle"); the
	// relationship cannot fetch the bundle either (https_spiffe authenticates
	// the endpoint with it). So while the bundle is missing both entries stay
	// without west, whatever the controller tries.
	observe := 15 * time.Second
	var sawRefusal bool
	// The conditions use the test's ctx: the poll's own ends at the timeout
	// and would kill a CLI call under way.
	_ = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, observe, true, func(context.Context) (bool, error) {
		if got := entryFederatesWith(ctx, t, east, podEast.EntryID); len(got) != 0 {
			t.Fatalf("SCM's entry federates with %v %v after the bundle delete, while SPIRE holds no bundle for west",
				got, time.Since(deleted).Round(time.Millisecond))
		}
		log, _ := os.ReadFile(east.ControllerManagerLogPath())
		sawRefusal = strings.Contains(string(log), "unable to find federated bundle")
		return false, nil
	})
	if got := entryFederatesWith(ctx, t, east, manual.EntryID); len(got) != 0 {
		t.Fatalf("hand-made entry federates with %v after the dissociating bundle delete", got)
	}
	if bundles, err := east.FederatedTrustDomains(ctx); err != nil || len(bundles) != 0 {
		t.Fatalf("east holds bundles %v (%v) %v after the delete, want none", bundles, err, observe)
	}
	if !sawRefusal {
		t.Errorf("no \"unable to find federated bundle\" in %s within %v of the delete: did SCM not try to re-federate its entry?",
			east.ControllerManagerLogPath(), observe)
	}
	t.Logf("for %v after the bundle delete SCM's entry stayed without west (SPIRE refused SCM's updates: %v)", observe, sawRefusal)
	// The handshake fails: east's pod has no bundle to verify west's server,
	// or west's server refuses east's certificate, depending on which agent
	// passed the change on first.
	for _, d := range expectMTLS(ctx, t, podEast, podWest, false, 60*time.Second) {
		if !strings.Contains(d, "bundle") && !strings.Contains(d, "bad certificate") && !strings.Contains(d, "unknown authority") {
			t.Errorf("after the bundle delete the handshake failed for another reason than a missing bundle: %s", d)
		}
	}

	// Recreating the ClusterFederatedTrustDomain brings the bundle back
	// (the controller seeds a new relationship from trustDomainBundle).
	dynEast := dynamicClient(t, east.Cluster)
	if err := dynEast.Resource(cftdResource).Delete(ctx, "west.zt.test", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		return len(federationRelationships(ctx, t, east)) == 0, nil
	})
	if err != nil {
		t.Fatalf("east still has federation relationships %v 60s after the CFTD delete", federationRelationships(ctx, t, east))
	}
	createCFTD(ctx, t, dynEast, west, DefaultSpireClassName)
	waitFederated(ctx, t, east, "west.zt.test")
	restored := time.Now()
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		return slices.Equal(entryFederatesWith(ctx, t, east, podEast.EntryID), []string{"west.zt.test"}), nil
	})
	if err != nil {
		t.Fatalf("SCM did not re-federate its entry %s with west within 60s of the bundle's return; last lines of %s:\n%s",
			podEast.EntryID, east.ControllerManagerLogPath(), fileTail(east.ControllerManagerLogPath(), 20))
	}
	// Measured on the shared 2-core machine (gcInterval 1 s): 0.19-0.28 s
	// after the bundle was back; 15.9-16.3 s after the delete, of which 15 s
	// are the test's own watch of the refused updates.
	t.Logf("SCM re-federated its entry %v after SPIRE held west's bundle again (%v after the delete)",
		time.Since(restored).Round(time.Millisecond), time.Since(deleted).Round(time.Millisecond))
	if got := entryFederatesWith(ctx, t, east, manual.EntryID); len(got) != 0 {
		t.Errorf("hand-made entry federates with %v, want it to stay without west (nothing re-federates it)", got)
	}
	for _, d := range expectMTLS(ctx, t, podEast, podWest, true, 60*time.Second) {
		if !strings.HasPrefix(d, "ok spiffe://") {
			t.Errorf("handshake detail %q after the re-federation", d)
		}
	}
	// The hand-made workload cannot verify west's server any more.
	detail, err := WaitMTLS(ctx, manual, podWest, false, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("hand-made east -> pod west after the re-federation: %s", detail)
}

func TestParseEntries(t *testing.T) {
	out := []byte(`{"entries":[{"id":"scm.1","spiffe_id":{"trust_domain":"east.zt.test","path":"/ns/apps/sa/web"},
		"parent_id":{"trust_domain":"east.zt.test","path":"/spire/agent/k8s_psat/east/u1"},
		"selectors":[{"type":"k8s","value":"pod-uid:p1"}],"federates_with":["west.zt.test","north.zt.test"]},
		{"id":"e2","spiffe_id":{"trust_domain":"east.zt.test","path":"/w"},"parent_id":{"trust_domain":"east.zt.test","path":"/agent/a"},
		"selectors":[{"type":"unix","value":"uid:0"}]}]}`)
	got, err := parseEntries(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{
			ID: "scm.1", SPIFFEID: "spiffe://east.zt.test/ns/apps/sa/web", ParentID: "spiffe://east.zt.test/spire/agent/k8s_psat/east/u1",
			Selectors: []string{"k8s:pod-uid:p1"}, FederatesWith: []string{"north.zt.test", "west.zt.test"},
		},
		{
			ID: "e2", SPIFFEID: "spiffe://east.zt.test/w", ParentID: "spiffe://east.zt.test/agent/a",
			Selectors: []string{"unix:uid:0"}, FederatesWith: []string{},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseEntries = %+v\nwant %+v", got, want)
	}
	if _, err := parseEntries([]byte("not json")); err == nil {
		t.Error("parseEntries accepted garbage")
	}
}

func TestHarnessCacheDir(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=/home/u", "ZT_CACHE_DIR=/c"}, "/c"},
		{[]string{"HOME=/home/u", "XDG_CACHE_HOME=/x"}, "/x/terraform-provider-zerotrust"},
		{[]string{"HOME=/home/u"}, "/home/u/.cache/terraform-provider-zerotrust"},
		{[]string{"ZT_CACHE_DIR=/a", "ZT_CACHE_DIR=/b"}, "/b"},
	} {
		if got := harnessCacheDir(c.env); got != c.want {
			t.Errorf("harnessCacheDir(%q) = %s, want %s", c.env, got, c.want)
		}
	}
}
