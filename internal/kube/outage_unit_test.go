package kube_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// fakeAPI serves /version and one kind's objects: GET, server-side apply
// (the body is stored with a managedFields entry for its field manager),
// and a 403 for the name "forbidden". It counts requests by method.
type fakeAPI struct {
	mu      sync.Mutex
	objects map[string]map[string]any
	gets    atomic.Int32
	patches atomic.Int32
}

const cftdPath = "/apis/spire.spiffe.io/v1alpha1/clusterfederatedtrustdomains/"

func newFakeAPI(t *testing.T) *httptest.Server {
	f := &fakeAPI{objects: map[string]map[string]any{}}
	srv := httptest.NewTLSServer(f)
	t.Cleanup(srv.Close)
	return srv
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/version" {
		_, _ = w.Write([]byte(`{"major":"1","minor":"35"}`))
		return
	}
	name := strings.TrimPrefix(r.URL.Path, cftdPath)
	if name == "forbidden" {
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,` +
			`"message":"clusterfederatedtrustdomains \"forbidden\" is forbidden"}`))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.Method {
	case http.MethodGet:
		f.gets.Add(1)
		obj, ok := f.objects[name]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,` +
				`"details":{"name":"` + name + `","kind":"clusterfederatedtrustdomains"}}`))
			return
		}
		_ = json.NewEncoder(w).Encode(obj)
	case http.MethodPatch:
		f.patches.Add(1)
		var obj map[string]any
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &obj)
		meta, _ := obj["metadata"].(map[string]any)
		meta["managedFields"] = []any{map[string]any{
			"manager": r.URL.Query().Get("fieldManager"), "operation": "Apply", "apiVersion": "spire.spiffe.io/v1alpha1",
			"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": map[string]any{"f:trustDomain": map[string]any{}}},
		}}
		f.objects[name] = obj
		_ = json.NewEncoder(w).Encode(obj)
	}
}

var (
	errRefused = &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	errReset   = &net.OpError{Op: "read", Net: "tcp", Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}
)

// outageClient is a client of srv whose requests other than /version go
// through fault (the probe is asked before any, so the cluster answered
// first), with the reconnect timeout bound.
func outageClient(t *testing.T, srv *httptest.Server, bound time.Duration,
	fault func(r *http.Request, send func() (*http.Response, error)) (*http.Response, error)) *kube.Client {
	t.Helper()
	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if r.URL.Path == "/version" {
					return rt.RoundTrip(r)
				}
				return fault(r, func() (*http.Response, error) { return rt.RoundTrip(r) })
			})
		}}
	client, err := kube.NewClient("west", cfg, "zerotrust-test")
	if err != nil {
		t.Fatal(err)
	}
	client.ReconnectTimeout = bound
	if err := client.Reachable(context.Background()); err != nil {
		t.Fatalf("the fake API server did not answer the probe: %v", err)
	}
	return client
}

func cftd(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"trustDomain": name + ".test"},
	}}
}

// TestBlipRiddenOut: a cluster that answered, then refuses connections for
// a second (less than the bound), is waited for: the request succeeds, and
// the cluster is not found dead.
func TestBlipRiddenOut(t *testing.T) {
	srv := newFakeAPI(t)
	var downUntil atomic.Int64
	var refused atomic.Int32
	client := outageClient(t, srv, 10*time.Second, func(_ *http.Request, send func() (*http.Response, error)) (*http.Response, error) {
		if time.Now().UnixNano() < downUntil.Load() {
			refused.Add(1)
			return nil, errRefused
		}
		return send()
	})
	if _, err := client.Apply(context.Background(), kube.ClusterFederatedTrustDomain, cftd("a"), false); err != nil {
		t.Fatal(err)
	}
	downUntil.Store(time.Now().Add(time.Second).UnixNano())
	start := time.Now()
	obj, err := client.Get(context.Background(), kube.ClusterFederatedTrustDomain, "", "a")
	if err != nil || obj.GetName() != "a" {
		t.Fatalf("Get through a 1 s blip = %v, %v; want the object", obj, err)
	}
	if took := time.Since(start); took < time.Second || took > 4*time.Second || refused.Load() < 2 {
		t.Errorf("Get took %s through %d refused attempts, want about 1 s and several attempts", took, refused.Load())
	}
	if err := client.Reachable(context.Background()); err != nil {
		t.Errorf("Reachable after the blip = %v, want nil", err)
	}
}

// TestOutageOutlastsBound: a cluster that answered and stays down fails the
// request once the reconnect timeout has passed since it stopped answering,
// with the *OutageError naming it and the wait; later requests fail at once.
func TestOutageOutlastsBound(t *testing.T) {
	srv := newFakeAPI(t)
	const bound = 1500 * time.Millisecond
	client := outageClient(t, srv, bound, func(*http.Request, func() (*http.Response, error)) (*http.Response, error) {
		return nil, errRefused
	})
	start := time.Now()
	_, err := client.Get(context.Background(), kube.ClusterFederatedTrustDomain, "", "a")
	took := time.Since(start)
	var outage *kube.OutageError
	if !errors.As(err, &outage) || kube.IsUnreachable(err) {
		t.Fatalf("Get = %v, want an *OutageError", err)
	}
	if took < bound || took > bound+time.Second {
		t.Errorf("Get failed after %s, want at the bound of %s", took, bound)
	}
	if outage.Cluster != "west" || outage.Waited < bound || outage.Bound != bound {
		t.Errorf("the error names %q, waited %s of %s; want west, at least %s", outage.Cluster, outage.Waited, outage.Bound, bound)
	}
	d := kube.Diagnostic(err, "read the object")
	for _, want := range []string{"Cluster Stopped Answering", `"west"`, "waited 1.5s", "next apply resumes"} {
		if !strings.Contains(d.Summary()+d.Detail(), want) {
			t.Errorf("the diagnostic does not say %q:\n%s\n%s", want, d.Summary(), d.Detail())
		}
	}
	start = time.Now()
	_, err = client.Apply(context.Background(), kube.ClusterFederatedTrustDomain, cftd("b"), false)
	if took := time.Since(start); !kube.IsOutage(err) || took > 50*time.Millisecond {
		t.Errorf("the next request answered %v after %s, want the outage at once", err, took)
	}
}

// TestWriteReadBackBeforeResend: a server-side apply whose connection broke
// after the API server carried it out is read back and not sent again; one
// refused at connect (never sent) is sent again without a read back.
func TestWriteReadBackBeforeResend(t *testing.T) {
	for _, tc := range []struct {
		name          string
		fail          error
		landed        bool
		patches, gets int32
	}{
		{"reset after the server wrote it", errReset, true, 1, 1},
		{"refused at connect", errRefused, false, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeAPI{objects: map[string]map[string]any{}}
			srv := httptest.NewTLSServer(f)
			t.Cleanup(srv.Close)
			var failed atomic.Bool
			client := outageClient(t, srv, 10*time.Second, func(r *http.Request, send func() (*http.Response, error)) (*http.Response, error) {
				if r.Method != http.MethodPatch || failed.Swap(true) {
					return send()
				}
				if tc.landed {
					resp, err := send()
					if err == nil {
						_ = resp.Body.Close()
					}
				}
				return nil, tc.fail
			})
			obj, err := client.Apply(context.Background(), kube.ClusterFederatedTrustDomain, cftd("a"), false)
			if err != nil || obj.GetName() != "a" {
				t.Fatalf("Apply = %v, %v; want the object", obj, err)
			}
			if p, g := f.patches.Load(), f.gets.Load(); p != tc.patches || g != tc.gets {
				t.Errorf("the server saw %d applies and %d reads, want %d and %d", p, g, tc.patches, tc.gets)
			}
		})
	}
}

// TestRefusalIsNoOutage: a 403 (or any answer refusing the request itself)
// is not retried nor taken for an outage; right after an outage it is
// retried while the API server may still be starting (at most the rest of
// the reconnect timeout here), then reported as the refusal it is.
func TestRefusalIsNoOutage(t *testing.T) {
	const bound = 1500 * time.Millisecond
	for _, tc := range []struct {
		name        string
		resets      int32
		min, max    time.Duration
		minAttempts int32
	}{
		{"no outage before", 0, 0, 500 * time.Millisecond, 1},
		{"right after an outage", 1, bound - 200*time.Millisecond, bound + time.Second, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeAPI(t)
			var calls atomic.Int32
			client := outageClient(t, srv, bound, func(_ *http.Request, send func() (*http.Response, error)) (*http.Response, error) {
				if calls.Add(1) <= tc.resets {
					// Refused, not reset: client-go retries a GET whose
					// connection was reset itself, unseen by the client.
					return nil, errRefused
				}
				return send()
			})
			start := time.Now()
			_, err := client.Get(context.Background(), kube.ClusterFederatedTrustDomain, "", "forbidden")
			took := time.Since(start)
			if !apierrors.IsForbidden(err) || kube.IsOutage(err) {
				t.Fatalf("Get = %v, want the 403 itself", err)
			}
			if took < tc.min || took > tc.max || calls.Load() < tc.minAttempts || (tc.resets == 0 && calls.Load() != 1) {
				t.Errorf("the 403 came after %s and %d attempts, want %s to %s and at least %d", took, calls.Load(), tc.min, tc.max, tc.minAttempts)
			}
		})
	}
}
