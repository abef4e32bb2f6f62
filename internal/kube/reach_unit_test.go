package kube_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
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
