package kube_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// TestReachable: an address where nothing listens and a listener that never
// answers are unreachable, the latter at PlanReachTimeout rather than after
// retries; any HTTP answer, a refusal included, is reachable; the answer is
// asked once per client.
func TestReachable(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	t.Cleanup(func() {
		_ = silent.Close()
		close(accepted)
		for c := range accepted {
			_ = c.Close()
		}
	})
	var asked atomic.Int32
	refusing := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		asked.Add(1)
		http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`, http.StatusForbidden)
	}))
	t.Cleanup(refusing.Close)

	for _, tc := range []struct {
		name, host  string
		unreachable bool
	}{
		{"nothing listens", "https://127.0.0.1:1", true},
		{"never answers", "https://" + silent.Addr().String(), true},
		{"refuses", refusing.URL, false},
	} {
		client, err := kube.NewClient("c", &rest.Config{Host: tc.host, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, "zerotrust-test")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err = client.Reachable(context.Background())
		took := time.Since(start)
		var unreachable *kube.UnreachableError
		if got := errors.As(err, &unreachable); got != tc.unreachable {
			t.Errorf("%s: Reachable = %v, want unreachable %v", tc.name, err, tc.unreachable)
		}
		if tc.unreachable && (unreachable.Host != tc.host || unreachable.Cluster != "c") {
			t.Errorf("%s: the error names %q at %q, want %q at %q", tc.name, unreachable.Cluster, unreachable.Host, "c", tc.host)
		}
		// Far above the bound, far below the client's retries (30 s): this
		// catches a retry, not a slow machine.
		if within := kube.PlanReachTimeout + 10*time.Second; took > within {
			t.Errorf("%s: Reachable took %s, want at most %s", tc.name, took, within)
		}
		if err2 := client.Reachable(context.Background()); !errors.Is(err2, err) && err2 != err {
			t.Errorf("%s: the second call answered %v, the first %v", tc.name, err2, err)
		}
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("the refusing server was asked %d times, want once per client", n)
	}
}

// TestFailFast: a request to a cluster that does not answer when first
// needed fails within the probe's bound with the *UnreachableError, and
// later requests of the same client fail at once. (A cluster that stops
// answering after it answered is waited for instead: TestBlipRiddenOut,
// TestOutageOutlastsBound.)
func TestFailFast(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = silent.Close() })
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	host := "https://" + silent.Addr().String()
	client, err := kube.NewClient("c", &rest.Config{Host: host, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, "zerotrust-test")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = client.Get(context.Background(), kube.SpireServer, "", "cluster")
	if took := time.Since(start); !kube.IsUnreachable(err) || took > kube.PlanReachTimeout+2*time.Second {
		t.Errorf("Get answered %v after %s, want the cluster unreachable within about %s", err, took, kube.PlanReachTimeout)
	}
	start = time.Now()
	_, err = client.Get(context.Background(), kube.SpireServer, "", "other")
	if took := time.Since(start); !kube.IsUnreachable(err) || took > 100*time.Millisecond {
		t.Errorf("the second Get answered %v after %s, want the same answer at once", err, took)
	}
}

// TestDroppedConnectionRetried: a live server whose connection is refused
// once is not dead: the request is retried, and the probe is not asked
// again.
func TestDroppedConnectionRetried(t *testing.T) {
	var versions atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/version" {
			versions.Add(1)
			_, _ = w.Write([]byte(`{"major":"1","minor":"35"}`))
			return
		}
		_, _ = w.Write([]byte(`{"apiVersion":"operator.openshift.io/v1alpha1","kind":"SpireServer","metadata":{"name":"cluster"}}`))
	}))
	t.Cleanup(srv.Close)
	var requests atomic.Int32
	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if r.URL.Path != "/version" && requests.Add(1) == 1 {
					return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
				}
				return rt.RoundTrip(r)
			})
		}}
	client, err := kube.NewClient("c", cfg, "zerotrust-test")
	if err != nil {
		t.Fatal(err)
	}
	obj, err := client.Get(context.Background(), kube.SpireServer, "", "cluster")
	if err != nil || obj.GetName() != "cluster" {
		t.Fatalf("Get = %v, %v; want the object after one retry", obj, err)
	}
	if n, v := requests.Load(), versions.Load(); n != 2 || v != 1 {
		t.Errorf("%d requests for the object and %d probes, want 2 (one refused, one retried) and 1 (first use)", n, v)
	}
}

// TestConfigurationIsNotUnreachable: a server whose certificate does not
// verify answered the handshake: that is the connection's configuration, not
// a dead cluster, so Reachable lets the request go on and fail with its own
// error (never kept as "does not answer" by on_unreachable = "warn").
func TestConfigurationIsNotUnreachable(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	client, err := kube.NewClient("c", &rest.Config{Host: srv.URL}, "zerotrust-test")
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Reachable(context.Background()); err != nil {
		t.Errorf("Reachable = %v, want nil for a certificate that does not verify", err)
	}
	_, err = client.Get(context.Background(), kube.SpireServer, "", "cluster")
	if err == nil || kube.IsUnreachable(err) || !strings.Contains(err.Error(), "x509") {
		t.Errorf("Get = %v, want the certificate error itself", err)
	}
}
