package reliability

import (
	"context"
	"testing"
	"time"
)

// TestAccParallelApplyOnThreeClusters applies 150 ClusterFederatedTrustDomains,
// 50 on each of three clusters, at -parallelism=50 as identities outside
// system:masters (so the apiserver's priority and fairness limits apply to
// them): no throttling error may surface, the plan after apply is empty, and
// destroy leaves nothing behind.
func TestAccParallelApplyOnThreeClusters(t *testing.T) {
	const perCluster = 50
	names := []string{east, west, north}
	who := map[string]identity{}
	for _, n := range names {
		who[n] = newIdentity(t, cluster(t, n), "parallel")
	}
	d := newTFDir(t, "parallel")
	config := providerBlock(who, names...)
	for _, n := range names {
		config += ftdsConfig(n, "par-"+n, perCluster)
	}
	d.write(config)
	start := time.Now()
	out := d.mustApply(nil, "-parallelism=50")
	elapsed := time.Since(start)
	checkQuietApply(t, out)
	d.expectEmptyPlan()
	if got := len(d.stateAddresses()); got != perCluster*len(names) {
		t.Errorf("state holds %d resources, want %d", got, perCluster*len(names))
	}
	for _, n := range names {
		on, err := cftdNames(context.Background(), cluster(t, n), "par-"+n+"-")
		if err != nil {
			t.Fatal(err)
		}
		if len(on) != perCluster {
			t.Errorf("cluster %s holds %d objects, want %d", n, len(on), perCluster)
		}
	}
	if code, out := d.run(nil, "destroy", "-auto-approve", "-input=false", "-parallelism=50"); code != 0 {
		t.Fatalf("destroy failed:\n%s", tail(out, 40))
	}
	for _, n := range names {
		on, err := cftdNames(context.Background(), cluster(t, n), "par-"+n+"-")
		if err != nil {
			t.Fatal(err)
		}
		if len(on) != 0 {
			t.Errorf("destroy left %d objects on %s", len(on), n)
		}
	}
	if !t.Failed() {
		parallelObjects.Store(int64(perCluster * len(names)))
	}
	t.Logf("%d objects on %d clusters applied at parallelism 50 in %v", perCluster*len(names), len(names), elapsed.Round(time.Millisecond))
}
