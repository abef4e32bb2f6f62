package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/podattest"
)

const spireAgentReadyTimeout = 60 * time.Second

// SpireAgent is a real spire-agent (scripts/tool.sh spire-agent, the spire
// version of the server) attested to a harness SPIRE server, serving the
// Workload API on a unix socket.
//
// By default it attests with a join token, and its workload attestor is
// "unix" (uid and, with discover_workload_path, the binary's path), which
// needs no kubelet: workloads are plain processes of this machine (see
// Workload). With SpireAgentOptions.K8sPSAT it attests as spire-controller-
// manager expects of an agent in a cluster, and also attests pod workloads
// (StartPodWorkload).
type SpireAgent struct {
	Server *Spire
	Name   string
	// SPIFFEID is the parent of the registration entries of its workloads:
	// the join-token agent's alias (spiffe://<trust domain>/agent/<name>), or
	// the k8s_psat agent's own ID
	// (spiffe://<trust domain>/spire/agent/k8s_psat/<cluster>/<node UID>).
	SPIFFEID   string
	SocketPath string // the Workload API
	Dir        string // configuration, data and log: <server dir>/agent-<name>

	// Set with K8sPSAT: the Node the agent "runs on" (pod workloads are bound
	// to it), and the agent's own Pod and ServiceAccount in the server's
	// namespace, whose bound token it attests with.
	NodeName, NodeUID       string
	PodName, ServiceAccount string

	psat        bool
	podAttestor string // the ztpodattestor plugin binary
	podsFile    string // its records of pod processes (internal/testkit/podattest)
	podsMu      sync.Mutex
	pods        map[int]podattest.Record

	bin        string
	detach     bool // SpireAgentOptions.Detach
	healthPort int
	proc       *proc
	sockDir    string
	stopOnce   sync.Once
	stopErr    error
}

// SpireAgentOptions configures StartSpireAgentWith.
type SpireAgentOptions struct {
	// Name of the agent: a path segment of letters, digits, '-', '_' and
	// '.'; with K8sPSAT a DNS label (lower case, digits, '-'), as it also
	// names the agent's Node and Pod. Required.
	Name string
	// K8sPSAT attests the agent with SPIRE's k8s_psat node attestor instead
	// of a join token: the harness creates a Node, the agent's Pod on it in
	// the server's namespace with ServiceAccount SpireAgentServiceAccount,
	// and a token bound to that Pod (TokenRequest, audience "spire-server")
	// for the agent's token_path; the server checks it through the cluster's
	// TokenReview API. The agent's ID is then
	// spiffe://<trust domain>/spire/agent/k8s_psat/<cluster>/<node UID>, the
	// parent spire-controller-manager gives the entries of pods on that Node.
	// It also runs the ztpodattestor plugin as its "k8s" workload attestor
	// (StartPodWorkload), beside "unix" (StartWorkload works as well). Not
	// for standalone servers.
	K8sPSAT bool
	// Detach gives the agent a session of its own, so it outlives this
	// process (the demo lab); SpireAgent.State records it for StopFromState.
	Detach bool
}

// SpireAgentServiceAccount is the ServiceAccount of K8sPSAT agents, in the
// SPIRE server's namespace; the server's k8s_psat attestor allows only it.
const SpireAgentServiceAccount = "spire-agent"

// StartSpireAgent starts a spire-agent named name (a path segment: letters,
// digits, '-', '_', '.') for server s, attested with a join token, and waits
// until it is attested and serves the Workload API. On failure it stops what
// it started; the error quotes the agent's log.
func StartSpireAgent(ctx context.Context, s *Spire, name string) (*SpireAgent, error) {
	return StartSpireAgentWith(ctx, s, SpireAgentOptions{Name: name})
}

// StartSpireAgentWith is StartSpireAgent with options.
func StartSpireAgentWith(ctx context.Context, s *Spire, opts SpireAgentOptions) (*SpireAgent, error) {
	name := opts.Name
	if s == nil {
		return nil, errors.New("spire-agent: a SPIRE server is required")
	}
	if !validSegment(name) {
		return nil, fmt.Errorf("spire-agent %q: the name must be a non-empty path segment of letters, digits, '-', '_' and '.'", name)
	}
	if opts.K8sPSAT {
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			return nil, fmt.Errorf("spire-agent %q: a k8s_psat agent's name names its Node and Pod: %s", name, strings.Join(errs, "; "))
		}
		if s.Cluster == nil || s.opts.Standalone {
			return nil, fmt.Errorf("spire-agent %s: k8s_psat needs a SPIRE server of a cluster, not a standalone one", name)
		}
	}
	a := &SpireAgent{
		Server: s, Name: name, SPIFFEID: "spiffe://" + s.TrustDomain + "/agent/" + name,
		Dir: filepath.Join(s.Dir, "agent-"+name), detach: opts.Detach, psat: opts.K8sPSAT,
	}
	ok := false
	defer func() {
		if !ok {
			_ = a.Stop()
		}
	}()
	var err error
	if a.bin, err = Tool("spire-agent"); err != nil {
		return nil, fmt.Errorf("spire-agent %s: %w", name, err)
	}
	if err := a.prepare(ctx); err != nil {
		return nil, fmt.Errorf("spire-agent %s (%s): %w", name, s.TrustDomain, err)
	}
	for attempt := 1; ; attempt++ {
		err = a.start(ctx)
		if err == nil {
			break
		}
		if a.proc != nil {
			_ = a.proc.stop(0)
		}
		if !errors.Is(err, errAddrInUse) || attempt == startAttempts || ctx.Err() != nil {
			return nil, fmt.Errorf("spire-agent %s (%s): %w", name, s.TrustDomain, err)
		}
	}
	ok = true
	return a, nil
}

// validSegment reports whether name can be a SPIFFE ID path segment and a
// file name as it is.
func validSegment(name string) bool {
	if name == "" || name == "." || name == ".." {
		return false
	}
	for _, r := range name {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		digit := r >= '0' && r <= '9'
		if !letter && !digit && r != '-' && r != '_' && r != '.' {
			return false
		}
	}
	return true
}

// LogPath is the agent's combined stdout and stderr.
func (a *SpireAgent) LogPath() string { return filepath.Join(a.Dir, "spire-agent.log") }

// prepare writes the server's bundle (the agent's bootstrap trust) and a
// fresh join token, or for a k8s_psat agent its Kubernetes objects and bound
// token; each start is a new agent.
func (a *SpireAgent) prepare(ctx context.Context) error {
	// The Workload API socket needs a short path, as the server's does.
	d, err := freshDataAndSocketDir(a.Dir, "zta-")
	if err != nil {
		return err
	}
	a.sockDir = d
	a.SocketPath = filepath.Join(d, "agent.sock")

	bundle, err := a.Server.BundleShow(ctx, "pem")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(a.Dir, "bundle.crt"), bundle, 0o644); err != nil {
		return err
	}
	if a.psat {
		return a.preparePSAT(ctx)
	}
	out, err := a.Server.CLI(ctx, "token", "generate", "-spiffeID", a.SPIFFEID, "-ttl", "600", "-output", "json")
	if err != nil {
		return err
	}
	var token struct {
		Value string `json:"value"`
	}
	if err := json.Unmarshal(out, &token); err != nil || token.Value == "" {
		return fmt.Errorf("token generate printed no token (%v): %q", err, out)
	}
	// A file keeps the token out of the process list and the config.
	return os.WriteFile(filepath.Join(a.Dir, "join-token"), []byte(token.Value), 0o600)
}

func (a *SpireAgent) config() string {
	var b strings.Builder
	b.WriteString("agent {\n")
	fmt.Fprintf(&b, "  data_dir = %q\n  log_level = \"DEBUG\"\n", filepath.Join(a.Dir, "data"))
	fmt.Fprintf(&b, "  server_address = \"127.0.0.1\"\n  server_port = %d\n", a.Server.apiPort)
	fmt.Fprintf(&b, "  socket_path = %q\n  trust_domain = %q\n", a.SocketPath, a.Server.TrustDomain)
	fmt.Fprintf(&b, "  trust_bundle_path = %q\n", filepath.Join(a.Dir, "bundle.crt"))
	if !a.psat {
		fmt.Fprintf(&b, "  join_token_file = %q\n", filepath.Join(a.Dir, "join-token"))
	}
	b.WriteString("}\n\nplugins {\n")
	if a.psat {
		fmt.Fprintf(&b, "  NodeAttestor \"k8s_psat\" {\n    plugin_data {\n      cluster = %q\n      token_path = %q\n    }\n  }\n",
			a.Server.Cluster.Name, a.tokenPath())
		// The name "k8s" makes the selectors k8s:..., those of SPIRE's
		// kubelet-based attestor, which this plugin stands in for (see
		// internal/testkit/cmd/ztpodattestor).
		fmt.Fprintf(&b, "  WorkloadAttestor \"k8s\" {\n    plugin_cmd = %q\n    plugin_data {\n      pods_file = %q\n    }\n  }\n",
			a.podAttestor, a.podsFile)
	} else {
		b.WriteString("  NodeAttestor \"join_token\" {\n    plugin_data {}\n  }\n")
	}
	b.WriteString("  KeyManager \"memory\" {\n    plugin_data {}\n  }\n")
	// The path tells workloads of one uid apart (see Workload).
	b.WriteString("  WorkloadAttestor \"unix\" {\n    plugin_data {\n      discover_workload_path = true\n    }\n  }\n")
	b.WriteString("}\n\nhealth_checks {\n  listener_enabled = true\n  bind_address = \"127.0.0.1\"\n")
	fmt.Fprintf(&b, "  bind_port = \"%d\"\n  live_path = \"/live\"\n  ready_path = \"/ready\"\n}\n", a.healthPort)
	return b.String()
}

func (a *SpireAgent) start(ctx context.Context) error {
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	a.healthPort = ports[0]
	configPath := filepath.Join(a.Dir, "agent.conf")
	if err := os.WriteFile(configPath, []byte(a.config()), 0o644); err != nil {
		return err
	}
	if a.proc, err = startProc("spire-agent", a.bin, []string{"run", "-config", configPath}, a.LogPath(), a.detach); err != nil {
		return err
	}
	return a.waitReady(ctx)
}

// waitReady waits until the health endpoint says ready (attested, Workload
// API up) and the socket exists.
func (a *SpireAgent) waitReady(ctx context.Context) error {
	start := time.Now()
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	readyURL := "http://127.0.0.1:" + strconv.Itoa(a.healthPort) + "/ready"
	var last string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, spireAgentReadyTimeout, true, func(ctx context.Context) (bool, error) {
		if a.proc.exited() {
			return false, a.proc.exitError()
		}
		last = probeReady(ctx, client, readyURL)
		if last == "" {
			if _, err := os.Stat(a.SocketPath); err != nil {
				last = err.Error()
			}
		}
		return last == "", nil
	})
	if err != nil && !a.proc.exited() {
		return fmt.Errorf("spire-agent (pid %d) not ready after %v (%v; last: %s); last lines of %s:\n%s",
			a.proc.pid(), time.Since(start).Round(time.Millisecond), err, last, a.LogPath(), fileTail(a.LogPath(), 25))
	}
	return err
}

// probeReady returns "" when GET url answers 200, or what went wrong.
func probeReady(ctx context.Context, client *http.Client, url string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err.Error()
	}
	resp, err := client.Do(req)
	if err != nil {
		return err.Error()
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "GET " + url + ": " + resp.Status
	}
	return ""
}

// PID is the pid of the running spire-agent, or 0.
func (a *SpireAgent) PID() int {
	if a.proc == nil || a.proc.exited() {
		return 0
	}
	return a.proc.pid()
}

// Stop stops the agent and removes its socket directory. Safe to call more
// than once. Registration entries and the agent's record in the server stay.
func (a *SpireAgent) Stop() error {
	a.stopOnce.Do(func() {
		var errs []error
		if a.proc != nil {
			errs = append(errs, a.proc.stop(spireStopGrace))
		}
		if a.sockDir != "" {
			errs = append(errs, os.RemoveAll(a.sockDir))
		}
		if err := errors.Join(errs...); err != nil {
			a.stopErr = fmt.Errorf("spire-agent %s (%s): stopping: %w", a.Name, a.Server.TrustDomain, err)
		}
	})
	return a.stopErr
}
