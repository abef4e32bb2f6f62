package acctest

import (
	"context"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/harness"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// The ZTWIM spire-server controller stand-in lives in internal/harness
// (standin_ztwim.go says what it does), so that bench/ can run it too; these
// are the tests' handles on it.

const (
	// ZTWIMStandInRouteDelay is how long the stand-in's reconcile takes
	// between its first status write and the Route (harness).
	ZTWIMStandInRouteDelay = harness.ZTWIMStandInRouteDelay
	// ZTWIMRouteNamespace and ZTWIMRouteName name the federation Route.
	ZTWIMRouteNamespace = harness.ZTWIMRouteNamespace
	ZTWIMRouteName      = harness.ZTWIMRouteName
	// ZTWIMManagedByLabel and ZTWIMManagedByValue mark the operator's objects.
	ZTWIMManagedByLabel = harness.ZTWIMManagedByLabel
	ZTWIMManagedByValue = harness.ZTWIMManagedByValue
)

var (
	ztwimStandInMu      sync.Mutex
	ztwimStandInRunning = map[string]*harness.ZTWIMStandIn{}
)

// ZTWIMStandIn starts the stand-in spire-server controller on c (once per
// test binary and cluster; it stops when the tests are done), installing the
// Route CRD when c does not serve Routes. Every test whose apply of
// zerotrust_spire_federation waits for the operator's verdict starts it.
func ZTWIMStandIn(t *testing.T, c *harness.Cluster) {
	t.Helper()
	ztwimStandInMu.Lock()
	defer ztwimStandInMu.Unlock()
	if ztwimStandInRunning[c.Name] != nil {
		return
	}
	s, stop, err := harness.StartZTWIMStandIn(dynamicFor(t, c))
	if err != nil {
		t.Fatalf("acctest: ZTWIM stand-in on %s: %v", c.Name, err)
	}
	ztwimStandInRunning[c.Name] = s
	AtExit(stop)
}

// WaitZTWIMReconciled waits until the stand-in on c (ZTWIMStandIn) has
// reconciled the SpireServer as it is now, so a test can record it without
// the stand-in's writes arriving afterwards.
func WaitZTWIMReconciled(t *testing.T, c *harness.Cluster) {
	t.Helper()
	s := runningZTWIMStandIn(t, c, "WaitZTWIMReconciled")
	deadline := time.Now().Add(time.Minute)
	stable := 0
	for stable < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("acctest: %s: the ZTWIM stand-in did not finish reconciling the SpireServer within a minute", c.Name)
		}
		if s.Reconciled(context.Background()) {
			stable++
		} else {
			stable = 0
		}
		time.Sleep(harness.ZTWIMStandInTick)
	}
}

// runningZTWIMStandIn is the stand-in ZTWIMStandIn started on c; caller
// names the helper that needs it when it is not running.
func runningZTWIMStandIn(t *testing.T, c *harness.Cluster, caller string) *harness.ZTWIMStandIn {
	t.Helper()
	ztwimStandInMu.Lock()
	defer ztwimStandInMu.Unlock()
	s := ztwimStandInRunning[c.Name]
	if s == nil {
		t.Fatalf("acctest: %s on %s: the ZTWIM stand-in is not running there", caller, c.Name)
	}
	return s
}

// ZTWIMRenders returns every server.conf the stand-in on c rendered since
// since, oldest first (harness.ZTWIMStandIn.Renders).
func ZTWIMRenders(t *testing.T, c *harness.Cluster, since time.Time) []harness.ZTWIMRender {
	t.Helper()
	s := runningZTWIMStandIn(t, c, "ZTWIMRenders")
	var out []harness.ZTWIMRender
	for _, r := range s.Renders() {
		if !r.At.Before(since) {
			out = append(out, r)
		}
	}
	return out
}

// ZTWIMRoute reads the federation Route from c, or nil when it does not exist.
func ZTWIMRoute(t *testing.T, c *harness.Cluster) *unstructured.Unstructured {
	t.Helper()
	route, err := dynamicFor(t, c).Resource(kube.Route.GVR()).Namespace(ZTWIMRouteNamespace).Get(context.Background(), ZTWIMRouteName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("%s: get Route %s/%s: %v", c.Name, ZTWIMRouteNamespace, ZTWIMRouteName, err)
	}
	return route
}
