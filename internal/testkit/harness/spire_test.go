package harness

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/federation"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spirefacts"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
)

var cftdResource = kube.ClusterFederatedTrustDomain.GVR()

func startSpire(t *testing.T, c *Cluster, opts SpireOptions) *Spire {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	s, err := StartSpire(ctx, c, opts)
	if err != nil {
		t.Fatalf("StartSpire %s: %v", opts.TrustDomain, err)
	}
	t.Logf("SPIRE %s: started in %v, bundle endpoint %s, socket %s, pid %d RSS %d MiB", s.TrustDomain,
		time.Since(start).Round(time.Millisecond), s.BundleEndpointURL, s.SocketPath, s.ServerPID(), procRSS(s.ServerPID())>>20)
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stopping SPIRE %s: %v", s.TrustDomain, err)
		}
	})
	return s
}

// parseBundle reads SPIFFE bundle JSON for td and renders it normalised, so
// two reads compare by content.
func parseBundle(t *testing.T, td string, data []byte) (*spiffebundle.Bundle, string) {
	t.Helper()
	b, err := trustbundle.Parse(spiffeid.RequireTrustDomainFromString(td), data)
	if err != nil {
		t.Fatalf("bundle of %s: %v\n%s", td, err, data)
	}
	norm, err := trustbundle.Normalize(b)
	if err != nil {
		t.Fatal(err)
	}
	return b, norm
}

// execSPDY runs a command in a pod through the API server with client-go's
// SPDY executor, as `kubectl exec` did before WebSockets.
func execSPDY(ctx context.Context, c *Cluster, namespace, pod, container string, command ...string) (string, string, error) {
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		return "", "", err
	}
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: command, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	exec, err := remotecommand.NewSPDYExecutor(c.RESTConfig(), "POST", req.URL())
	if err != nil {
		return "", "", err
	}
	var stdout, stderr bytes.Buffer
	err = exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
	return stdout.String(), stderr.String(), err
}

func createCFTD(ctx context.Context, t *testing.T, dyn dynamic.Interface, peer *Spire, className string) {
	t.Helper()
	bundle, err := peer.BundleShow(ctx, "spiffe")
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "spire.spiffe.io/v1alpha1",
		"kind":       "ClusterFederatedTrustDomain",
		"metadata":   map[string]any{"name": peer.TrustDomain},
		"spec": map[string]any{
			"trustDomain":       peer.TrustDomain,
			"bundleEndpointURL": peer.BundleEndpointURL,
			"bundleEndpointProfile": map[string]any{
				"type": "https_spiffe", "endpointSPIFFEID": peer.EndpointSPIFFEID,
			},
			"trustDomainBundle": string(bundle),
			"className":         className,
		},
	}}
	if _, err := dyn.Resource(cftdResource).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ClusterFederatedTrustDomain %s: %v", peer.TrustDomain, err)
	}
}

// waitFederated polls the SPIRE server itself until it holds the bundles of
// want.
func waitFederated(ctx context.Context, t *testing.T, s *Spire, want ...string) {
	t.Helper()
	start := time.Now()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, err := s.FederatedTrustDomains(ctx)
		if err == nil && slices.Equal(got, want) {
			t.Logf("SPIRE %s holds %v after %v", s.TrustDomain, got, time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("SPIRE %s: federated trust domains = %v (%v), want %v after 60s; last lines of %s:\n%s",
				s.TrustDomain, got, err, want, s.ControllerManagerLogPath(), fileTail(s.ControllerManagerLogPath(), 20))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestAccSpireFederatesTwoClusters(t *testing.T) {
	lab := startLab(t, Options{Names: []string{"east", "west"}})
	ctx := context.Background()
	east := startSpire(t, lab.Cluster("east"), SpireOptions{TrustDomain: "east.zt.test", ControllerManager: true})
	west := startSpire(t, lab.Cluster("west"), SpireOptions{TrustDomain: "west.zt.test", ControllerManager: true})

	// The bundle ConfigMap holds what the server says its X.509 authorities are.
	eastJSON, err := east.BundleShow(ctx, "spiffe")
	if err != nil {
		t.Fatal(err)
	}
	eastBundle, eastNorm := parseBundle(t, east.TrustDomain, eastJSON)
	cm, err := clientset(t, east.Cluster).CoreV1().ConfigMaps(east.Namespace).Get(ctx, east.BundleConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fromCM, err := trustbundle.ParsePEM(spiffeid.RequireTrustDomainFromString(east.TrustDomain), []byte(cm.Data["bundle.crt"]))
	if err != nil {
		t.Fatalf("ConfigMap bundle.crt: %v", err)
	}
	if got, want := trustbundle.X509AuthoritiesPEM(fromCM), trustbundle.X509AuthoritiesPEM(eastBundle); got != want {
		t.Fatalf("ConfigMap bundle.crt differs from `bundle show`:\n%s\nwant\n%s", got, want)
	}

	// The ZeroTrustWorkloadIdentityManager describes the installation.
	ztwim, err := dynamicClient(t, east.Cluster).Resource(ZTWIMResource).Get(ctx, "cluster", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]string{"trustDomain": "east.zt.test", "clusterName": "east", "bundleConfigMap": "spire-bundle"} {
		if got, _, _ := unstructured.NestedString(ztwim.Object, "spec", field); got != want {
			t.Errorf("ZeroTrustWorkloadIdentityManager spec.%s = %q, want %q", field, got, want)
		}
	}

	// The SpireServer, written as the operator's administrator would, in the
	// released CRD's terms.
	checkSpireServerObject(ctx, t, east)

	// Pod exec through the real API server reaches the real binary.
	stdout, stderr, err := execSPDY(ctx, east.Cluster, east.Namespace, east.PodName, east.Container, "spire-server", "bundle", "show", "-format", "spiffe")
	if err != nil {
		t.Fatalf("exec bundle show: %v (stderr %q)", err, stderr)
	}
	if _, norm := parseBundle(t, east.TrustDomain, []byte(stdout)); norm != eastNorm {
		t.Fatalf("bundle through exec differs from the local CLI:\n%s\nwant\n%s", norm, eastNorm)
	}
	log, err := os.ReadFile(east.ExecLogPath())
	if err != nil || !strings.Contains(string(log), `"bundle" "show"`) {
		t.Fatalf("the exec endpoint did not record the request (%v):\n%s", err, log)
	}
	// A command the container lacks fails with the shell's exit code.
	_, stderr, err = execSPDY(ctx, east.Cluster, east.Namespace, east.PodName, east.Container, "sh", "-c", "id")
	var exitErr utilexec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitStatus() != 127 || !strings.Contains(stderr, "not found") {
		t.Fatalf("exec of a missing command: err %v stderr %q, want exit code 127", err, stderr)
	}
	// A failing spire-server command passes its exit code through.
	_, _, err = execSPDY(ctx, east.Cluster, east.Namespace, east.PodName, east.Container, "spire-server", "bundle", "show", "-format", "nope")
	if !errors.As(err, &exitErr) || exitErr.ExitStatus() == 0 {
		t.Fatalf("exec of a failing command: err %v, want a non-zero exit code", err)
	}

	// The bundle endpoint authenticates as the server's SPIFFE ID.
	fetched, err := federation.FetchBundle(ctx, spiffeid.RequireTrustDomainFromString(east.TrustDomain), east.BundleEndpointURL,
		federation.WithSPIFFEAuth(eastBundle, spiffeid.RequireFromString(east.EndpointSPIFFEID)))
	if err != nil {
		t.Fatalf("FetchBundle https_spiffe: %v", err)
	}
	if !slices.EqualFunc(fetched.X509Authorities(), eastBundle.X509Authorities(), (*x509.Certificate).Equal) {
		t.Fatalf("bundle endpoint serves other X.509 authorities than `bundle show`")
	}
	if _, err := federation.FetchBundle(ctx, spiffeid.RequireTrustDomainFromString(east.TrustDomain), east.BundleEndpointURL,
		federation.WithSPIFFEAuth(eastBundle, spiffeid.RequireFromString("spiffe://east.zt.test/not/the/server"))); err == nil {
		t.Fatalf("FetchBundle with a wrong endpoint SPIFFE ID succeeded")
	}

	// spire-controller-manager turns ClusterFederatedTrustDomains into
	// federation relationships, both ways.
	for _, tc := range []struct{ local, peer *Spire }{{east, west}, {west, east}} {
		if got, err := tc.local.FederatedTrustDomains(ctx); err != nil || len(got) != 0 {
			t.Fatalf("SPIRE %s holds %v (%v) before any ClusterFederatedTrustDomain", tc.local.TrustDomain, got, err)
		}
		createCFTD(ctx, t, dynamicClient(t, tc.local.Cluster), tc.peer, DefaultSpireClassName)
	}
	waitFederated(ctx, t, east, "west.zt.test")
	waitFederated(ctx, t, west, "east.zt.test")

	// A CA rotation changes the bundle: a new authority is added, and the
	// k8sbundle notifier publishes it to the ConfigMap.
	before := len(eastBundle.X509Authorities())
	if err := east.RotateX509CA(ctx); err != nil {
		t.Fatal(err)
	}
	rotatedJSON, err := east.BundleShow(ctx, "spiffe")
	if err != nil {
		t.Fatal(err)
	}
	rotated, rotatedNorm := parseBundle(t, east.TrustDomain, rotatedJSON)
	if rotatedNorm == eastNorm || len(rotated.X509Authorities()) != before+1 {
		t.Fatalf("after RotateX509CA the bundle has %d X.509 authorities (before %d); changed: %v",
			len(rotated.X509Authorities()), before, rotatedNorm != eastNorm)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		cm, err := clientset(t, east.Cluster).CoreV1().ConfigMaps(east.Namespace).Get(ctx, east.BundleConfigMap, metav1.GetOptions{})
		if err == nil {
			if b, err := trustbundle.ParsePEM(rotated.TrustDomain(), []byte(cm.Data["bundle.crt"])); err == nil &&
				trustbundle.X509AuthoritiesPEM(b) == trustbundle.X509AuthoritiesPEM(rotated) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("ConfigMap %s/%s did not get the rotated CA within 30s", east.Namespace, east.BundleConfigMap)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Stop leaves no process behind.
	pid := east.ServerPID()
	if err := east.Stop(); err != nil {
		t.Fatal(err)
	}
	if procAlive(pid) {
		t.Fatalf("spire-server pid %d still running after Stop", pid)
	}
	if _, err := os.Stat(east.SocketPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket %s left behind after Stop: %v", east.SocketPath, err)
	}
}

// checkSpireServerObject checks the SpireServer `cluster` StartSpire wrote.
func checkSpireServerObject(ctx context.Context, t *testing.T, s *Spire) {
	t.Helper()
	obj, err := dynamicClient(t, s.Cluster).Resource(SpireServerResource).Get(ctx, "cluster", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("SpireServer cluster: %v", err)
	}
	// The released CRD: no trust domain, no endpoint address or port (the
	// operator publishes the endpoint through a Route); the defaults filled in.
	endpoint, _, _ := unstructured.NestedMap(obj.Object, "spec", "federation", "bundleEndpoint")
	managedRoute, _, _ := unstructured.NestedString(obj.Object, "spec", "federation", "managedRoute")
	if !reflect.DeepEqual(endpoint, map[string]any{"profile": "https_spiffe", "refreshHint": int64(300)}) || managedRoute != "false" {
		t.Errorf("SpireServer spec.federation = %v (managedRoute %q), want bundleEndpoint {profile https_spiffe, refreshHint 300}, managedRoute \"false\"", endpoint, managedRoute)
	}
	var managers []string
	for _, m := range obj.GetManagedFields() {
		managers = append(managers, m.Manager)
	}
	if !slices.Equal(managers, []string{OperatorFieldManager}) {
		t.Errorf("SpireServer managed by %v, want only %q", managers, OperatorFieldManager)
	}
}

// TestAccSpireDetachedStopFromState starts SPIRE as `ztlab up --spire` does:
// processes in sessions of their own, no exec endpoint, recorded in the
// lab's state, and stopped from that state by another process's code path.
func TestAccSpireDetachedStopFromState(t *testing.T) {
	dir := t.TempDir()
	lab := startLab(t, Options{Names: []string{"demo"}, Dir: dir})
	ctx := context.Background()
	s := startSpire(t, lab.Clusters[0], SpireOptions{TrustDomain: "demo.zt.test", ControllerManager: true, Detach: true})
	checkSpireServerObject(ctx, t, s)
	if s.exec != nil {
		t.Errorf("a detached SPIRE runs an exec endpoint in this process")
	}
	if _, err := clientset(t, s.Cluster).CoreV1().Pods(s.Namespace).Get(ctx, SpirePodName, metav1.GetOptions{}); err == nil {
		t.Errorf("a detached SPIRE registered Pod %s/%s, which no exec endpoint serves", s.Namespace, SpirePodName)
	}
	mySession := procSession(t, os.Getpid())
	for _, pid := range []int{s.ServerPID(), s.ControllerManagerPID()} {
		if sid := procSession(t, pid); sid == mySession || sid != pid {
			t.Errorf("pid %d: session %d, want a session of its own (ours is %d)", pid, sid, mySession)
		}
	}

	state := filepath.Join(dir, "lab.json")
	if err := lab.WriteState(state, s); err != nil {
		t.Fatal(err)
	}
	st, err := ReadState(state)
	if err != nil {
		t.Fatal(err)
	}
	ss := st.Clusters["demo"].Spire
	if ss == nil || ss.ServerPID != s.ServerPID() || ss.ControllerManagerPID != s.ControllerManagerPID() ||
		ss.SocketPath != s.SocketPath || ss.BundleEndpointURL != s.BundleEndpointURL || ss.TrustDomain != "demo.zt.test" {
		t.Fatalf("state records SPIRE as %+v", ss)
	}
	if err := ss.Probe(); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	// What `ztlab show` asks: the server itself, through the recorded socket.
	if tds, err := ss.FederatedTrustDomains(ctx); err != nil || len(tds) != 0 {
		t.Fatalf("FederatedTrustDomains from the state = %v (%v), want none", tds, err)
	}

	if err := StopFromState(state); err != nil {
		t.Fatalf("StopFromState: %v", err)
	}
	for _, pid := range []int{ss.ServerPID, ss.ControllerManagerPID, st.Clusters["demo"].APIServerPID, st.Clusters["demo"].EtcdPID} {
		if procAlive(pid) {
			t.Errorf("pid %d still running after StopFromState", pid)
		}
	}
	if _, err := os.Stat(ss.SocketDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket directory %s left behind: %v", ss.SocketDir, err)
	}
	if err := ss.Probe(); err == nil {
		t.Errorf("Probe succeeds after StopFromState")
	}
}

// procSession is the session ID of pid, from /proc/<pid>/stat: after
// "(comm)" come state, ppid, pgrp and session.
func procSession(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(fields) < 4 {
		t.Fatalf("/proc/%d/stat: %q", pid, data)
	}
	sid, err := strconv.Atoi(fields[3])
	if err != nil {
		t.Fatal(err)
	}
	return sid
}

func TestAccSpireStandaloneWebProfileRestart(t *testing.T) {
	ctx := context.Background()
	s := startSpire(t, nil, SpireOptions{TrustDomain: "web.zt.test", Standalone: true, WebProfile: true})
	if s.Namespace != "" || s.PodName != "" || s.BundleConfigMap != "" {
		t.Fatalf("a standalone server claims cluster objects: %+v", s)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.WebCACertPEM) {
		t.Fatalf("WebCACertPEM holds no certificate")
	}
	td := spiffeid.RequireTrustDomainFromString(s.TrustDomain)
	fetch := func() (string, error) {
		b, err := federation.FetchBundle(ctx, td, s.BundleEndpointURL, federation.WithWebPKIRoots(pool))
		if err != nil {
			return "", err
		}
		return trustbundle.X509AuthoritiesPEM(b), nil
	}
	first, err := fetch()
	if err != nil {
		t.Fatalf("FetchBundle https_web with the test CA: %v", err)
	}
	// System roots do not know the test CA.
	if _, err := federation.FetchBundle(ctx, td, s.BundleEndpointURL); err == nil {
		t.Fatalf("FetchBundle https_web with system roots trusted the test CA")
	}

	pid := s.ServerPID()
	if err := s.StopServer(); err != nil {
		t.Fatal(err)
	}
	if procAlive(pid) || s.ServerPID() != 0 {
		t.Fatalf("spire-server pid %d still running after StopServer", pid)
	}
	if _, err := fetch(); err == nil {
		t.Fatalf("bundle endpoint answers while the server is stopped")
	}
	start := time.Now()
	if err := s.StartServer(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted in %v", time.Since(start).Round(time.Millisecond))
	if err := s.StartServer(ctx); err == nil {
		t.Fatalf("StartServer on a running server: want an error")
	}
	again, err := fetch()
	if err != nil {
		t.Fatalf("FetchBundle after restart: %v", err)
	}
	// Same data and keys: the restarted server keeps its CA.
	if again != first {
		t.Fatalf("the X.509 authorities changed across a restart:\n%s\nwant\n%s", again, first)
	}
}

func TestWithSocketPath(t *testing.T) {
	add := withSocketPath("/s.sock")
	for _, tc := range []struct{ in, want []string }{
		{[]string{"bundle", "show", "-format", "spiffe"}, []string{"bundle", "show", "-socketPath", "/s.sock", "-format", "spiffe"}},
		{[]string{"bundle", "list"}, []string{"bundle", "list", "-socketPath", "/s.sock"}},
		{[]string{"bundle", "show", "-socketPath", "/other"}, []string{"bundle", "show", "-socketPath", "/other"}},
		{[]string{"healthcheck", "-socketPath=/other"}, []string{"healthcheck", "-socketPath=/other"}},
		{nil, []string{"-socketPath", "/s.sock"}},
	} {
		if got := add(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("withSocketPath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func dynamicClient(t *testing.T, c *Cluster) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestAccSpireHelmLayout lays a server out as the SPIFFE Helm chart does and
// reads it back as the provider does: what spirefacts finds is what runs,
// the bundle is in the chart's system namespace, written by real SPIRE's
// BundlePublisher as the chart's defaults configure it, and the chart's
// ClusterSPIFFEIDs and ClusterFederatedTrustDomains carry Helm's marks.
func TestAccSpireHelmLayout(t *testing.T) {
	lab := startLab(t, Options{Names: []string{"chart"}})
	ctx := context.Background()
	s := startSpire(t, lab.Cluster("chart"), SpireOptions{TrustDomain: "chart.zt.test", Helm: true,
		HelmDisabledClusterSPIFFEIDs: []string{HelmTestKeysClusterSPIFFEID},
		HelmFederatedTrustDomains: map[string]HelmFederatedTrustDomain{"peer": {
			TrustDomain: "peer.zt.test", BundleEndpointURL: "https://127.0.0.1:1", EndpointSPIFFEID: "spiffe://peer.zt.test/spire/server",
		}},
	})
	if s.Namespace != HelmSpireNamespace || s.ClassName != HelmSpireClassName(HelmSpireNamespace) || s.BundleNamespace != HelmSpireBundleNamespace {
		t.Fatalf("Helm layout: namespace %q, class %q, bundle namespace %q", s.Namespace, s.ClassName, s.BundleNamespace)
	}
	checkPublishedBundle(ctx, t, s)
	dyn := dynamicClient(t, s.Cluster)
	helmOwned := func(obj *unstructured.Unstructured) bool {
		return obj.GetLabels()["app.kubernetes.io/managed-by"] == "Helm" &&
			obj.GetAnnotations()["meta.helm.sh/release-name"] == HelmSpireRelease &&
			obj.GetAnnotations()["meta.helm.sh/release-namespace"] == s.Namespace
	}
	csids := dyn.Resource(schema.GroupVersionResource{Group: "spire.spiffe.io", Version: "v1alpha1", Resource: "clusterspiffeids"})
	def, err := csids.Get(ctx, "spire-server-spire-default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fallback, _, _ := unstructured.NestedBool(def.Object, "spec", "fallback")
	if class, _, _ := unstructured.NestedString(def.Object, "spec", "className"); !helmOwned(def) || !fallback ||
		class != s.ClassName || def.GetLabels()[HelmClassNameLabel] != s.ClassName {
		t.Fatalf("the chart's default ClusterSPIFFEID is not as Helm makes it: %v", def.Object)
	}
	if obj, err := csids.Get(ctx, HelmObjectName(s.Namespace, HelmOIDCDiscoveryClusterSPIFFEID), metav1.GetOptions{}); err != nil || !helmOwned(obj) {
		t.Fatalf("ClusterSPIFFEID %s: %v", HelmOIDCDiscoveryClusterSPIFFEID, err)
	}
	// Disabled in the values: Helm makes no object.
	if _, err := csids.Get(ctx, HelmObjectName(s.Namespace, HelmTestKeysClusterSPIFFEID), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("ClusterSPIFFEID %s disabled in the values: %v", HelmTestKeysClusterSPIFFEID, err)
	}
	ftd, err := dyn.Resource(schema.GroupVersionResource{Group: "spire.spiffe.io", Version: "v1alpha1", Resource: "clusterfederatedtrustdomains"}).
		Get(ctx, "spire-server-spire-peer", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if td, _, _ := unstructured.NestedString(ftd.Object, "spec", "trustDomain"); !helmOwned(ftd) || td != "peer.zt.test" {
		t.Fatalf("the chart's ClusterFederatedTrustDomain is not as Helm makes it: %v", ftd.Object)
	}
	if _, err := dyn.Resource(ZTWIMResource).Get(ctx, "cluster", metav1.GetOptions{}); err == nil {
		t.Fatalf("the Helm layout made a ZeroTrustWorkloadIdentityManager")
	}
	c, err := kube.NewClient(s.Cluster.Name, s.Cluster.RESTConfig(), "harness-test")
	if err != nil {
		t.Fatal(err)
	}
	got, err := spirefacts.Detect(ctx, c, spirefacts.InstallAuto, s.Namespace, spirefacts.OperatorDefaults{})
	if err != nil {
		t.Fatal(err)
	}
	want := spirefacts.Installation{
		Install: spirefacts.InstallHelm, Release: HelmSpireRelease, ReleaseNamespace: s.Namespace,
		TrustDomain: s.TrustDomain, ClusterName: s.Cluster.Name,
		BundleConfigMap: s.BundleConfigMap, BundleNamespace: HelmSpireBundleNamespace, BundleKey: HelmBundleKey,
		FederationProfile: "https_spiffe", BundleEndpointPort: int64(s.bundlePort),
		BundleEndpointURL: "https://" + HelmSpireServerName + "-federation." + s.TrustDomain,
		EndpointSPIFFEID:  s.EndpointSPIFFEID, ClassName: s.ClassName,
		ServerNamespace: s.Namespace, ServerPod: s.PodName, ServerContainer: s.Container,
	}
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("spirefacts.Detect =\n%+v\nwant\n%+v", *got, want)
	}
}
