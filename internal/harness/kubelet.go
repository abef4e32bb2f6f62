package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
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
	err := run.Run()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		e.logf("exec %q: exit code %d", cmd, exitErr.ExitCode())
		return utilexec.ExitErrorWrapper{ExitError: exitErr}
	}
	if err != nil {
		e.logf("exec %q: %v", cmd, err)
	}
	return err
}

func (e *execEndpoint) logf(format string, args ...any) {
	e.logMu.Lock()
	defer e.logMu.Unlock()
	f, err := os.OpenFile(e.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s\n", time.Now().UTC().Format(time.RFC3339Nano), fmt.Sprintf(format, args...))
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
