package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options configures Start.
type Options struct {
	// Names are the cluster names ("east", "west"); each becomes a kubeconfig
	// context of the same name. Default: one cluster "local".
	Names []string
	// Dir holds each cluster's data, credentials, logs and kubeconfig under
	// Dir/<name>/. Empty: a temporary directory, removed by Stop.
	Dir string
	// SkipCRDs starts bare clusters (to test "CRD not installed" errors).
	// Otherwise every CRD of CRDDocuments is installed before Start returns.
	SkipCRDs bool
	// AuditLog enables the apiserver audit log (Metadata level for
	// everything) at Dir/<name>/audit.log.
	AuditLog bool
	// Detach lets the processes outlive this process (own session, no
	// Pdeathsig): used by `ztlab up` / `make demo`.
	Detach bool
	// APIServerFlags are appended to kube-apiserver's command line
	// (e.g. "--max-requests-inflight=1"); a later flag overrides an earlier one.
	APIServerFlags []string
	// SharedEtcd runs one etcd for all clusters, each apiserver under its
	// own --etcd-prefix: an apiserver costs about 250 MiB of RSS and an etcd
	// of its own would add little more than its process, so many clusters
	// (bench/'s mesh of 50) fit in one machine's memory.
	SharedEtcd bool
}

// Lab is a set of running clusters.
type Lab struct {
	Clusters []*Cluster
	Dir      string
	etcd     *Cluster // the shared etcd (Options.SharedEtcd), else nil

	removeDir bool // Dir is a temporary directory the lab created
	stopOnce  sync.Once
	stopErr   error
}

// sharedEtcdStarts is how many clusters of a shared-etcd lab start at once.
const sharedEtcdStarts = 4

var clusterName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Start starts all clusters in parallel and, unless opts.SkipCRDs, installs
// the test CRDs in each. On any failure it stops everything it started and
// returns an error naming the component that failed and quoting its log.
func Start(ctx context.Context, opts Options) (*Lab, error) {
	names := opts.Names
	if len(names) == 0 {
		names = []string{"local"}
	}
	seen := map[string]bool{}
	for _, n := range names {
		if !clusterName.MatchString(n) || len(n) > 63 {
			return nil, fmt.Errorf("harness: cluster name %q: want a DNS label (lower-case letters, digits, '-')", n)
		}
		if seen[n] {
			return nil, fmt.Errorf("harness: cluster name %q given twice", n)
		}
		seen[n] = true
	}

	lab := &Lab{Dir: opts.Dir}
	if lab.Dir == "" {
		d, err := os.MkdirTemp("", "zt-harness-")
		if err != nil {
			return nil, fmt.Errorf("harness: %w", err)
		}
		lab.Dir, lab.removeDir = d, !opts.Detach
	} else {
		abs, err := filepath.Abs(lab.Dir)
		if err != nil {
			return nil, fmt.Errorf("harness: %w", err)
		}
		lab.Dir = abs
		if err := os.MkdirAll(lab.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("harness: %w", err)
		}
	}
	fail := func(err error) (*Lab, error) {
		_ = lab.Stop()
		return nil, err
	}

	// Binaries and CRD documents are fetched concurrently (cold builds can
	// take minutes; warm ones take milliseconds).
	var (
		wg              sync.WaitGroup
		etcdBin, apiBin string
		etcdErr, apiErr error
		crdDocs         [][]byte
		crdErr          error
	)
	wg.Add(2)
	go func() { defer wg.Done(); etcdBin, etcdErr = Tool("etcd") }()
	go func() { defer wg.Done(); apiBin, apiErr = Tool("kube-apiserver") }()
	if !opts.SkipCRDs {
		wg.Add(1)
		go func() { defer wg.Done(); crdDocs, crdErr = CRDDocuments() }()
	}
	wg.Wait()
	if err := errors.Join(etcdErr, apiErr); err != nil {
		return fail(fmt.Errorf("harness: building binaries: %w", err))
	}
	if crdErr != nil {
		return fail(fmt.Errorf("harness: loading CRDs: %w", crdErr))
	}

	if opts.SharedEtcd {
		e, err := startSharedEtcd(ctx, filepath.Join(lab.Dir, "etcd"), etcdBin, opts.Detach)
		if err != nil {
			return fail(fmt.Errorf("harness: %w", err))
		}
		lab.etcd = e
	}
	lab.Clusters = make([]*Cluster, len(names))
	errs := make([]error, len(names))
	// Many apiservers bootstrapping at once on one etcd starve each other
	// past their readiness deadline on a small machine: a shared-etcd lab
	// starts sharedEtcdStarts at a time.
	slots := make(chan struct{}, len(names))
	if opts.SharedEtcd {
		slots = make(chan struct{}, sharedEtcdStarts)
	}
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			c, err := startCluster(ctx, name, filepath.Join(lab.Dir, name), etcdBin, apiBin, opts, lab.etcd)
			if err != nil {
				errs[i] = err
				return
			}
			lab.Clusters[i] = c
			if !opts.SkipCRDs {
				if err := InstallCRDs(ctx, c.RESTConfig(), crdDocs); err != nil {
					errs[i] = fmt.Errorf("cluster %s: installing CRDs: %w", name, err)
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fail(fmt.Errorf("harness: %w", err))
	}
	return lab, nil
}

// Cluster returns the cluster called name, or nil.
func (l *Lab) Cluster(name string) *Cluster {
	for _, c := range l.Clusters {
		if c != nil && c.Name == name {
			return c
		}
	}
	return nil
}

// Stop kills every process the lab started (apiservers first, then etcd;
// SIGTERM, then SIGKILL after a grace period) and waits for them to exit.
// Safe to call more than once.
func (l *Lab) Stop() error {
	l.stopOnce.Do(func() {
		var wg sync.WaitGroup
		errs := make([]error, len(l.Clusters))
		for i, c := range l.Clusters {
			if c == nil {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.mu.Lock()
				defer c.mu.Unlock()
				if err := c.stopProcs(); err != nil {
					errs[i] = fmt.Errorf("cluster %s: %w", c.Name, err)
				}
			}()
		}
		wg.Wait()
		l.stopErr = errors.Join(errs...)
		if l.etcd != nil {
			// The shared etcd goes last, once no apiserver uses it.
			l.stopErr = errors.Join(l.stopErr, l.etcd.stopProcs())
		}
		if l.removeDir && l.stopErr == nil {
			_ = os.RemoveAll(l.Dir)
		}
	})
	return l.stopErr
}

// WriteKubeconfig writes one kubeconfig holding every cluster, one context
// (and cluster and user entry) per cluster, named after it. The current
// context is the first cluster.
func (l *Lab) WriteKubeconfig(path string) error {
	return writeKubeconfig(path, l.Clusters)
}

// State is what WriteState records about a lab, for tools in other processes.
type State struct {
	Dir      string                  `json:"dir"`
	Order    []string                `json:"order"`
	Clusters map[string]ClusterState `json:"clusters"`
}

// ClusterState is one cluster in a State.
type ClusterState struct {
	Name         string `json:"name"`
	Host         string `json:"host"`
	Kubeconfig   string `json:"kubeconfig"`
	Context      string `json:"context"`
	Token        string `json:"token"`
	ViewerToken  string `json:"viewer_token"`
	CACertFile   string `json:"ca_cert_file"`
	EtcdURL      string `json:"etcd_url"`
	EtcdPID      int    `json:"etcd_pid"`
	APIServerPID int    `json:"apiserver_pid"`
	Dir          string `json:"dir"`
	// Spire is the cluster's detached SPIRE installation, if one was started.
	Spire *SpireState `json:"spire,omitempty"`
}

// SpireState is a SPIRE server (and its spire-controller-manager) recorded in
// a State.
type SpireState struct {
	TrustDomain       string `json:"trust_domain"`
	BundleEndpointURL string `json:"bundle_endpoint_url"`
	EndpointSPIFFEID  string `json:"endpoint_spiffe_id"`
	Namespace         string `json:"namespace"`
	BundleConfigMap   string `json:"bundle_config_map"`
	// BundleNamespace holds BundleConfigMap; empty in a state written before
	// it was recorded, where it is Namespace.
	BundleNamespace string `json:"bundle_namespace,omitempty"`
	// BundleKey is the key of BundleConfigMap SPIRE writes (Spire.BundleKey).
	BundleKey string `json:"bundle_key,omitempty"`
	// Helm: laid out as the SPIFFE Helm chart does (SpireOptions.Helm).
	Helm bool `json:"helm,omitempty"`
	// SocketPath is the server API (admin) socket, in SocketDir, a directory
	// of its own that StopFromState removes.
	SocketPath           string `json:"socket_path"`
	SocketDir            string `json:"socket_dir"`
	Dir                  string `json:"dir"`
	Bin                  string `json:"bin"` // the spire-server binary, also the admin CLI
	ServerPID            int    `json:"server_pid"`
	ControllerManagerPID int    `json:"controller_manager_pid,omitempty"`
	// ExecEndpoint is the detached process serving pod exec of spire-server-0
	// (SpireOptions.ExecEndpointCommand), if one was started.
	ExecEndpoint *ExecEndpointState `json:"exec_endpoint,omitempty"`
	// Agent and Workload are a detached spire-agent and workload (`ztlab up
	// --workloads`), if they were started.
	Agent    *SpireAgentState `json:"agent,omitempty"`
	Workload *WorkloadState   `json:"workload,omitempty"`
}

// Probe reports nil when the recorded processes are still ours and running.
func (s SpireState) Probe() error {
	if !isOurProcess(s.ServerPID, "spire-server", s.Dir) {
		return fmt.Errorf("spire-server (pid %d) is not running", s.ServerPID)
	}
	if s.ControllerManagerPID != 0 && !isOurProcess(s.ControllerManagerPID, "spire-controller-manager", s.Dir) {
		return fmt.Errorf("spire-controller-manager (pid %d) is not running", s.ControllerManagerPID)
	}
	if s.ExecEndpoint != nil {
		if err := s.ExecEndpoint.Probe(s.Dir); err != nil {
			return err
		}
	}
	return s.probeWorkload()
}

// FederatedTrustDomains asks the server (`spire-server bundle list` on its
// admin socket) which trust domains' bundles it holds, sorted.
func (s SpireState) FederatedTrustDomains(ctx context.Context) ([]string, error) {
	return federatedTrustDomains(ctx, s.Bin, s.SocketPath, s.TrustDomain)
}

// WriteState writes the lab's State as JSON (mode 0600: it holds tokens),
// with the given SPIRE servers recorded under their clusters.
func (l *Lab) WriteState(path string, spires ...*Spire) error {
	return l.WriteStateWithWorkloads(path, spires, nil)
}

// WriteStateWithWorkloads is WriteState that also records detached
// workloads (and their agents) under their SPIRE servers' clusters.
func (l *Lab) WriteStateWithWorkloads(path string, spires []*Spire, workloads []*Workload) error {
	st := State{Dir: l.Dir, Clusters: map[string]ClusterState{}}
	for _, c := range l.Clusters {
		cs := ClusterState{
			Name: c.Name, Host: c.Host, Kubeconfig: c.Kubeconfig, Context: c.Name,
			Token: c.Token, ViewerToken: c.ViewerToken, CACertFile: filepath.Join(c.Dir, "ca.crt"),
			EtcdURL: c.EtcdURL, EtcdPID: c.EtcdPID, APIServerPID: c.APIServerPID, Dir: c.Dir,
		}
		for _, s := range spires {
			if s.Cluster == c {
				ss := s.State()
				for _, w := range workloads {
					if w.Agent.Server == s {
						as, ws := w.Agent.State(), w.State()
						ss.Agent, ss.Workload = &as, &ws
					}
				}
				cs.Spire = &ss
			}
		}
		st.Order = append(st.Order, c.Name)
		st.Clusters[c.Name] = cs
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadState reads a file written by WriteState.
func ReadState(path string) (*State, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if st.Clusters == nil {
		st.Clusters = map[string]ClusterState{}
	}
	return &st, nil
}

// Probe reports nil when the recorded etcd and kube-apiserver processes are
// still ours and the apiserver answers /readyz with 200.
func (s ClusterState) Probe(ctx context.Context) error {
	if !isOurProcess(s.EtcdPID, "etcd", s.Dir) {
		return fmt.Errorf("etcd (pid %d) is not running", s.EtcdPID)
	}
	if !isOurProcess(s.APIServerPID, "kube-apiserver", s.Dir) {
		return fmt.Errorf("kube-apiserver (pid %d) is not running", s.APIServerPID)
	}
	ca, err := os.ReadFile(s.CACertFile)
	if err != nil {
		return err
	}
	client, err := probeClientFor(ca)
	if err != nil {
		return err
	}
	code, body, err := readyz(ctx, client, s.Host, s.Token)
	if err != nil {
		return err
	}
	if code != 200 {
		return fmt.Errorf("GET %s/readyz: %d %s", s.Host, code, tailLines(body, 5))
	}
	return nil
}

// RSS returns the resident set sizes of the recorded processes in bytes
// (0 for a process that is gone).
func (s ClusterState) RSS() (etcd, apiserver int64) {
	if isOurProcess(s.EtcdPID, "etcd", s.Dir) {
		etcd = procRSS(s.EtcdPID)
	}
	if isOurProcess(s.APIServerPID, "kube-apiserver", s.Dir) {
		apiserver = procRSS(s.APIServerPID)
	}
	return etcd, apiserver
}

// StopFromState stops a lab recorded by WriteState from another process
// (`make demo-down`): it signals each recorded PID only if /proc says it is
// still our workload, spire-agent, spire-controller-manager, spire-server,
// kube-apiserver or etcd (binary name, and an argument under the cluster's or
// SPIRE's directory), in that order (exec endpoints with the controller
// managers), waits for them to exit, removes the SPIRE server and agent socket
// directories, and removes the state file.
func StopFromState(path string) error {
	st, err := ReadState(path)
	if err != nil {
		return err
	}
	type target struct {
		pid       int
		component string
	}
	var workloads, cms, spires, apis, etcds []target
	var socketDirs []string
	for _, c := range st.Clusters {
		if s := c.Spire; s != nil {
			if w := s.Workload; w != nil && isOurProcess(w.PID, filepath.Base(w.Bin), w.Dir) {
				workloads = append(workloads, target{w.PID, "workload " + w.Name})
			}
			if a := s.Agent; a != nil {
				if isOurProcess(a.PID, "spire-agent", a.Dir) {
					workloads = append(workloads, target{a.PID, "spire-agent"})
				}
				if a.SocketDir != "" {
					socketDirs = append(socketDirs, a.SocketDir)
				}
			}
			if isOurProcess(s.ControllerManagerPID, "spire-controller-manager", s.Dir) {
				cms = append(cms, target{s.ControllerManagerPID, "spire-controller-manager"})
			}
			if e := s.ExecEndpoint; e != nil && isOurProcess(e.PID, filepath.Base(e.Bin), s.Dir) {
				cms = append(cms, target{e.PID, "exec endpoint"})
			}
			if isOurProcess(s.ServerPID, "spire-server", s.Dir) {
				spires = append(spires, target{s.ServerPID, "spire-server"})
			}
			if s.SocketDir != "" {
				socketDirs = append(socketDirs, s.SocketDir)
			}
		}
		if isOurProcess(c.APIServerPID, "kube-apiserver", c.Dir) {
			apis = append(apis, target{c.APIServerPID, "kube-apiserver"})
		}
		if isOurProcess(c.EtcdPID, "etcd", c.Dir) {
			etcds = append(etcds, target{c.EtcdPID, "etcd"})
		}
	}
	var errs []error
	for _, group := range [][]target{workloads, cms, spires, apis, etcds} {
		for _, t := range group {
			_ = syscall.Kill(t.pid, syscall.SIGTERM)
		}
		for _, t := range group {
			if !waitGone(t.pid, stopGrace) {
				_ = syscall.Kill(t.pid, syscall.SIGKILL)
				if !waitGone(t.pid, 10*time.Second) {
					errs = append(errs, fmt.Errorf("%s (pid %d) still running after SIGKILL", t.component, t.pid))
				}
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, d := range socketDirs {
		// Only a directory that holds nothing but the server's socket: a
		// corrupted state file must not name something else to delete.
		base := filepath.Base(d)
		if entries, err := os.ReadDir(d); err == nil && len(entries) <= 1 && (strings.HasPrefix(base, "zts-") || strings.HasPrefix(base, "zta-")) {
			_ = os.RemoveAll(d)
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func waitGone(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		if !procAlive(pid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}
