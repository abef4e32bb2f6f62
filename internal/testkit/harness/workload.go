package harness

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Workloads that prove federation: "SPIRE holds the peer's bundle" becomes
// "a workload here and a workload there complete an mTLS handshake". Each
// Workload is internal/testkit/cmd/ztworkload running as a plain process, attested
// by a SpireAgent's unix workload attestor.

const (
	workloadReadyTimeout = 60 * time.Second
	workloadDialTimeout  = 15 * time.Second
)

// WorkloadOptions configures StartWorkload.
type WorkloadOptions struct {
	// Name of the workload: its SPIFFE ID is spiffe://<trust domain>/workload/<name>.
	// Unique per SPIRE server. Required.
	Name string
	// Allow lists the SPIFFE IDs its server accepts as clients; an ID without
	// a path (spiffe://west.zt.test) accepts every workload of that trust
	// domain. Required.
	Allow []string
	// FederatesWith names trust domains (west.zt.test or spiffe://west.zt.test)
	// whose bundles the registration entry asks SPIRE to hand to the workload.
	// SPIRE refuses the entry unless it holds each of those bundles already;
	// see Workload.SetFederatesWith for federations made later.
	FederatesWith []string
	// Detach gives the server a session of its own, so it outlives this
	// process (the demo lab; Workload.State records it for StopFromState).
	Detach bool
}

// Workload is a ztworkload server: a registration entry, and the process
// serving mTLS on Addr with the SVID and bundles the agent hands it. The
// entry of a StartWorkload workload is made by hand (parent: the agent;
// selectors: this uid and the path of the workload's own copy of the binary,
// so workloads of one agent get their own identities); that of a
// StartPodWorkload workload by spire-controller-manager, from a
// ClusterSPIFFEID that selects its Pod.
type Workload struct {
	Agent    *SpireAgent
	Name     string
	SPIFFEID string
	EntryID  string
	Addr     string // host:port of its mTLS server
	Dir      string // <agent dir>/workload-<name> (pod workloads: pod-<namespace>-<pod>)
	// Pod is the Pod the workload runs "in" (StartPodWorkload), nil for
	// plain workloads.
	Pod *WorkloadPod

	bin           string // this workload's copy of ztworkload
	selectors     []string
	federatesWith []string
	// attest, for pod workloads, registers a process of the workload with
	// the agent's pod attestor before it runs (startAttested).
	attest attestFunc
	// readyTimeout overrides workloadReadyTimeout (PodWorkloadOptions).
	readyTimeout time.Duration
	release      func() // forgets the server process's registration
	proc         *proc
	stopOnce     sync.Once
	stopErr      error
}

// StartWorkload registers a workload with a's server, starts its server and
// waits until it has its SVID and listens. On failure it stops the process;
// the entry stays.
func StartWorkload(ctx context.Context, a *SpireAgent, opts WorkloadOptions) (*Workload, error) {
	if !validSegment(opts.Name) {
		return nil, fmt.Errorf("workload %q: the name must be a non-empty path segment of letters, digits, '-', '_' and '.'", opts.Name)
	}
	if len(opts.Allow) == 0 {
		return nil, fmt.Errorf("workload %s: Allow names no peer", opts.Name)
	}
	w := &Workload{
		Agent: a, Name: opts.Name, SPIFFEID: "spiffe://" + a.Server.TrustDomain + "/workload/" + opts.Name,
		Dir: filepath.Join(a.Dir, "workload-"+opts.Name),
	}
	fail := func(err error) (*Workload, error) {
		_ = w.Stop()
		return nil, fmt.Errorf("workload %s (%s): %w", w.Name, a.Server.TrustDomain, err)
	}
	if err := os.MkdirAll(w.Dir, 0o755); err != nil {
		return fail(err)
	}
	var err error
	if w.bin, err = workloadBinary(ctx, w.Dir); err != nil {
		return fail(err)
	}
	// The attestor reports the resolved path of /proc/<pid>/exe.
	if w.bin, err = filepath.EvalSymlinks(w.bin); err != nil {
		return fail(err)
	}
	w.selectors = []string{"unix:uid:" + strconv.Itoa(os.Getuid()), "unix:path:" + w.bin}
	if w.federatesWith, err = trustDomainIDs(opts.FederatesWith); err != nil {
		return fail(err)
	}
	if err := w.createEntry(ctx); err != nil {
		return fail(err)
	}
	if err := w.serve(ctx, opts.Allow, opts.Detach); err != nil {
		return fail(err)
	}
	return w, nil
}

func trustDomainIDs(names []string) ([]string, error) {
	ids := make([]string, 0, len(names))
	for _, n := range names {
		td, err := spiffeid.TrustDomainFromString(n)
		if err != nil {
			return nil, fmt.Errorf("federates with %q: %w", n, err)
		}
		ids = append(ids, td.IDString())
	}
	return ids, nil
}

// entryArgs are the entry's fields as `entry create` and `entry update`
// take them: update replaces the whole entry.
func (w *Workload) entryArgs() []string {
	return entryArgs(w.Agent.SPIFFEID, w.SPIFFEID, w.selectors, w.federatesWith)
}

func entryArgs(parentID, spiffeID string, selectors, federatesWith []string) []string {
	args := []string{"-parentID", parentID, "-spiffeID", spiffeID}
	for _, s := range selectors {
		args = append(args, "-selector", s)
	}
	for _, td := range federatesWith {
		args = append(args, "-federatesWith", td)
	}
	return append(args, "-output", "json")
}

func (w *Workload) createEntry(ctx context.Context) error {
	out, err := w.Agent.Server.CLI(ctx, append([]string{"entry", "create"}, w.entryArgs()...)...)
	if err != nil {
		return err
	}
	w.EntryID, err = entryResult(out)
	return err
}

// SetFederatesWith replaces the trust domains the workload's entry federates
// with (none: only its own bundle); the agent passes the change on within
// its sync interval (about 5 s). SPIRE refuses a trust domain whose bundle
// it does not hold.
func (w *Workload) SetFederatesWith(ctx context.Context, trustDomains ...string) error {
	if w.Pod != nil {
		return fmt.Errorf("workload %s: spire-controller-manager owns its entry and would revert the change: apply its ClusterSPIFFEID instead", w.Name)
	}
	tds, err := trustDomainIDs(trustDomains)
	if err != nil {
		return fmt.Errorf("workload %s: %w", w.Name, err)
	}
	prev := w.federatesWith
	w.federatesWith = tds
	out, err := w.Agent.Server.CLI(ctx, append([]string{"entry", "update", "-entryID", w.EntryID}, w.entryArgs()...)...)
	if err == nil {
		_, err = entryResult(out)
	}
	if err != nil {
		w.federatesWith = prev
		return fmt.Errorf("workload %s: %w", w.Name, err)
	}
	return nil
}

// entryResult reads the entry ID from `entry create|update -output json`.
func entryResult(out []byte) (string, error) {
	var resp struct {
		Results []struct {
			Status struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"status"`
			Entry struct {
				ID string `json:"id"`
			} `json:"entry"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &resp); err != nil || len(resp.Results) != 1 {
		return "", fmt.Errorf("unexpected entry output (%v): %q", err, out)
	}
	r := resp.Results[0]
	if r.Status.Code != 0 || r.Entry.ID == "" {
		return "", fmt.Errorf("registration entry refused: %s (code %d)", r.Status.Message, r.Status.Code)
	}
	return r.Entry.ID, nil
}

// LogPath is the workload server's output: one line per handshake.
func (w *Workload) LogPath() string { return filepath.Join(w.Dir, "ztworkload.log") }

func (w *Workload) addrFile() string { return filepath.Join(w.Dir, "addr") }

// serve starts the workload's server and waits until it listens.
func (w *Workload) serve(ctx context.Context, allow []string, detach bool) error {
	if err := w.startServer(allow, detach); err != nil {
		return err
	}
	timeout := cmp.Or(w.readyTimeout, workloadReadyTimeout)
	start := time.Now()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		if w.proc.exited() {
			return false, w.proc.exitError()
		}
		addr, err := readAddrFile(w.addrFile())
		w.Addr = addr
		return addr != "", err
	})
	if err != nil && !w.proc.exited() {
		return fmt.Errorf("ztworkload (pid %d) did not serve within %v (%v: no SVID from the agent? see %s); last lines of %s:\n%s",
			w.proc.pid(), time.Since(start).Round(time.Millisecond), err, w.Agent.LogPath(), w.LogPath(), fileTail(w.LogPath(), 10))
	}
	return err
}

// startServer starts `ztworkload serve`, which listens (and writes its
// address to addrFile) once the agent hands it an SVID.
func (w *Workload) startServer(allow []string, detach bool) error {
	if err := os.Remove(w.addrFile()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	timeout := cmp.Or(w.readyTimeout, workloadReadyTimeout)
	args := []string{"serve", "-socket", w.Agent.SocketPath, "-addr", "127.0.0.1:0", "-allow", strings.Join(allow, ","),
		"-addr-file", w.addrFile(), "-timeout", timeout.String()}
	var err error
	if w.attest != nil {
		w.proc, w.release, err = startAttested("ztworkload", w.bin, args, w.LogPath(), detach, w.attest)
	} else {
		w.proc, err = startProc("ztworkload", w.bin, args, w.LogPath(), detach)
	}
	return err
}

// readAddrFile returns the address a workload's server wrote, or "" while
// it has written none.
func readAddrFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	return strings.TrimSpace(string(data)), err
}

// Stop stops the workload's server. The registration entry stays. Safe to
// call more than once.
func (w *Workload) Stop() error {
	w.stopOnce.Do(func() {
		if err := w.proc.stop(spireStopGrace); err != nil {
			w.stopErr = fmt.Errorf("workload %s: stopping: %w", w.Name, err)
			return
		}
		if w.release != nil {
			w.release()
		}
	})
	return w.stopErr
}

// CheckMTLS runs one mTLS handshake from workload from (a ztworkload dial
// process attested as from) to to's server, each side authorizing only the
// other's SPIFFE ID. ok is true when both accepted each other; detail is
// what the client printed: "ok <to's ID>: hello <from's ID>", or the TLS
// error (for example "x509: certificate signed by unknown authority" while
// from lacks to's bundle, or "remote error: tls: bad certificate" when to
// cannot verify from).
func CheckMTLS(ctx context.Context, from, to *Workload) (ok bool, detail string) {
	addr, detail := serverAddr(to.Addr, to.addrFile(), to.SPIFFEID)
	if addr == "" {
		return false, detail
	}
	return dialMTLS(ctx, from.bin, from.Agent.SocketPath, addr, to.SPIFFEID, from.attest)
}

// serverAddr returns the address of a workload's server: addr, else what the
// server wrote to addrFile once it served (PodWorkloadOptions.ServeLater);
// or "" and why there is none.
func serverAddr(addr, addrFile, id string) (string, string) {
	if addr != "" {
		return addr, ""
	}
	addr, err := readAddrFile(addrFile)
	switch {
	case err != nil:
		return "", err.Error()
	case addr == "":
		return "", id + " does not serve yet: the agent has handed it no X.509-SVID (no registration entry)"
	}
	return addr, ""
}

// dialMTLS runs `ztworkload dial` (bin, attested through the agent at
// socket; with attest, as a process of attest's pod) against the server at
// addr, which must present SPIFFE ID id.
func dialMTLS(ctx context.Context, bin, socket, addr, id string, attest attestFunc) (ok bool, detail string) {
	ctx, cancel := context.WithTimeout(ctx, workloadDialTimeout+5*time.Second)
	defer cancel()
	var out bytes.Buffer
	args := []string{"dial", "-socket", socket, "-addr", addr, "-allow", id, "-timeout", workloadDialTimeout.String()}
	var cmd *exec.Cmd
	if attest != nil {
		cmd = exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", attestGate, "ztworkload-gate", bin}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, bin, args...)
	}
	cmd.Env = childEnv()
	cmd.Stdout, cmd.Stderr = &out, &out
	var err error
	if attest != nil {
		err = runAttested(cmd, attest)
	} else {
		err = cmd.Run()
	}
	detail = strings.TrimSpace(out.String())
	if err != nil && detail == "" {
		detail = err.Error()
	}
	return err == nil, strings.TrimPrefix(detail, "error: ")
}

// WorkloadView is what the agent hands a workload right now (`ztworkload
// show`). Authorities are hex subject key IDs, as SPIRE's `localauthority`
// commands and X509Authority name them.
type WorkloadView struct {
	SPIFFEID string `json:"spiffe_id"`
	// SVIDAuthority signed the workload's X.509-SVID.
	SVIDAuthority string    `json:"svid_authority"`
	SVIDExpiresAt time.Time `json:"svid_expires_at"`
	// Bundles are the X.509 authorities of each trust domain the workload
	// can verify (its own, and those its entry federates with).
	Bundles map[string][]string `json:"bundles"`
}

// Show asks the agent, as workload w (a `ztworkload show` process attested
// like w), for w's SVID and bundles.
func (w *Workload) Show(ctx context.Context) (WorkloadView, error) {
	ctx, cancel := context.WithTimeout(ctx, workloadDialTimeout+5*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	args := []string{"show", "-socket", w.Agent.SocketPath, "-timeout", workloadDialTimeout.String()}
	var cmd *exec.Cmd
	if w.attest != nil {
		// A pod workload's process gets its identity only once registered
		// with the pod attestor (see dialMTLS).
		cmd = exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", attestGate, "ztworkload-gate", w.bin}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, w.bin, args...)
	}
	cmd.Env = childEnv()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var v WorkloadView
	var err error
	if w.attest != nil {
		err = runAttested(cmd, w.attest)
	} else {
		err = cmd.Run()
	}
	if err != nil {
		return v, fmt.Errorf("workload %s: ztworkload show: %v: %s", w.Name, err, strings.TrimSpace(stdout.String()+stderr.String()))
	}
	if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
		return v, fmt.Errorf("workload %s: ztworkload show: %w in %q", w.Name, err, stdout.String())
	}
	return v, nil
}

// WaitMTLS repeats CheckMTLS until its outcome is want (the agent passes
// entry and bundle changes on within seconds) or timeout passes, and returns
// the last detail; the error says the outcome never came.
func WaitMTLS(ctx context.Context, from, to *Workload, want bool, timeout time.Duration) (string, error) {
	var detail string
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		var ok bool
		ok, detail = CheckMTLS(ctx, from, to)
		return ok == want, nil
	})
	if err != nil {
		return detail, fmt.Errorf("mTLS %s -> %s: handshake ok=%v wanted within %v, last: %s", from.SPIFFEID, to.SPIFFEID, want, timeout, detail)
	}
	return detail, nil
}

var workloadBuild struct {
	sync.Mutex
	path string // the first binary built by this process
}

// workloadBinary puts a ztworkload binary into dir: built with `go build`
// from this repository the first time, copied from that build afterwards.
func workloadBinary(ctx context.Context, dir string) (string, error) {
	workloadBuild.Lock()
	defer workloadBuild.Unlock()
	dst := filepath.Join(dir, "ztworkload")
	if workloadBuild.path != "" {
		if err := copyExecutable(workloadBuild.path, dst); err == nil {
			return dst, nil
		}
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", "build", "-o", dst, "./internal/testkit/cmd/ztworkload")
	cmd.Dir = root
	cmd.Env = toolEnv()
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./internal/testkit/cmd/ztworkload: %v: %s", err, tailLines(stderr.String(), 20))
	}
	workloadBuild.path = dst
	return dst, nil
}

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
