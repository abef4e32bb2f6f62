package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/podattest"
)

// Pod workloads: ztworkload processes that SPIRE sees as containers of Pods,
// so that their registration entries come from ClusterSPIFFEIDs through the
// real spire-controller-manager, as in a cluster. SCM renders one entry per
// selected Pod (spireentry.renderPodEntry): parent
// spiffe://<td>/spire/agent/k8s_psat/<cluster>/<node UID>, selector
// k8s:pod-uid:<uid>. A K8sPSAT agent has that parent ID; its "k8s" workload
// attestor (internal/testkit/cmd/ztpodattestor, standing in for the kubelet) gives
// the workload's processes the selectors of their Pod.

// ClusterSPIFFEIDResource is spire-controller-manager's ClusterSPIFFEID.
var ClusterSPIFFEIDResource = schema.GroupVersionResource{
	Group: "spire.spiffe.io", Version: "v1alpha1", Resource: "clusterspiffeids",
}

// HarnessFieldManager is the field manager of objects the harness applies as
// a cluster administrator would.
const HarnessFieldManager = "zerotrust-harness"

// podEntryTimeout bounds the wait for spire-controller-manager's entry of a
// new Pod (it reconciles on the Pod event, and every gcInterval).
const podEntryTimeout = 60 * time.Second

// WorkloadPod is the Pod a pod workload runs in.
type WorkloadPod struct {
	Namespace      string            `json:"namespace"`
	Name           string            `json:"name"`
	UID            string            `json:"uid"`
	ServiceAccount string            `json:"service_account"`
	NodeName       string            `json:"node_name"` // the agent's Node
	Labels         map[string]string `json:"labels,omitempty"`
}

// PodWorkloadOptions configures StartPodWorkload.
type PodWorkloadOptions struct {
	// Namespace of the Pod, created when missing. Not one that
	// spire-controller-manager ignores (kube-system, kube-public,
	// spire-system). Required.
	Namespace string
	// Pod names the Pod (a DNS label); also the Workload's Name. Required.
	Pod string
	// ServiceAccount of the Pod. Default "default". Nothing checks that it
	// exists: no admission plugin does here.
	ServiceAccount string
	// Labels of the Pod, for ClusterSPIFFEID pod selectors.
	Labels map[string]string
	// Allow lists the SPIFFE IDs its server accepts as clients, as in
	// WorkloadOptions. Required.
	Allow []string
	// SPIFFEID, when set, is the ID the ClusterSPIFFEID's template gives the
	// Pod; the workload then starts right after its Pod, without waiting for
	// the entry, as a container starts before spire-controller-manager has
	// registered it (its entry may wait for a federation: SPIRE refuses
	// entries federating with a trust domain whose bundle it lacks). It
	// serves once the agent hands it that SVID; EntryID stays empty.
	SPIFFEID string
	// ReadyTimeout bounds the wait for its first SVID. Default 60 s.
	ReadyTimeout time.Duration
	// ServeLater, with SPIFFEID, has StartPodWorkload return once the
	// process runs, without waiting for it to serve: its identity may come
	// later, from a ClusterSPIFFEID not applied yet, and the process waits up
	// to ReadyTimeout for it. Until it serves, Addr is empty and handshakes
	// with it fail, saying so.
	ServeLater bool
	// Detach gives the workload a session of its own, so it outlives this
	// process (the demo lab; Workload.State records it for StopFromState and
	// CheckMTLSState).
	Detach bool
}

// StartPodWorkload creates a Pod on a's Node, waits for the registration
// entry spire-controller-manager makes for it from a ClusterSPIFFEID (which
// must select it: see ApplyClusterSPIFFEID; with opts.SPIFFEID it does not
// wait), then starts ztworkload as a
// process of that Pod (registered with a's pod attestor before it runs) and
// waits until it serves with the entry's SVID. a must be a K8sPSAT agent of
// a server with ControllerManager. The Workload's SPIFFEID is what the
// ClusterSPIFFEID's template made; its EntryID the entry's ID (prefix
// ControllerManagerEntryIDPrefix). Its entry follows the ClusterSPIFFEID:
// SetFederatesWith refuses. On failure it stops the process; the Pod and
// entry stay.
func StartPodWorkload(ctx context.Context, a *SpireAgent, opts PodWorkloadOptions) (*Workload, error) {
	if a == nil || !a.psat {
		return nil, fmt.Errorf("pod workload %s/%s: needs a K8sPSAT agent (SpireAgentOptions.K8sPSAT)", opts.Namespace, opts.Pod)
	}
	for _, n := range []string{opts.Namespace, opts.Pod} {
		if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
			return nil, fmt.Errorf("pod workload %s/%s: %q: %s", opts.Namespace, opts.Pod, n, strings.Join(errs, "; "))
		}
	}
	if len(opts.Allow) == 0 {
		return nil, fmt.Errorf("pod workload %s/%s: Allow names no peer", opts.Namespace, opts.Pod)
	}
	if opts.ServiceAccount == "" {
		opts.ServiceAccount = "default"
	}
	s := a.Server
	w := &Workload{
		Agent: a, Name: opts.Pod, Dir: filepath.Join(a.Dir, "pod-"+opts.Namespace+"-"+opts.Pod),
		Pod: &WorkloadPod{
			Namespace: opts.Namespace, Name: opts.Pod, ServiceAccount: opts.ServiceAccount,
			NodeName: a.NodeName, Labels: opts.Labels,
		},
	}
	fail := func(err error) (*Workload, error) {
		_ = w.Stop()
		return nil, fmt.Errorf("pod workload %s/%s (%s): %w", opts.Namespace, opts.Pod, s.TrustDomain, err)
	}
	if err := os.MkdirAll(w.Dir, 0o755); err != nil {
		return fail(err)
	}
	var err error
	if w.bin, err = workloadBinary(ctx, w.Dir); err != nil {
		return fail(err)
	}
	if err := w.createPod(ctx); err != nil {
		return fail(err)
	}
	if opts.SPIFFEID != "" {
		w.SPIFFEID = opts.SPIFFEID
	} else {
		entry, err := waitPodEntry(ctx, s, a.SPIFFEID, w.Pod.UID)
		if err != nil {
			return fail(err)
		}
		w.SPIFFEID, w.EntryID, w.federatesWith = entry.SPIFFEID, entry.ID, entry.FederatesWith
		w.selectors = entry.Selectors
	}
	w.readyTimeout = opts.ReadyTimeout
	record := w.Pod.record()
	w.attest = func(pid int) (func(), error) { return a.registerPodProcess(pid, record) }
	if opts.ServeLater && opts.SPIFFEID != "" {
		// It serves once a ClusterSPIFFEID gives its Pod that identity.
		if err := w.startServer(opts.Allow, opts.Detach); err != nil {
			return fail(err)
		}
		return w, nil
	}
	if err := w.serve(ctx, opts.Allow, opts.Detach); err != nil {
		return fail(err)
	}
	// The SVID it serves with must be the entry's: not one of another entry
	// that happens to match the process.
	if want := "serving as " + w.SPIFFEID + " "; !strings.Contains(fileTail(w.LogPath(), 5), want) {
		return fail(fmt.Errorf("ztworkload does not serve as %s (the entry %s); its log:\n%s", w.SPIFFEID, w.EntryID, fileTail(w.LogPath(), 5)))
	}
	return w, nil
}

// record is what the pod attestor reports for a process of the Pod.
func (p *WorkloadPod) record() podattest.Record {
	return podattest.Record{
		Namespace: p.Namespace, PodName: p.Name, PodUID: p.UID, ServiceAccount: p.ServiceAccount,
		NodeName: p.NodeName, Labels: p.Labels, ContainerName: podWorkloadContainer, ContainerImage: podWorkloadImage,
	}
}

const (
	podWorkloadContainer = "app"
	podWorkloadImage     = "zerotrust.test/ztworkload:harness" // what the Pod object says it runs; nothing pulls it
)

// createPod creates the namespace when missing and the Pod on the agent's
// Node, reported running, and records the UID the API server gave it.
func (w *Workload) createPod(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(w.Agent.Server.Cluster.RESTConfig())
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.Pod.Namespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", w.Pod.Namespace, err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: w.Pod.Name, Namespace: w.Pod.Namespace, Labels: w.Pod.Labels},
		Spec: corev1.PodSpec{
			NodeName:           w.Pod.NodeName,
			ServiceAccountName: w.Pod.ServiceAccount,
			Containers:         []corev1.Container{{Name: podWorkloadContainer, Image: podWorkloadImage}},
		},
	}
	cur, err := createRunningPod(ctx, cs, pod, "harness://"+w.Pod.Namespace+"/"+w.Pod.Name)
	if err != nil {
		return err
	}
	w.Pod.UID = string(cur.UID)
	return nil
}

// Entry is a registration entry as `spire-server entry show` reports it.
type Entry struct {
	ID            string
	SPIFFEID      string
	ParentID      string
	Selectors     []string // type:value
	FederatesWith []string // trust domain names, as SPIRE stores them
}

// Entries lists the server's registration entries, all of them or those
// with exactly the given selectors (type:value; `entry show -selector`).
func (s *Spire) Entries(ctx context.Context, selectors ...string) ([]Entry, error) {
	args := []string{"entry", "show", "-output", "json"}
	for _, sel := range selectors {
		args = append(args, "-selector", sel)
	}
	out, err := s.CLI(ctx, args...)
	if err != nil {
		return nil, err
	}
	return parseEntries(out)
}

// Entry reads one registration entry by ID.
func (s *Spire) Entry(ctx context.Context, id string) (Entry, error) {
	out, err := s.CLI(ctx, "entry", "show", "-entryID", id, "-output", "json")
	if err != nil {
		return Entry{}, err
	}
	entries, err := parseEntries(out)
	if err == nil && len(entries) != 1 {
		err = fmt.Errorf("spire %s: entry show -entryID %s listed %d entries", s.TrustDomain, id, len(entries))
	}
	if err != nil {
		return Entry{}, err
	}
	return entries[0], nil
}

func parseEntries(out []byte) ([]Entry, error) {
	type id struct {
		TrustDomain string `json:"trust_domain"`
		Path        string `json:"path"`
	}
	var shown struct {
		Entries []struct {
			ID        string `json:"id"`
			SPIFFEID  id     `json:"spiffe_id"`
			ParentID  id     `json:"parent_id"`
			Selectors []struct {
				Type  string `json:"type"`
				Value string `json:"value"`
			} `json:"selectors"`
			FederatesWith []string `json:"federates_with"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(out, &shown); err != nil {
		return nil, fmt.Errorf("entry show: %w in %q", err, out)
	}
	entries := make([]Entry, 0, len(shown.Entries))
	for _, e := range shown.Entries {
		entry := Entry{
			ID:       e.ID,
			SPIFFEID: "spiffe://" + e.SPIFFEID.TrustDomain + e.SPIFFEID.Path,
			ParentID: "spiffe://" + e.ParentID.TrustDomain + e.ParentID.Path,
			// Never nil, so that "federates with nothing" compares equal
			// however SPIRE printed it.
			FederatesWith: append([]string{}, e.FederatesWith...),
		}
		for _, sel := range e.Selectors {
			entry.Selectors = append(entry.Selectors, sel.Type+":"+sel.Value)
		}
		slices.Sort(entry.FederatesWith)
		entries = append(entries, entry)
	}
	return entries, nil
}

// waitPodEntry waits for spire-controller-manager's entry of the Pod with
// uid on the agent parentID.
func waitPodEntry(ctx context.Context, s *Spire, parentID, uid string) (Entry, error) {
	start := time.Now()
	var found Entry
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, podEntryTimeout, true, func(ctx context.Context) (bool, error) {
		found, last = findPodEntry(ctx, s, parentID, uid)
		return last == "", nil
	})
	if err != nil {
		return Entry{}, fmt.Errorf("no registration entry from spire-controller-manager after %v (%v; last: %s): "+
			"does a ClusterSPIFFEID of class %q select the Pod? Last lines of %s:\n%s",
			time.Since(start).Round(time.Millisecond), err, last, s.ClassName, s.ControllerManagerLogPath(),
			fileTail(s.ControllerManagerLogPath(), 15))
	}
	return found, nil
}

// findPodEntry returns spire-controller-manager's entry of the Pod with uid
// on the agent parentID, or why there is none.
func findPodEntry(ctx context.Context, s *Spire, parentID, uid string) (Entry, string) {
	entries, err := s.Entries(ctx, "k8s:pod-uid:"+uid)
	if err != nil {
		return Entry{}, err.Error()
	}
	for _, e := range entries {
		if e.ParentID == parentID && strings.HasPrefix(e.ID, ControllerManagerEntryIDPrefix+".") {
			return e, ""
		}
	}
	return Entry{}, fmt.Sprintf("%d entries with selector k8s:pod-uid:%s, none of spire-controller-manager under %s", len(entries), uid, parentID)
}

// attestFunc registers a process with an agent's pod attestor; release
// forgets it.
type attestFunc func(pid int) (release func(), err error)

// attestGate holds a process back until the harness has registered its PID
// with the pod attestor, then execs the real program in the same process
// (same PID). A container runtime does the same: it puts the new process
// into the container's cgroup before it execs the container's command, so
// the kubelet-based attestor can never see the process outside its pod.
// Without the gate, the workload could ask the agent for its SVID before
// the registration and get no identity. Exit 97: the harness gave up.
const attestGate = `read -r _ || exit 97; exec "$@" </dev/null`

// startAttested starts bin with args like startProc, as a process
// registered with attest.
func startAttested(component, bin string, args []string, logPath string, detach bool, attest attestFunc) (*proc, func(), error) {
	r, wr, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	defer wr.Close()
	p, err := startProcStdin(component, "/bin/sh", append([]string{"-c", attestGate, component + "-gate", bin}, args...), logPath, detach, r)
	r.Close()
	if err != nil {
		return nil, nil, err
	}
	release, err := attest(p.pid())
	if err != nil {
		_ = p.stop(0)
		return nil, nil, err
	}
	if _, err := wr.Write([]byte("run\n")); err != nil {
		_ = p.stop(0)
		release()
		return nil, nil, fmt.Errorf("%s: releasing the gate: %w", component, err)
	}
	return p, release, nil
}

// runAttested runs cmd (attestGate in /bin/sh) as a process registered with
// attest, and waits for it.
func runAttested(cmd *exec.Cmd, attest attestFunc) error {
	gate, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	release, err := attest(cmd.Process.Pid)
	if err != nil {
		gate.Close()
		_ = cmd.Wait()
		return err
	}
	defer release()
	_, err = gate.Write([]byte("run\n"))
	gate.Close()
	return errors.Join(err, cmd.Wait())
}

var podAttestorBuild struct {
	sync.Mutex
	path string
}

// podAttestorBinary builds internal/testkit/cmd/ztpodattestor (once per process) into
// a cache outside the clone, <cache>/harness-bin/<hash of the clone's
// path>/ztpodattestor, where <cache> is scripts/tool.sh's ZT_CACHE_DIR: a
// test's temporary directory goes away while the agent that runs the plugin
// may still be stopping, and each checkout gets its own binary. go build is
// incremental, so a rebuild of unchanged sources is quick.
func podAttestorBinary(ctx context.Context) (string, error) {
	podAttestorBuild.Lock()
	defer podAttestorBuild.Unlock()
	if podAttestorBuild.path != "" {
		return podAttestorBuild.path, nil
	}
	dst, err := buildHarnessCommand(ctx, "ztpodattestor")
	if err != nil {
		return "", err
	}
	podAttestorBuild.path = dst
	return dst, nil
}

// harnessBinDir is where buildHarnessCommand puts binaries (made if
// missing), with the clone's root and the environment to build in.
func harnessBinDir() (dir, root string, env []string, err error) {
	if root, err = RepoRoot(); err != nil {
		return "", "", nil, err
	}
	env = toolEnv()
	sum := sha256.Sum256([]byte(root))
	dir = filepath.Join(harnessCacheDir(env), "harness-bin", hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", nil, err
	}
	return dir, root, env, nil
}

// harnessCacheDir is scripts/tool.sh's cache root in environment env:
// $ZT_CACHE_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-zerotrust.
func harnessCacheDir(env []string) string {
	get := func(key string) string {
		v := ""
		for _, kv := range env {
			if k, val, ok := strings.Cut(kv, "="); ok && k == key {
				v = val // the last one wins, as in exec
			}
		}
		return v
	}
	if d := get("ZT_CACHE_DIR"); d != "" {
		return d
	}
	if d := get("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "terraform-provider-zerotrust")
	}
	return filepath.Join(get("HOME"), ".cache", "terraform-provider-zerotrust")
}

// ClusterSPIFFEIDOptions configures ApplyClusterSPIFFEID.
type ClusterSPIFFEIDOptions struct {
	// Name of the ClusterSPIFFEID (cluster-scoped). Required.
	Name string
	// SPIFFEIDTemplate is spec.spiffeIDTemplate, a Go template over the
	// controller's data, e.g.
	// "spiffe://{{ .TrustDomain }}/ns/{{ .PodMeta.Namespace }}/sa/{{ .PodSpec.ServiceAccountName }}".
	// Required.
	SPIFFEIDTemplate string
	// PodLabels are spec.podSelector.matchLabels; none select every Pod
	// (of namespaces the controller does not ignore).
	PodLabels map[string]string
	// FederatesWith lists trust domain names for spec.federatesWith. SPIRE
	// refuses an entry that federates with a trust domain whose bundle it
	// does not hold, so the controller's entries appear only once it does.
	FederatesWith []string
	// ClassName is spec.className. Default: the server's ClassName.
	ClassName string
}

// ApplyClusterSPIFFEID creates or replaces a ClusterSPIFFEID in s's cluster
// by server-side apply (field manager HarnessFieldManager, forcing
// conflicts), as a cluster administrator would; applying again with other
// options changes it (fields left out are removed).
func (s *Spire) ApplyClusterSPIFFEID(ctx context.Context, opts ClusterSPIFFEIDOptions) error {
	if opts.Name == "" || opts.SPIFFEIDTemplate == "" {
		return errors.New("ClusterSPIFFEID: Name and SPIFFEIDTemplate are required")
	}
	if opts.ClassName == "" {
		opts.ClassName = s.ClassName
	}
	spec := map[string]any{"spiffeIDTemplate": opts.SPIFFEIDTemplate, "className": opts.ClassName}
	if len(opts.PodLabels) > 0 {
		labels := map[string]any{}
		for k, v := range opts.PodLabels {
			labels[k] = v
		}
		spec["podSelector"] = map[string]any{"matchLabels": labels}
	}
	if len(opts.FederatesWith) > 0 {
		tds := make([]any, 0, len(opts.FederatesWith))
		for _, td := range opts.FederatesWith {
			tds = append(tds, td)
		}
		spec["federatesWith"] = tds
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": ClusterSPIFFEIDResource.GroupVersion().String(),
		"kind":       "ClusterSPIFFEID",
		"metadata":   map[string]any{"name": opts.Name},
		"spec":       spec,
	}}
	dyn, err := dynamic.NewForConfig(s.Cluster.RESTConfig())
	if err != nil {
		return err
	}
	_, err = dyn.Resource(ClusterSPIFFEIDResource).Apply(ctx, opts.Name, obj,
		metav1.ApplyOptions{FieldManager: HarnessFieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("spire %s: applying ClusterSPIFFEID %s: %w", s.TrustDomain, opts.Name, err)
	}
	return nil
}
