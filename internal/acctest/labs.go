package acctest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// labStartTimeout bounds one lab's start: its kube-apiservers, etcds and
// CRDs, on a machine that may be busy with other test binaries.
const labStartTimeout = 10 * time.Minute

var (
	labs lazy[*harness.Lab]

	startedMu    sync.Mutex
	startedExtra = map[string]*harness.Cluster{}
	owners       = map[string]*testing.T{}
	ownedStarts  atomic.Int64
)

// LabFor returns the lab opts describe, started once per name and test
// binary in a directory of its own (opts.Dir is set here) and stopped when
// the binary's tests have finished: every lab of a test binary starts here.
// Tests that ask for the same name share the lab; one that could not start
// fails every test that asks for it, with the reason.
func LabFor(t *testing.T, name string, opts harness.Options) *harness.Lab {
	t.Helper()
	return labFor(t, name, opts, nil)
}

// labFor starts the lab once per name; owner, when set, is the one test the
// lab belongs to: it stops when owner has finished, and a later test that
// asks for the name starts it again, in a directory of its own.
func labFor(t *testing.T, name string, opts harness.Options, owner *testing.T) *harness.Lab {
	t.Helper()
	dir := filepath.Join(WorkDir(t), "lab-"+name)
	l, err := labs.get(name, func() (*harness.Lab, error) {
		if owner != nil {
			// A later owner starts the lab again; the earlier one's logs stay.
			dir = fmt.Sprintf("%s-%d", dir, ownedStarts.Add(1))
		}
		l, err := startLab(name, dir, opts)
		if err != nil {
			return nil, err
		}
		stop := func() {
			if err := l.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "acctest: stopping lab %s: %v\n", name, err)
			}
		}
		if owner == nil {
			AtExit(stop)
		} else {
			owner.Cleanup(func() { labs.forget(name); stop() })
		}
		return l, nil
	})
	if err != nil {
		t.Fatalf("acctest: cannot start lab %s (clusters %v): %v", name, opts.Names, err)
	}
	return l
}

// startLab starts a lab in dir, and once more in a directory of its own
// when the first start ran out of time: on a machine loaded by other test
// binaries a component can miss its readiness bound without anything being
// wrong. Any other failure (a missing CRD, a bad flag) is returned at once,
// because a second start would only fail the same way.
func startLab(name, dir string, opts harness.Options) (*harness.Lab, error) {
	return startRetryingOnTimeout(fmt.Sprintf("%s (clusters %v)", name, opts.Names), dir, func(dir string) (*harness.Lab, error) {
		ctx, cancel := context.WithTimeout(context.Background(), labStartTimeout)
		defer cancel()
		opts.Dir = dir
		return harness.Start(ctx, opts)
	})
}

func startRetryingOnTimeout[L any](what, dir string, start func(dir string) (L, error)) (L, error) {
	l, err := start(dir)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		return l, err
	}
	retryDir := dir + "-retry"
	fmt.Fprintf(os.Stderr, "acctest: lab %s did not start in time; retrying once in %s. The first start failed: %v\n", what, retryDir, err)
	l, retryErr := start(retryDir)
	if retryErr != nil {
		return l, fmt.Errorf("it did not start in time, and the one retry failed too.\nFirst start: %w\nRetry: %w", err, retryErr)
	}
	return l, nil
}

var sharedLab lazy[*harness.Lab]

// Lab returns the shared lab (east and west with the test CRDs, bare
// without), starting it (and the terraform CLI) on first use, so test runs
// without acceptance tests start nothing.
func Lab(t *testing.T) *harness.Lab {
	t.Helper()
	crds := LabFor(t, "shared", harness.Options{Names: []string{East, West}})
	bare := LabFor(t, "bare", harness.Options{Names: []string{Bare}, SkipCRDs: true})
	l, _ := sharedLab.get("", func() (*harness.Lab, error) {
		return &harness.Lab{Dir: work, Clusters: append(slices.Clone(crds.Clusters), bare.Clusters...)}, nil
	})
	return l
}

// Cluster returns a cluster of the shared lab, or one ExtraCluster or
// AuditedCluster started (without starting the lab for it).
func Cluster(t *testing.T, name string) *harness.Cluster {
	t.Helper()
	startedMu.Lock()
	extra := startedExtra[name]
	startedMu.Unlock()
	if extra != nil {
		return extra
	}
	c := Lab(t).Cluster(name)
	if c == nil {
		t.Fatalf("acctest: no cluster %q in the lab", name)
	}
	return c
}

// ExtraCluster returns a cluster with the test CRDs beyond the shared lab
// (for tests that need three or four clusters), starting it on first use
// and stopping it at exit. Names must not be those of the lab. A cluster
// only one test uses is an OwnCluster instead.
func ExtraCluster(t *testing.T, name string) *harness.Cluster {
	t.Helper()
	notShared(t, name)
	return started(t, name, LabFor(t, "extra-"+name, harness.Options{Names: []string{name}}), nil)
}

// OwnCluster returns a cluster with the test CRDs that belongs to t: started
// now and stopped, with the SPIRE server Spire started on it, when t and its
// subtests have finished. A cluster kept until the test binary exits costs
// its kube-apiserver, etcd, SPIRE server and spire-controller-manager a few
// CPU seconds a minute for the rest of the package, which on a two-core
// machine slows every test that runs after it; a cluster no other test uses
// is therefore an own cluster. Names must not be those of the lab, and two
// tests running at once cannot own the same name.
func OwnCluster(t *testing.T, name string) *harness.Cluster {
	t.Helper()
	notShared(t, name)
	startedMu.Lock()
	holder, held := owners[name]
	if !held {
		owners[name] = t
	}
	startedMu.Unlock()
	if held && holder != t {
		t.Fatalf("acctest: cluster %q belongs to %s, which is still running", name, holder.Name())
	}
	t.Cleanup(func() {
		startedMu.Lock()
		defer startedMu.Unlock()
		delete(owners, name)
		delete(startedExtra, name)
	})
	return started(t, name, labFor(t, "own-"+name, harness.Options{Names: []string{name}}, t), t)
}

// ownerOf is the test an OwnCluster belongs to, or nil for a cluster that
// lives until the test binary exits.
func ownerOf(name string) *testing.T {
	startedMu.Lock()
	defer startedMu.Unlock()
	return owners[name]
}

func notShared(t *testing.T, name string) {
	t.Helper()
	if name == East || name == West || name == Bare {
		t.Fatalf("acctest: %q is a cluster of the shared lab; use Cluster", name)
	}
}

// AuditedCluster returns a cluster of its own with the test CRDs and the
// apiserver's audit log (harness.Options.AuditLog), started on first use
// without the shared lab and stopped at exit: for tests that count the
// requests the provider sends. Names must not be those of the lab.
func AuditedCluster(t *testing.T, name string) *harness.Cluster {
	t.Helper()
	notShared(t, name)
	return started(t, name, LabFor(t, "audited-"+name, harness.Options{Names: []string{name}, AuditLog: true}), nil)
}

// started records the one cluster of l as the cluster name, for Cluster
// and Spire; a name started as two kinds of cluster (extra, audited, own)
// is a test's mistake.
func started(t *testing.T, name string, l *harness.Lab, owner *testing.T) *harness.Cluster {
	t.Helper()
	c := l.Cluster(name)
	startedMu.Lock()
	defer startedMu.Unlock()
	if prev, ok := startedExtra[name]; ok && prev != c {
		t.Fatalf("acctest: cluster %q was started twice, as two kinds of cluster", name)
	}
	if owner == nil && owners[name] != nil {
		t.Fatalf("acctest: cluster %q is an own cluster of %s", name, owners[name].Name())
	}
	startedExtra[name] = c
	return c
}

// ClosedAddress is a host:port on 127.0.0.1 where nothing listens, for a
// cluster or endpoint that does not answer: a connection is refused. The
// port stays taken until the test ends, by a socket bound to it that never
// listens (without SO_REUSEADDR, so no other socket may bind it): a port
// merely closed again was handed to the next listener of a parallel test,
// whose TLS server then answered in its place (CI of 932ea35,
// TestAccTrustBundleDataSource_published).
func ClosedAddress(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("ClosedAddress: socket: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("ClosedAddress: bind: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("ClosedAddress: getsockname: %v", err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		t.Fatalf("ClosedAddress: bound to %T, want an IPv4 address", sa)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(in4.Port))
}

// SilentAddress is a host:port on 127.0.0.1 that accepts connections and
// never writes to them, not even a TLS handshake, until the test ends: a
// cluster behind a firewall that drops, or a hung server, which a client
// notices only by its own timeouts.
func SilentAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return l.Addr().String()
}
