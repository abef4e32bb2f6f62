package acctest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
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

// forget drops what key started, so the next get starts it again.
func (l *lazy[T]) forget(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.m, key)
}

// started returns what get started for key, without starting it: false
// when get was never called for key or its start failed.
func (l *lazy[T]) started(key string) (T, bool) {
	l.mu.Lock()
	e, ok := l.m[key]
	l.mu.Unlock()
	if !ok {
		var zero T
		return zero, false
	}
	e.once.Do(func() {}) // waits for a start under way
	return e.v, e.err == nil
}

var spires lazy[*harness.Spire]

// Spire returns the SPIRE server of a lab cluster (east, west, or one started
// by ExtraCluster), with trust domain "<cluster>.zt.test", the bundle
// ConfigMap, the exec-able Pod and spire-controller-manager (class
// harness.DefaultSpireClassName) running against that cluster. It starts
// once per cluster per test binary and stops at exit, or, on an OwnCluster,
// when the test that owns the cluster has finished. Tests share it: do not
// stop or rotate it in a parallel test; start a harness.StartSpire of your own.
func Spire(t *testing.T, clusterName string) *harness.Spire {
	t.Helper()
	c := Cluster(t, clusterName)
	owner := ownerOf(clusterName)
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
		stop := func() {
			if err := s.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "acctest:", err)
			}
		}
		if owner == nil {
			AtExit(stop)
		} else {
			// Registered after the cluster's stop, so it runs first.
			owner.Cleanup(func() { spires.forget(clusterName); stop() })
		}
		return s, nil
	})
	if err != nil {
		t.Fatalf("acctest: cannot start SPIRE for cluster %s: %v", clusterName, err)
	}
	return s
}

// HelmSpire returns an OwnCluster named name with a SPIRE server laid out
// as the SPIFFE Helm chart installs it (harness.SpireOptions.Helm: release
// spire in namespace spire-server, class spire-server-spire, bundle
// published in spire-system by real SPIRE's BundlePublisher "k8s_configmap"
// under bundle.spiffe, as the chart's defaults have it), trust domain
// "<name>.zt.test", and spire-controller-manager; both stop when t has
// finished.
func HelmSpire(t *testing.T, name string) *harness.Spire {
	t.Helper()
	c := OwnCluster(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := harness.StartSpire(ctx, c, harness.SpireOptions{
		TrustDomain: name + ".zt.test", Helm: true, ControllerManager: true,
	})
	if err != nil {
		t.Fatalf("acctest: cannot start the chart's SPIRE for cluster %s: %v", name, err)
	}
	// Registered after the cluster's stop, so it runs first.
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("acctest: %v", err)
		}
	})
	return s
}
