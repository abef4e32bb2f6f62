package harness

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is one child process (etcd or kube-apiserver) writing to a log file.
type proc struct {
	component string // "etcd" or "kube-apiserver"
	logPath   string
	cmd       *exec.Cmd
	done      chan struct{} // closed when the process has been reaped
	waitErr   error         // valid after done is closed
}

type spawnRequest struct {
	cmd  *exec.Cmd
	errc chan error
}

var (
	spawnOnce sync.Once
	spawnc    chan spawnRequest
)

// spawnPinned starts cmd from one goroutine locked to its OS thread for the
// life of the process. Pdeathsig fires when the *thread* that forked the
// child exits, not the process; the Go runtime may retire threads, so the
// children are always forked from a thread that never goes away.
func spawnPinned(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnc = make(chan spawnRequest)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for req := range spawnc {
				req.errc <- req.cmd.Start()
			}
		}()
	})
	errc := make(chan error, 1)
	spawnc <- spawnRequest{cmd: cmd, errc: errc}
	return <-errc
}

// startProc starts bin with args, stdout and stderr going to logPath
// (truncated), and env ("KEY=value") added to childEnv. Without detach the
// child dies with this process (Pdeathsig); with detach it gets its own
// session and outlives it.
func startProc(component, bin string, args []string, logPath string, detach bool, env ...string) (*proc, error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	return startProcStdin(component, bin, args, logPath, detach, devnull, env...)
}

// startProcStdin is startProc with the child's stdin.
func startProcStdin(component, bin string, args []string, logPath string, detach bool, stdin *os.File, env ...string) (*proc, error) {
	return startProcAs(component, bin, args, logPath, detach, stdin, nil, env...)
}

// startProcAs is startProcStdin for a child that runs as cred (nil: as
// this process).
func startProcAs(component, bin string, args []string, logPath string, detach bool, stdin *os.File, cred *syscall.Credential, env ...string) (*proc, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()

	cmd := exec.Command(bin, args...)
	cmd.Dir = filepath.Dir(logPath)
	if stdin != nil { // nil: the null device
		cmd.Stdin = stdin
	}
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.Env = append(childEnv(), env...)
	if detach {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: cred}
		err = cmd.Start()
	} else {
		// Go sets the credential before the parent-death signal, which a
		// change of user would otherwise clear.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: cred}
		err = spawnPinned(cmd)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: starting %s: %w", component, bin, err)
	}
	p := &proc{component: component, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// childEnv is the environment of started processes: ours, minus variables
// that would point them at another cluster, etcd or PostgreSQL server (the
// libpq variables, PG*).
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "KUBECONFIG" || strings.HasPrefix(k, "ETCD_") || strings.HasPrefix(k, "ETCDCTL_") || strings.HasPrefix(k, "PG") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitError describes how the process ended and quotes its log.
func (p *proc) exitError() error {
	tail := fileTail(p.logPath, 25)
	err := fmt.Errorf("%s (pid %d) exited: %v; last lines of %s:\n%s", p.component, p.pid(), p.waitErr, p.logPath, tail)
	if strings.Contains(tail, "address already in use") {
		return errors.Join(err, errAddrInUse)
	}
	return err
}

// stop sends SIGTERM, waits up to grace, then SIGKILLs and waits.
func (p *proc) stop(grace time.Duration) error {
	if p == nil || p.exited() {
		return nil
	}
	if grace > 0 {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
			return nil
		case <-time.After(grace):
		}
	}
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("%s (pid %d) did not exit 30s after SIGKILL", p.component, p.pid())
	}
}

// freePorts returns n distinct free TCP ports on 127.0.0.1. They are free
// when returned, not reserved: callers retry on "address already in use".
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		ls = append(ls, l)
		addr, ok := l.Addr().(*net.TCPAddr)
		if !ok {
			return nil, fmt.Errorf("finding a free port: unexpected address %v", l.Addr())
		}
		ports = append(ports, addr.Port)
	}
	return ports, nil
}

// listensOn reports whether process pid holds a socket listening on
// 127.0.0.1:port (or any address on that port), from /proc. It tells our
// etcd apart from another process that took the port first.
func listensOn(pid, port int) bool {
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" { // 0A = LISTEN
				continue
			}
			_, hexPort, ok := strings.Cut(fields[1], ":")
			if !ok {
				continue
			}
			if v, err := strconv.ParseUint(hexPort, 16, 16); err == nil && int(v) == port {
				inodes[fields[9]] = true
			}
		}
		f.Close()
	}
	if len(inodes) == 0 {
		return false
	}
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(fdDir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		link, err := os.Readlink(filepath.Join(fdDir, e.Name()))
		if err != nil || !strings.HasPrefix(link, "socket:[") {
			continue
		}
		if inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
			return true
		}
	}
	return false
}

// procAlive reports whether pid exists and is not a zombie.
func procAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// Format: pid (comm) state ...; comm may contain spaces and parentheses.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	return s[i+2] != 'Z' && s[i+2] != 'X'
}

// procArgs returns the command line of pid.
func procArgs(pid int) []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(data) == 0 {
		return nil
	}
	return strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
}

// isOurProcess reports whether pid is alive and runs a binary called
// component with an argument mentioning dir (its data or credentials).
func isOurProcess(pid int, component, dir string) bool {
	if pid <= 0 || !procAlive(pid) {
		return false
	}
	args := procArgs(pid)
	if len(args) == 0 || filepath.Base(args[0]) != component {
		return false
	}
	for _, a := range args[1:] {
		if dir != "" && strings.Contains(a, dir) {
			return true
		}
	}
	return false
}

// procRSS returns the resident set size of pid in bytes, or 0.
func procRSS(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}
