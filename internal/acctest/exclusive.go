package acctest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// exclusiveMax bounds the clusters Exclusive starts per test binary; Go runs
// GOMAXPROCS parallel tests at once, two on the machines this project targets.
const exclusiveMax = 2

var exclusive struct {
	mu      sync.Mutex
	free    chan *harness.Cluster
	started int
}

// Exclusive lends the test a cluster of its own, with the CRDs installed,
// until the test ends. Tests of cluster singletons (SpireServer and
// ZeroTrustWorkloadIdentityManager `cluster`) need it: in the shared lab,
// parallel tests would overwrite each other's singleton. Clusters are started
// on first demand (a few seconds each), at most exclusiveMax per test binary,
// reused by later tests and stopped at exit; a test waits while all are lent
// out. An earlier borrower may have left objects behind, so a test resets
// what it depends on before it starts.
//
// Call it only after t.Parallel (ExclusiveTest does both): a test that waited
// for a cluster before pausing would block the tests holding the clusters.
func Exclusive(t *testing.T) *harness.Cluster {
	t.Helper()
	work := WorkDir(t)
	exclusive.mu.Lock()
	if exclusive.free == nil {
		exclusive.free = make(chan *harness.Cluster, exclusiveMax)
	}
	var c *harness.Cluster
	select {
	case c = <-exclusive.free:
	default:
	}
	start := c == nil && exclusive.started < exclusiveMax
	if start {
		exclusive.started++
	}
	n := exclusive.started
	exclusive.mu.Unlock()

	switch {
	case start:
		var err error
		if c, err = startExclusive(work, n); err != nil {
			exclusive.mu.Lock()
			exclusive.started--
			exclusive.mu.Unlock()
			t.Fatalf("acctest: cannot start an exclusive test cluster: %v", err)
		}
	case c == nil:
		c = <-exclusive.free
	}
	t.Cleanup(func() { exclusive.free <- c })
	return c
}

func startExclusive(work string, n int) (*harness.Cluster, error) {
	name := fmt.Sprintf("solo%d", n)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	l, err := harness.Start(ctx, harness.Options{Names: []string{name}, Dir: filepath.Join(work, name)})
	if err != nil {
		return nil, err
	}
	AtExit(func() { _ = l.Stop() })
	return l.Cluster(name), nil
}

// ProviderConfigFor is a provider block whose `clusters` map holds the given
// clusters under their own names; the first is also the default connection.
func ProviderConfigFor(t *testing.T, clusters ...*harness.Cluster) string {
	t.Helper()
	if len(clusters) == 0 {
		t.Fatal("acctest: ProviderConfigFor needs at least one cluster")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "provider \"zerotrust\" {\n  kubernetes = { config_path = %q, config_context = %q }\n  clusters = {\n",
		clusters[0].Kubeconfig, clusters[0].Name)
	for _, c := range clusters {
		fmt.Fprintf(&b, "    %s = { config_path = %q, config_context = %q }\n", c.Name, c.Kubeconfig, c.Name)
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// ExclusiveTest is resource.ParallelTest on a cluster lent by Exclusive:
// build receives the cluster once the test holds it (and may prepare objects
// on it) and returns the test case.
func ExclusiveTest(t *testing.T, build func(c *harness.Cluster) resource.TestCase) {
	t.Helper()
	t.Parallel()
	c := Exclusive(t)
	resource.Test(t, build(c))
}
