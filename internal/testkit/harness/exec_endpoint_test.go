package harness

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// execEndpointArg makes this test binary the detached exec endpoint program,
// as `ztlab exec-endpoint` is for `ztlab up --spire`: TestMain hands the rest
// of the arguments to ExecEndpointMain.
const execEndpointArg = "exec-endpoint"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == execEndpointArg {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := ExecEndpointMain(ctx, os.Args[2:])
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "exec endpoint:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestAccSpireDetachedExecEndpoint starts SPIRE as `ztlab up --spire` does, with
// the exec endpoint as a detached process of its own: pod exec of
// spire-server-0 through the real API server reaches the real spire-server,
// the lab's state records the endpoint, its health check passes, and
// StopFromState stops it with the rest.
func TestAccSpireDetachedExecEndpoint(t *testing.T) {
	dir := t.TempDir()
	lab := startLab(t, Options{Names: []string{"demoexec"}, Dir: dir})
	ctx := context.Background()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := startSpire(t, lab.Clusters[0], SpireOptions{
		TrustDomain: "demoexec.zt.test", Detach: true, ExecEndpointCommand: []string{exe, execEndpointArg},
	})
	if s.exec != nil || s.execProc == nil {
		t.Fatalf("a detached SPIRE with ExecEndpointCommand: in-process endpoint %v, process %v; want only a process", s.exec, s.execProc)
	}
	if sid := procSession(t, s.execProc.pid()); sid != s.execProc.pid() {
		t.Errorf("exec endpoint pid %d: session %d, want a session of its own", s.execProc.pid(), sid)
	}

	// Through the API server's pods/exec, as the provider asks.
	stdout, stderr, err := execSPDY(ctx, s.Cluster, s.Namespace, SpirePodName, SpireContainerName,
		"spire-server", "bundle", "show", "-format", "spiffe")
	if err != nil {
		t.Fatalf("pod exec of spire-server bundle show: %v; stderr: %s; endpoint log:\n%s", err, stderr, fileTail(s.ExecLogPath(), 20))
	}
	direct, err := s.BundleShow(ctx, "spiffe")
	if err != nil {
		t.Fatal(err)
	}
	_, viaExec := parseBundle(t, s.TrustDomain, []byte(stdout))
	_, fromSocket := parseBundle(t, s.TrustDomain, direct)
	if viaExec != fromSocket {
		t.Errorf("bundle through pod exec differs from the admin socket's:\n%s\nvs\n%s", viaExec, fromSocket)
	}
	log, err := os.ReadFile(s.ExecLogPath())
	if err != nil {
		t.Fatal(err)
	}
	if want := `exec ["spire-server" "bundle" "show" "-format" "spiffe"]: ok after`; !strings.Contains(string(log), want) {
		t.Errorf("exec endpoint log %s lacks %q:\n%s", s.ExecLogPath(), want, log)
	}

	state := filepath.Join(dir, "lab.json")
	if err := lab.WriteState(state, s); err != nil {
		t.Fatal(err)
	}
	st, err := ReadState(state)
	if err != nil {
		t.Fatal(err)
	}
	ss := st.Clusters["demoexec"].Spire
	if ss == nil || ss.ExecEndpoint == nil || ss.ExecEndpoint.PID != s.execProc.pid() || ss.ExecEndpoint.Port != s.execPort ||
		ss.ExecEndpoint.LogPath != s.ExecLogPath() {
		t.Fatalf("state records SPIRE as %+v (exec endpoint %+v)", ss, ss.ExecEndpoint)
	}
	if err := ss.Probe(); err != nil {
		t.Fatalf("Probe: %v", err)
	}

	if err := StopFromState(state); err != nil {
		t.Fatalf("StopFromState: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for procAlive(ss.ExecEndpoint.PID) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if procAlive(ss.ExecEndpoint.PID) {
		t.Errorf("exec endpoint pid %d still running after StopFromState", ss.ExecEndpoint.PID)
	}
	if err := ss.Probe(); err == nil {
		t.Errorf("Probe succeeds after StopFromState")
	}
}
