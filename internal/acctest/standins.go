package acctest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/standin"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// The operator stand-ins (internal/standin says what they are) as the tests
// start them: each once per test binary and cluster, stopped when the
// binary's tests are done, and what tests read of them.

const (
	// ZTWIMStandInRouteDelay is how long the ZTWIM stand-in's reconcile
	// takes between its first status write and the Route.
	ZTWIMStandInRouteDelay = standin.ZTWIMRouteDelay
	// ZTWIMRouteNamespace and ZTWIMRouteName name the federation Route.
	ZTWIMRouteNamespace = standin.ZTWIMRouteNamespace
	ZTWIMRouteName      = standin.ZTWIMRouteName
	// IstioCSRNamespaceLabel maps objects outside the IstioCSR's namespace to it.
	IstioCSRNamespaceLabel = standin.IstioCSRNamespaceLabel
	// IstioCSRRejectAnnotation marks an IstioCSR refused for good because an
	// older one exists.
	IstioCSRRejectAnnotation = standin.IstioCSRRejectAnnotation
)

var (
	// IstioCSROperands are the kinds of everything the operator creates for
	// an IstioCSR, and where.
	IstioCSROperands = standin.IstioCSROperands
	// CertManagerCertificateGVR is cert-manager's Certificate.
	CertManagerCertificateGVR = kube.CertManagerCertificate.GVR()
)

var (
	ztwimStandIns    lazy[*standin.ZTWIM]
	istioCSRStandIns lazy[*standin.IstioCSR]
	dvStandIns       lazy[*standin.DomainVerification]
	// istioCSRHeld holds back the agent and istiod's Certificate of the
	// IstioCSR of a namespace, by "<cluster>/<namespace>".
	istioCSRHeld sync.Map
)

// startStandIn starts a stand-in with start once per test binary and
// cluster (l remembers it) and stops it when the tests are done; one that
// could not start fails every test that asks for it, with the reason.
func startStandIn[S any](t *testing.T, l *lazy[S], what, cluster string, start func(context.Context) (S, func(), error)) S {
	t.Helper()
	s, err := l.get(cluster, func() (S, error) {
		s, stop, err := start(context.Background())
		if err == nil {
			AtExit(stop)
		}
		return s, err
	})
	if err != nil {
		t.Fatalf("acctest: %s stand-in on %s: %v", what, cluster, err)
	}
	return s
}

// ZTWIMStandIn starts the stand-in spire-server controller on c, installing
// the Route CRD when c does not serve Routes. Every test whose apply of
// zerotrust_spire_federation waits for the operator's verdict starts it.
func ZTWIMStandIn(t *testing.T, c *harness.Cluster) {
	t.Helper()
	dyn := dynamicFor(t, c)
	startStandIn(t, &ztwimStandIns, "ZTWIM", c.Name, func(ctx context.Context) (*standin.ZTWIM, func(), error) {
		return standin.StartZTWIM(ctx, standin.ZTWIMDeps{Dynamic: dyn})
	})
}

// IstioCSRStandIn starts the stand-in cert-manager Operator on cluster and
// installs the cert-manager CRDs there.
func IstioCSRStandIn(t *testing.T, cluster string) {
	t.Helper()
	dyn := Dynamic(t, cluster)
	startStandIn(t, &istioCSRStandIns, "IstioCSR", cluster, func(ctx context.Context) (*standin.IstioCSR, func(), error) {
		return standin.StartIstioCSR(ctx, standin.IstioCSRDeps{Dynamic: dyn, Held: func(ns string) bool {
			_, held := istioCSRHeld.Load(cluster + "/" + ns)
			return held
		}})
	})
}

// DomainVerificationController starts the stand-in DomainVerification
// controller for cluster, checking records on the test binary's DNS servers
// (DNS) for their zones.
func DomainVerificationController(t *testing.T, cluster string) {
	t.Helper()
	deps := standin.DomainVerificationDeps{Dynamic: Dynamic(t, cluster), Nameservers: DNS(t).Addrs(), Zones: DNS(t).Zones()}
	startStandIn(t, &dvStandIns, "DomainVerification", cluster, func(ctx context.Context) (*standin.DomainVerification, func(), error) {
		return standin.StartDomainVerification(ctx, deps)
	})
}

// IstioCSRHoldAgent holds back (hold) or releases the agent's Deployment and
// istiod's Certificate of the IstioCSR in namespace ns: while held, the
// stand-in's kube controllers and cert-manager leave them unavailable and
// not Ready, as a crash-looping agent or a slow issuer would.
func IstioCSRHoldAgent(cluster, ns string, hold bool) {
	if hold {
		istioCSRHeld.Store(cluster+"/"+ns, true)
	} else {
		istioCSRHeld.Delete(cluster + "/" + ns)
	}
}

// ResetIstioCSRs deletes every IstioCSR of cluster and waits until they are
// gone (the stand-in removes the finalizer), so a test of the single-instance
// rule starts with none. IstioCSR tests run one at a time (not in
// parallel): the operator serves one IstioCSR per cluster.
func ResetIstioCSRs(t *testing.T, cluster string) {
	t.Helper()
	ri := Dynamic(t, cluster).Resource(kube.IstioCSR.GVR())
	ctx := context.Background()
	list, err := ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("acctest: %s: list IstioCSRs: %v", cluster, err)
	}
	for _, item := range list.Items {
		if err := ri.Namespace(item.GetNamespace()).Delete(ctx, item.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("acctest: %s: delete IstioCSR %s/%s: %v", cluster, item.GetNamespace(), item.GetName(), err)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		list, err := ri.List(ctx, metav1.ListOptions{})
		if err == nil && len(list.Items) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("acctest: %s: IstioCSRs still exist 30s after delete (err %v)", cluster, err)
		}
	}
}

// CheckIstioCSRGone is a CheckDestroy asking cluster's API server that the
// IstioCSR of namespace ns (the operator serves only "default") is gone, for
// the IstioCSR tests of every package.
func CheckIstioCSRGone(t *testing.T, cluster, ns string) resource.TestCheckFunc {
	return CheckGone(t, cluster, kube.IstioCSR.GVR(), ns, "default")
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
		time.Sleep(standin.ZTWIMTick)
	}
}

// runningZTWIMStandIn is the stand-in ZTWIMStandIn started on c; caller
// names the helper that needs it when it is not running.
func runningZTWIMStandIn(t *testing.T, c *harness.Cluster, caller string) *standin.ZTWIM {
	t.Helper()
	s, ok := ztwimStandIns.started(c.Name)
	if !ok {
		t.Fatalf("acctest: %s on %s: the ZTWIM stand-in is not running there", caller, c.Name)
	}
	return s
}

// ZTWIMRenders returns every server.conf the stand-in on c rendered since
// since, oldest first (standin.ZTWIM.Renders).
func ZTWIMRenders(t *testing.T, c *harness.Cluster, since time.Time) []standin.ZTWIMRender {
	t.Helper()
	s := runningZTWIMStandIn(t, c, "ZTWIMRenders")
	var out []standin.ZTWIMRender
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
