package acctest

import (
	"fmt"
	"strings"
	"sync"
	"testing"

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
	// named counts the starts, failed ones too: a name LabFor knows is
	// never asked for again, so no two tests are lent one cluster.
	named int
}

// Exclusive lends the test a cluster of its own, with the CRDs installed,
// until the test ends. Tests of cluster singletons (SpireServer and
// ZeroTrustWorkloadIdentityManager `cluster`) need it: in the shared lab,
// parallel tests would overwrite each other's singleton. Clusters are started
// on first demand (a few seconds each), each as a lab of its own through
// LabFor, at most exclusiveMax per test binary, reused by later tests and
// stopped at exit; a test waits while all are lent out. An earlier borrower
// may have left objects behind, so a test resets what it depends on before
// it starts.
//
// Call it only after t.Parallel (ExclusiveTest does both): a test that waited
// for a cluster before pausing would block the tests holding the clusters.
func Exclusive(t *testing.T) *harness.Cluster {
	t.Helper()
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
		exclusive.named++
	}
	n := exclusive.named
	exclusive.mu.Unlock()

	switch {
	case start:
		c = startExclusive(t, n)
	case c == nil:
		c = <-exclusive.free
	}
	t.Cleanup(func() { exclusive.free <- c })
	return c
}

// startExclusive starts the nth exclusive cluster. One that does not start
// fails t (LabFor) and gives its place back, so that a later test is not
// left waiting for a cluster that never comes, but starts one of its own.
func startExclusive(t *testing.T, n int) *harness.Cluster {
	t.Helper()
	started := false
	defer func() {
		if !started {
			exclusive.mu.Lock()
			exclusive.started--
			exclusive.mu.Unlock()
		}
	}()
	name := fmt.Sprintf("solo%d", n)
	c := LabFor(t, name, harness.Options{Names: []string{name}}).Cluster(name)
	started = true
	return c
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
