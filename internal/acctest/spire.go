package acctest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/harness"
)

// lazy starts one component per key once per test binary and remembers the
// outcome, so a component that failed to start fails every test that needs
// it with the same reason.
type lazy[T any] struct {
	mu sync.Mutex
	m  map[string]*lazyEntry[T]
}

type lazyEntry[T any] struct {
	once sync.Once
	v    T
	err  error
}

func (l *lazy[T]) get(key string, start func() (T, error)) (T, error) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*lazyEntry[T]{}
	}
	e, ok := l.m[key]
	if !ok {
		e = &lazyEntry[T]{}
		l.m[key] = e
	}
	l.mu.Unlock()
	e.once.Do(func() { e.v, e.err = start() })
	return e.v, e.err
}

var (
	spires        lazy[*harness.Spire]
	extraClusters lazy[*harness.Cluster]

	startedMu    sync.Mutex
	startedExtra = map[string]*harness.Cluster{}
)

// Spire returns the SPIRE server of a lab cluster (east, west, or one started
// by ExtraCluster), with trust domain "<cluster>.zt.test", the bundle
// ConfigMap, the exec-able Pod and spire-controller-manager (class
// harness.DefaultSpireClassName) running against that cluster. It starts
// once per cluster per test binary and stops at exit. Tests share it: do not
// stop or rotate it in a parallel test; start a harness.StartSpire of your own.
func Spire(t *testing.T, clusterName string) *harness.Spire {
	t.Helper()
	c := anyCluster(t, clusterName)
	s, err := spires.get(clusterName, func() (*harness.Spire, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		s, err := harness.StartSpire(ctx, c, harness.SpireOptions{
			TrustDomain:       clusterName + ".zt.test",
			ControllerManager: true,
		})
		if err != nil {
			return nil, err
		}
		AtExit(func() {
			if err := s.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "acctest:", err)
			}
		})
		return s, nil
	})
	if err != nil {
		t.Fatalf("acctest: cannot start SPIRE for cluster %s: %v", clusterName, err)
	}
	return s
}

// ExtraCluster returns a cluster with the test CRDs beyond the shared lab
// (for tests that need three or four clusters), starting it on first use
// and stopping it at exit. Names must not be those of the lab.
func ExtraCluster(t *testing.T, name string) *harness.Cluster {
	t.Helper()
	work := WorkDir(t)
	if Lab(t).Cluster(name) != nil {
		t.Fatalf("acctest: %q is a cluster of the shared lab; use Cluster", name)
	}
	c, err := extraClusters.get(name, func() (*harness.Cluster, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		l, err := harness.Start(ctx, harness.Options{Names: []string{name}, Dir: filepath.Join(work, "extra")})
		if err != nil {
			return nil, err
		}
		AtExit(func() {
			if err := l.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "acctest: stopping extra cluster:", err)
			}
		})
		startedMu.Lock()
		startedExtra[name] = l.Clusters[0]
		startedMu.Unlock()
		return l.Clusters[0], nil
	})
	if err != nil {
		t.Fatalf("acctest: cannot start extra cluster %s: %v", name, err)
	}
	return c
}

// AuditedCluster returns a cluster of its own with the test CRDs and the
// apiserver's audit log (harness.Options.AuditLog), started on first use
// without the shared lab and stopped at exit: for tests that count the
// requests the provider sends. Names must not be those of the lab.
func AuditedCluster(t *testing.T, name string) *harness.Cluster {
	t.Helper()
	PreCheck(t)
	if name == East || name == West || name == Bare {
		t.Fatalf("acctest: %q is a cluster of the shared lab", name)
	}
	c, err := extraClusters.get(name, func() (*harness.Cluster, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		l, err := harness.Start(ctx, harness.Options{Names: []string{name}, Dir: filepath.Join(work, "audited"), AuditLog: true})
		if err != nil {
			return nil, err
		}
		AtExit(func() {
			if err := l.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "acctest: stopping audited cluster:", err)
			}
		})
		startedMu.Lock()
		startedExtra[name] = l.Clusters[0]
		startedMu.Unlock()
		return l.Clusters[0], nil
	})
	if err != nil {
		t.Fatalf("acctest: cannot start audited cluster %s: %v", name, err)
	}
	return c
}

// anyCluster finds a cluster of the lab or one ExtraCluster started.
func anyCluster(t *testing.T, name string) *harness.Cluster {
	t.Helper()
	startedMu.Lock()
	c := startedExtra[name]
	startedMu.Unlock()
	if c != nil {
		return c
	}
	if c := Lab(t).Cluster(name); c != nil {
		return c
	}
	t.Fatalf("acctest: no cluster %q: not in the lab, and not started with ExtraCluster or AuditedCluster", name)
	return nil
}
