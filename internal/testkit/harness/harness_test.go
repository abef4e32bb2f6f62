package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// startLab starts a lab for one test and stops it when the test ends. A lab
// that cannot start fails the test: these tests never skip.
func startLab(t *testing.T, opts Options) *Lab {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	lab, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("starting lab %v: %v", opts.Names, err)
	}
	t.Logf("started %d cluster(s) %v in %v (CRDs: %v)", len(lab.Clusters), opts.Names, time.Since(start).Round(time.Millisecond), !opts.SkipCRDs)
	t.Cleanup(func() {
		start := time.Now()
		if err := lab.Stop(); err != nil {
			t.Errorf("stopping lab: %v", err)
		}
		t.Logf("stopped lab in %v", time.Since(start).Round(time.Millisecond))
	})
	return lab
}

func clientset(t *testing.T, c *Cluster) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestAccLabStartsTwoClusters(t *testing.T) {
	lab := startLab(t, Options{Names: []string{"east", "west"}, SkipCRDs: true})
	ctx := context.Background()
	east, west := lab.Cluster("east"), lab.Cluster("west")
	if east == nil || west == nil || lab.Cluster("north") != nil {
		t.Fatalf("Cluster(name) lookup is wrong: east=%v west=%v", east, west)
	}
	if east.Host == west.Host || east.EtcdURL == west.EtcdURL || east.Token == west.Token {
		t.Fatalf("clusters share an endpoint or token: %s/%s %s/%s", east.Host, west.Host, east.EtcdURL, west.EtcdURL)
	}
	for _, c := range lab.Clusters {
		if err := c.Ready(ctx); err != nil {
			t.Fatalf("cluster %s: /readyz: %v", c.Name, err)
		}
		t.Logf("cluster %s: %s, etcd pid %d RSS %d MiB, kube-apiserver pid %d RSS %d MiB", c.Name, c.Host,
			c.EtcdPID, procRSS(c.EtcdPID)>>20, c.APIServerPID, procRSS(c.APIServerPID)>>20)
	}

	// Independent: an object created in east is absent from west.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "only-in-east", Namespace: "default"}, Data: map[string]string{"k": "v"}}
	if _, err := clientset(t, east).CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ConfigMap in east: %v", err)
	}
	if _, err := clientset(t, east).CoreV1().ConfigMaps("default").Get(ctx, cm.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("get ConfigMap in east: %v", err)
	}
	if _, err := clientset(t, west).CoreV1().ConfigMaps("default").Get(ctx, cm.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get ConfigMap in west: want NotFound, got %v", err)
	}

	// The viewer is authenticated but has no grants.
	viewer, err := kubernetes.NewForConfig(east.ViewerRESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := viewer.CoreV1().ConfigMaps("default").Get(ctx, cm.Name, metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("viewer get ConfigMap: want Forbidden, got %v", err)
	}

	// Each cluster's kubeconfig works, with a context named after it, and the
	// merged kubeconfig has both contexts.
	merged := filepath.Join(lab.Dir, "kubeconfig")
	if err := lab.WriteKubeconfig(merged); err != nil {
		t.Fatal(err)
	}
	for _, c := range lab.Clusters {
		for _, path := range []string{c.Kubeconfig, merged} {
			cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
				&clientcmd.ClientConfigLoadingRules{ExplicitPath: path},
				&clientcmd.ConfigOverrides{CurrentContext: c.Name}).ClientConfig()
			if err != nil {
				t.Fatalf("kubeconfig %s context %s: %v", path, c.Name, err)
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = cs.CoreV1().ConfigMaps("default").Get(ctx, cm.Name, metav1.GetOptions{})
			if want := c.Name == "east"; want != (err == nil) {
				t.Fatalf("kubeconfig %s context %s: get ConfigMap: %v", path, c.Name, err)
			}
		}
	}

	// Stop leaves no process behind.
	var pids []int
	for _, c := range lab.Clusters {
		pids = append(pids, c.EtcdPID, c.APIServerPID)
	}
	start := time.Now()
	if err := lab.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	t.Logf("Stop took %v", time.Since(start).Round(time.Millisecond))
	for _, pid := range pids {
		if procAlive(pid) {
			t.Errorf("pid %d (%v) still running after Stop", pid, procArgs(pid))
		}
	}
	if err := east.Ready(ctx); err == nil {
		t.Errorf("east still answers /readyz after Stop")
	}
}

func TestAccAPIServerRestart(t *testing.T) {
	lab := startLab(t, Options{Names: []string{"solo"}, SkipCRDs: true, AuditLog: true})
	ctx := context.Background()
	c := lab.Clusters[0]
	cs := clientset(t, c)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "survives", Namespace: "default"}, Data: map[string]string{"k": "v"}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ConfigMap: %v", err)
	}

	// SkipCRDs: the spire.spiffe.io resources are not served.
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	cftd := kube.ClusterFederatedTrustDomain.GVR()
	if _, err := dyn.Resource(cftd).List(ctx, metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("LIST %v on a bare cluster: want NotFound, got %v", cftd, err)
	}

	// The audit log records requests at Metadata level.
	audit, err := os.ReadFile(c.AuditLogPath())
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	if !strings.Contains(string(audit), `"level":"Metadata"`) || !strings.Contains(string(audit), `"resource":"configmaps"`) {
		t.Fatalf("audit log %s has no Metadata entry for configmaps", c.AuditLogPath())
	}

	oldPID, etcdPID := c.APIServerPID, c.EtcdPID
	if err := c.StopAPIServer(); err != nil {
		t.Fatalf("StopAPIServer: %v", err)
	}
	if procAlive(oldPID) {
		t.Fatalf("kube-apiserver pid %d still running after StopAPIServer", oldPID)
	}
	if err := c.Ready(ctx); err == nil {
		t.Fatalf("/readyz answers while the apiserver is stopped")
	}
	if !procAlive(etcdPID) {
		t.Fatalf("etcd died with the apiserver")
	}
	start := time.Now()
	if err := c.StartAPIServer(ctx); err != nil {
		t.Fatalf("StartAPIServer: %v", err)
	}
	t.Logf("apiserver restarted in %v", time.Since(start).Round(time.Millisecond))
	if c.APIServerPID == oldPID {
		t.Fatalf("APIServerPID not updated after restart")
	}
	if err := c.StartAPIServer(ctx); err == nil {
		t.Fatalf("StartAPIServer on a running apiserver: want error")
	}
	if err := c.FreezeAPIServer(); err != nil {
		t.Fatalf("FreezeAPIServer: %v", err)
	}
	frozen, cancelFrozen := context.WithTimeout(ctx, time.Second)
	err = c.Ready(frozen)
	cancelFrozen()
	if thawErr := c.ThawAPIServer(); thawErr != nil {
		t.Fatalf("ThawAPIServer: %v", thawErr)
	}
	if err == nil {
		t.Fatalf("/readyz answered while the apiserver was frozen")
	}
	if err := c.Ready(ctx); err != nil {
		t.Fatalf("/readyz after ThawAPIServer: %v", err)
	}
	got, err := clientset(t, c).CoreV1().ConfigMaps("default").Get(ctx, cm.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ConfigMap after restart: %v", err)
	}
	if got.Data["k"] != "v" {
		t.Fatalf("ConfigMap data after restart: %v", got.Data)
	}
}

func TestAccStartFailureNamesComponent(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lab, err := Start(ctx, Options{Names: []string{"broken"}, Dir: dir, SkipCRDs: true,
		APIServerFlags: []string{"--no-such-flag-for-the-harness-test"}})
	if err == nil {
		_ = lab.Stop()
		t.Fatalf("Start with an unknown apiserver flag succeeded")
	}
	msg := err.Error()
	for _, want := range []string{"cluster broken", "kube-apiserver", "no-such-flag-for-the-harness-test", "kube-apiserver.log"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not mention %q:\n%s", want, msg)
		}
	}
	// etcd was started first; it must have been stopped.
	if etcdPIDs := pidsOf("etcd", dir); len(etcdPIDs) > 0 {
		t.Errorf("etcd still running after a failed Start: %v", etcdPIDs)
	}
}

func TestAccDetachedLabStopFromState(t *testing.T) {
	dir := t.TempDir()
	lab := startLab(t, Options{Names: []string{"demo"}, Dir: dir, SkipCRDs: true, Detach: true})
	state := filepath.Join(dir, "lab.json")
	if err := lab.WriteState(state); err != nil {
		t.Fatal(err)
	}
	st, err := ReadState(state)
	if err != nil {
		t.Fatal(err)
	}
	cs, ok := st.Clusters["demo"]
	if !ok || cs.Host != lab.Clusters[0].Host || cs.Context != "demo" || cs.APIServerPID != lab.Clusters[0].APIServerPID {
		t.Fatalf("state does not match the lab: %+v", st)
	}
	ctx := context.Background()
	if err := cs.Probe(ctx); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	// A foreign PID recorded in the state is never signalled.
	foreign := st
	fc := cs
	fc.Name, fc.APIServerPID, fc.EtcdPID = "foreign", os.Getpid(), os.Getpid()
	foreign.Clusters["foreign"] = fc
	data, _ := json.Marshal(foreign)
	if err := os.WriteFile(state, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := StopFromState(state); err != nil {
		t.Fatalf("StopFromState: %v", err)
	}
	if procAlive(cs.EtcdPID) || procAlive(cs.APIServerPID) {
		t.Fatalf("processes still running after StopFromState")
	}
	if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("state file not removed: %v", err)
	}
	if err := cs.Probe(ctx); err == nil {
		t.Fatalf("Probe succeeds after StopFromState")
	}
}

// pidsOf lists live processes running binary component with an argument under dir.
func pidsOf(component, dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		if isOurProcess(pid, component, dir) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// fixture is one file of crds/testdata/<crd>/ (format: crds/testdata/README.md).
type fixture struct {
	kind   string // valid, invalid, update-valid, update-invalid, status-valid, status-invalid
	reason string
	expect string
	docs   []*unstructured.Unstructured
}

var fixtureKinds = []struct {
	prefix string
	docs   int
}{
	// Longest prefixes first.
	{"update-invalid-", 2}, {"update-valid-", 2},
	{"status-invalid-", 2}, {"status-valid-", 2},
	{"invalid-", 1}, {"valid-", 1},
}

func readFixture(path string) (*fixture, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f := &fixture{}
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	want := 0
	for _, k := range fixtureKinds {
		kind := strings.TrimSuffix(k.prefix, "-")
		if base == kind || strings.HasPrefix(base, k.prefix) {
			f.kind, want = kind, k.docs
			break
		}
	}
	if f.kind == "" {
		return nil, fmt.Errorf("file name has none of the prefixes of testdata/README.md")
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "#") {
			if line == "" {
				continue
			}
			break
		}
		line = strings.TrimSpace(strings.TrimPrefix(line, "#"))
		if v, ok := strings.CutPrefix(line, "reason:"); ok {
			f.reason = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "expect:"); ok {
			f.expect = strings.TrimSpace(v)
		}
	}
	objs, err := SplitYAML(data)
	if err != nil {
		return nil, err
	}
	if len(objs) != want {
		return nil, fmt.Errorf("%s fixture has %d documents, want %d", f.kind, len(objs), want)
	}
	for _, o := range objs {
		f.docs = append(f.docs, &unstructured.Unstructured{Object: o})
	}
	if strings.Contains(f.kind, "invalid") && f.expect == "" {
		return nil, fmt.Errorf("%s fixture has no '# expect:' header", f.kind)
	}
	return f, nil
}

func TestAccCRDsAcceptValidAndRejectInvalid(t *testing.T) {
	const testdata = "crds/testdata"
	entries, err := os.ReadDir(testdata)
	if err != nil {
		t.Fatalf("reading %s: %v", testdata, err)
	}
	var crdDirs []string
	for _, e := range entries {
		if e.IsDir() {
			crdDirs = append(crdDirs, e.Name())
		}
	}
	if len(crdDirs) == 0 {
		t.Fatalf("no CRD directories under %s", testdata)
	}

	lab := startLab(t, Options{Names: []string{"crds"}})
	c := lab.Clusters[0]
	ctx := context.Background()
	cfg := c.RESTConfig()
	cfg.QPS, cfg.Burst = 2000, 4000 // ~6 requests per fixture, hundreds of fixtures
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	// Every CRD from CRDDocuments is installed and served, including the
	// real spire-controller-manager ones.
	docs, err := CRDDocuments()
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range docs {
		objs, err := SplitYAML(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			name := (&unstructured.Unstructured{Object: o}).GetName()
			if _, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{}); err != nil {
				t.Errorf("CRD %s not installed: %v", name, err)
			}
		}
	}
	cftd := kube.ClusterFederatedTrustDomain.GVR()
	if _, err := dyn.Resource(cftd).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("LIST %v: %v", cftd, err)
	}

	for _, crdName := range crdDirs {
		t.Run(crdName, func(t *testing.T) {
			crd, err := dyn.Resource(crdGVR).Get(ctx, crdName, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("testdata/%s names no installed CRD: %v", crdName, err)
			}
			group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
			plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
			scope, _, _ := unstructured.NestedString(crd.Object, "spec", "scope")
			files, err := filepath.Glob(filepath.Join(testdata, crdName, "*.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			sort.Strings(files)
			if len(files) == 0 {
				t.Fatalf("no fixtures in %s", filepath.Join(testdata, crdName))
			}
			for _, file := range files {
				t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
					f, err := readFixture(file)
					if err != nil {
						t.Fatalf("%s: %v", file, err)
					}
					checkFixture(t, ctx, dyn, f, group, plural, scope == "Namespaced")
				})
			}
		})
	}
}

func checkFixture(t *testing.T, ctx context.Context, dyn dynamic.Interface, f *fixture, group, plural string, namespaced bool) {
	first := f.docs[0]
	gv, err := schema.ParseGroupVersion(first.GetAPIVersion())
	if err != nil {
		t.Fatalf("apiVersion %q: %v", first.GetAPIVersion(), err)
	}
	if gv.Group != group {
		t.Fatalf("apiVersion %q is not in the CRD's group %s", first.GetAPIVersion(), group)
	}
	gvr := gv.WithResource(plural)
	var ri dynamic.ResourceInterface = dyn.Resource(gvr)
	if namespaced {
		ns := first.GetNamespace()
		if ns == "" {
			ns = "default"
			for _, d := range f.docs {
				d.SetNamespace(ns)
			}
		}
		ensureNamespace(t, ctx, dyn, ns)
		ri = dyn.Resource(gvr).Namespace(ns)
	}
	name := first.GetName()
	deleteObject(t, ctx, ri, name)
	t.Cleanup(func() { deleteObject(t, ctx, ri, name) })

	created, err := createWithRetry(ctx, ri, first)
	if f.kind == "invalid" {
		expectInvalid(t, "create", err, f)
		return
	}
	if err != nil {
		t.Fatalf("create: want 201, got: %v", err)
	}
	if f.kind == "valid" {
		return
	}
	second := f.docs[1]
	second.SetResourceVersion(created.GetResourceVersion())
	switch f.kind {
	case "update-valid":
		if _, err := ri.Update(ctx, second, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update: want 200, got: %v", err)
		}
	case "update-invalid":
		_, err := ri.Update(ctx, second, metav1.UpdateOptions{})
		expectInvalid(t, "update", err, f)
	case "status-valid":
		if _, err := ri.UpdateStatus(ctx, second, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update status: want 200, got: %v", err)
		}
		got, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := normalizeJSON(t, second.Object["status"])
		have := normalizeJSON(t, got.Object["status"])
		if !reflect.DeepEqual(want, have) {
			w, _ := json.Marshal(want)
			h, _ := json.Marshal(have)
			t.Fatalf("status after update differs (pruned or defaulted):\nwant %s\ngot  %s", w, h)
		}
	case "status-invalid":
		_, err := ri.UpdateStatus(ctx, second, metav1.UpdateOptions{})
		expectInvalid(t, "update status", err, f)
	}
}

func expectInvalid(t *testing.T, op string, err error, f *fixture) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: accepted, want 422 (reason: %s)", op, f.reason)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Code != 422 {
		t.Fatalf("%s: want 422 (reason: %s), got: %v", op, f.reason, err)
	}
	if !strings.Contains(err.Error(), f.expect) {
		t.Fatalf("%s: rejected, but the message lacks %q (reason: %s):\n%v", op, f.expect, f.reason, err)
	}
}

// createWithRetry retries a create that hits the short window in which a new
// CRD's resource answers 404.
func createWithRetry(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		created, err := ri.Create(ctx, obj.DeepCopy(), metav1.CreateOptions{})
		if !apierrors.IsNotFound(err) || time.Now().After(deadline) {
			return created, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func deleteObject(t *testing.T, ctx context.Context, ri dynamic.ResourceInterface, name string) {
	t.Helper()
	err := ri.Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("delete %s: %v", name, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := ri.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still present 10s after delete: %v", name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func ensureNamespace(t *testing.T, ctx context.Context, dyn dynamic.Interface, ns string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns},
	}}
	_, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
}

func normalizeJSON(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
