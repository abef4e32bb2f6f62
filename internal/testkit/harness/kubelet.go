package harness

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	remotecommandconsts "k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/client-go/tools/remotecommand"
	streaming "k8s.io/kubelet/pkg/cri/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"
)

// execEndpoint is the part of a kubelet that pod exec needs: an HTTPS server
// the API server forwards /exec/<namespace>/<pod>/<container> requests to
// (found through the Node's status address and kubelet port). It serves one
// pod and container, and runs the command locally, so `kubectl exec` and
// client-go's remotecommand reach a real binary through the real API server.
//
// Test-only: it does not authenticate the API server (the API server, started
// without --kubelet-certificate-authority, does not verify it either).
// Tests run it in process (Spire.startExec); the demo lab runs it as a
// detached process of its own (ExecEndpointMain, Spire.startExecProcess).
type execEndpoint struct {
	Port int

	namespace, pod, container string
	commands                  map[string]execCommand
	logPath                   string

	ln  net.Listener
	srv *http.Server

	logMu sync.Mutex
}

// execCommand maps argv[0] of an exec request to a local binary. fixArgs
// may add arguments (the SPIRE server's socket path) to the rest of argv.
type execCommand struct {
	bin     string
	fixArgs func(args []string) []string
}

const execIdleTimeout = 5 * time.Minute

func startExecEndpoint(namespace, pod, container string, commands map[string]execCommand, logPath string) (*execEndpoint, error) {
	ca, err := newTestCA("zerotrust-harness-kubelet-ca")
	if err != nil {
		return nil, err
	}
	tlsConfig, err := ca.servingTLS("zerotrust-harness-kubelet")
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("exec endpoint: listening: %w", err)
	}
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		ln.Close()
		return nil, fmt.Errorf("exec endpoint: unexpected address %v", ln.Addr())
	}
	e := &execEndpoint{
		Port: addr.Port, namespace: namespace, pod: pod, container: container,
		commands: commands, logPath: logPath, ln: ln,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/exec/", e.serveExec)
	// What a detached endpoint's health check asks (SpireState.Probe).
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	e.srv = &http.Server{Handler: mux, TLSConfig: tlsConfig, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := e.srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			e.logf("exec endpoint stopped: %v", err)
		}
	}()
	return e, nil
}

// serveExec handles /exec/<namespace>/<pod>/<container> (the kubelet also
// accepts /exec/<namespace>/<pod>/<uid>/<container>).
func (e *execEndpoint) serveExec(w http.ResponseWriter, req *http.Request) {
	parts := strings.Split(strings.TrimPrefix(req.URL.Path, "/exec/"), "/")
	if len(parts) != 3 && len(parts) != 4 {
		http.NotFound(w, req)
		return
	}
	namespace, pod, container := parts[0], parts[1], parts[len(parts)-1]
	command := req.URL.Query()["command"]
	e.logf("exec %s/%s/%s %q from %s", namespace, pod, container, command, req.RemoteAddr)
	if namespace != e.namespace || pod != e.pod || container != e.container {
		http.Error(w, fmt.Sprintf("container %q of pod %s/%s is not on this node", container, namespace, pod), http.StatusNotFound)
		return
	}
	opts, err := streaming.NewOptions(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	streaming.ServeExec(w, req, e, pod, types.UID(""), container, command, opts,
		execIdleTimeout, remotecommandconsts.DefaultStreamCreationTimeout, remotecommandconsts.SupportedStreamingProtocols)
}

// ExecInContainer implements streaming.Executor by running the command on
// this machine. An unknown command fails like a missing executable in a
// container (exit code 127).
func (e *execEndpoint) ExecInContainer(ctx context.Context, _ string, _ types.UID, _ string, cmd []string,
	in io.Reader, out, errOut io.WriteCloser, _ bool, _ <-chan remotecommand.TerminalSize, _ time.Duration) error {
	if len(cmd) == 0 {
		return errors.New("no command given")
	}
	c, ok := e.commands[cmd[0]]
	if !ok {
		if errOut != nil {
			fmt.Fprintf(errOut, "exec: %q: executable file not found in $PATH\n", cmd[0])
		}
		return utilexec.CodeExitError{Err: fmt.Errorf("executable %q not found", cmd[0]), Code: 127}
	}
	args := cmd[1:]
	if c.fixArgs != nil {
		args = c.fixArgs(args)
	}
	run := exec.CommandContext(ctx, c.bin, args...)
	run.Env = childEnv()
	if in != nil {
		run.Stdin = in
	}
	if out != nil {
		run.Stdout = out
	}
	if errOut != nil {
		run.Stderr = errOut
	}
	start := time.Now()
	err := run.Run()
	took := time.Since(start).Round(time.Millisecond)
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		e.logf("exec %q: exit code %d after %v", cmd, exitErr.ExitCode(), took)
		return utilexec.ExitErrorWrapper{ExitError: exitErr}
	}
	if err != nil {
		e.logf("exec %q: %v after %v", cmd, err, took)
		return err
	}
	e.logf("exec %q: ok after %v", cmd, took)
	return nil
}

// logf appends a line to logPath, or, without one (a detached endpoint, whose
// stderr is its log file), writes it to stderr.
func (e *execEndpoint) logf(format string, args ...any) {
	e.logMu.Lock()
	defer e.logMu.Unlock()
	line := fmt.Sprintf("%s %s\n", time.Now().UTC().Format(time.RFC3339Nano), fmt.Sprintf(format, args...))
	if e.logPath == "" {
		_, _ = io.WriteString(os.Stderr, line)
		return
	}
	f, err := os.OpenFile(e.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = io.WriteString(f, line)
}

// Stop closes the listener and every open exec stream.
func (e *execEndpoint) Stop() error {
	if e == nil || e.srv == nil {
		return nil
	}
	return e.srv.Close()
}

// withSocketPath adds "-socketPath socket" to spire-server CLI arguments
// unless they hold one. Flags follow the subcommand words ("bundle show"),
// so it goes before the first flag.
func withSocketPath(socket string) func(args []string) []string {
	return func(args []string) []string {
		for _, a := range args {
			if a == "-socketPath" || a == "--socketPath" || strings.HasPrefix(a, "-socketPath=") || strings.HasPrefix(a, "--socketPath=") {
				return args
			}
		}
		i := 0
		for i < len(args) && !strings.HasPrefix(args[i], "-") {
			i++
		}
		out := make([]string, 0, len(args)+2)
		out = append(out, args[:i]...)
		out = append(out, "-socketPath", socket)
		return append(out, args[i:]...)
	}
}

// ExecEndpointState is a detached exec endpoint process recorded in a State
// (SpireState.ExecEndpoint): `ztlab up --spire` runs one per cluster, so pod
// exec keeps reaching the real spire-server after ztlab has exited.
type ExecEndpointState struct {
	PID  int `json:"pid"`
	Port int `json:"port"`
	// Bin is the program running it (ztlab); its base name identifies the
	// process in /proc.
	Bin     string `json:"bin"`
	LogPath string `json:"log_path"`
}

// Probe reports nil when the recorded process is still ours (its port file
// lies under dir, the SPIRE directory), listens on Port and answers /healthz.
func (e ExecEndpointState) Probe(dir string) error {
	if !isOurProcess(e.PID, filepath.Base(e.Bin), dir) {
		return fmt.Errorf("exec endpoint (pid %d) is not running", e.PID)
	}
	return probeExecEndpoint(e.PID, e.Port)
}

// probeExecEndpoint checks that pid listens on port and answers /healthz.
func probeExecEndpoint(pid, port int) error {
	if !listensOn(pid, port) {
		return fmt.Errorf("exec endpoint (pid %d) does not listen on port %d", pid, port)
	}
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		// Liveness, not identity: the endpoint's CA is made afresh by the
		// process itself, and listensOn above already tied the port to it.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // see above
	}}
	url := "https://127.0.0.1:" + strconv.Itoa(port) + "/healthz"
	resp, err := client.Get(url)
	if err != nil {
		return fmt.Errorf("exec endpoint (pid %d): %w", pid, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("exec endpoint (pid %d): GET %s: %s", pid, url, resp.Status)
	}
	return nil
}

// Flags of ExecEndpointMain, which the parent (Spire.startExecProcess) passes.
const (
	execFlagNamespace = "namespace"
	execFlagPod       = "pod"
	execFlagContainer = "container"
	execFlagSpire     = "spire-server"
	execFlagSocket    = "socket-path"
	execFlagPortFile  = "port-file"
)

// ExecEndpointMain is the body of a detached exec endpoint process (hidden
// `ztlab exec-endpoint`): the exec endpoint the tests run in process, serving
// one pod's container and running spire-server against one admin socket. It
// listens on a free port, writes the port to the port file once it serves,
// logs every request to stderr (its log file) and runs until ctx ends
// (SIGTERM from StopFromState).
func ExecEndpointMain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("exec-endpoint", flag.ContinueOnError)
	namespace := fs.String(execFlagNamespace, "", "namespace of the pod served")
	pod := fs.String(execFlagPod, "", "pod served")
	container := fs.String(execFlagContainer, "", "container served")
	bin := fs.String(execFlagSpire, "", "spire-server binary that `spire-server ...` runs")
	socket := fs.String(execFlagSocket, "", "SPIRE server admin socket added to every command")
	portFile := fs.String(execFlagPortFile, "", "file to write the listening port to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for name, v := range map[string]string{execFlagNamespace: *namespace, execFlagPod: *pod, execFlagContainer: *container,
		execFlagSpire: *bin, execFlagSocket: *socket, execFlagPortFile: *portFile} {
		if v == "" {
			return fmt.Errorf("-%s is required", name)
		}
	}
	e, err := startExecEndpoint(*namespace, *pod, *container, spireExecCommands(*bin, *socket), "")
	if err != nil {
		return err
	}
	// The process ends right after; a failed shutdown has no one to tell.
	defer func() { _ = e.Stop() }()
	tmp := *portFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(e.Port)+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, *portFile); err != nil {
		return err
	}
	e.logf("serving exec for pod %s/%s container %s on 127.0.0.1:%d: spire-server = %s -socketPath %s",
		*namespace, *pod, *container, e.Port, *bin, *socket)
	<-ctx.Done()
	e.logf("stopping: %v", ctx.Err())
	return nil
}
