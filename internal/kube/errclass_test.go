package kube_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// countingProxy sits between a client and a real kube-apiserver. It counts
// the requests for one resource type and for CRD lookups, and can answer the
// next few requests for that type itself (a status code, or hanging up)
// before it forwards again. The client's retries are what it counts, so a
// test can tell "failed after one request" from "retried until it worked".
type countingProxy struct {
	srv      *httptest.Server
	caPEM    []byte
	resource string // path element counted, e.g. "/spireservers"

	mu       sync.Mutex
	resCount int
	crdCount int
	inject   []func(http.ResponseWriter) // one per upcoming request; consumed in order
	seen     []string                    // method and URI of each counted request, for failure messages
}

func newCountingProxy(t *testing.T, c *harness.Cluster, resource string) *countingProxy {
	t.Helper()
	upstream, err := url.Parse(c.Host)
	if err != nil {
		t.Fatal(err)
	}
	upCfg := c.RESTConfig()
	tr, err := rest.TransportFor(&rest.Config{TLSClientConfig: rest.TLSClientConfig{CAData: upCfg.CAData}})
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(upstream)
	rp.Transport = tr
	p := &countingProxy{resource: resource}
	// HTTP/1.1 only (httptest's default), so the proxy can hang up on a request.
	p.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		var inject func(http.ResponseWriter)
		switch {
		case strings.Contains(r.URL.Path, "/customresourcedefinitions/"):
			p.crdCount++
		case strings.Contains(r.URL.Path, p.resource):
			p.resCount++
			p.seen = append(p.seen, r.Method+" "+r.URL.RequestURI())
			if len(p.inject) > 0 {
				inject, p.inject = p.inject[0], p.inject[1:]
			}
		}
		p.mu.Unlock()
		if inject != nil {
			inject(w)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	return p
}

// client reaches the cluster through the proxy with token.
func (p *countingProxy) client(t *testing.T, name, token string) *kube.Client {
	t.Helper()
	c, err := kube.NewClient(name, &rest.Config{
		Host: p.srv.URL, BearerToken: token, QPS: 50, Burst: 100,
		TLSClientConfig: rest.TLSClientConfig{CAData: p.caPEM},
	}, "zerotrust")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// reset zeroes the counters and queues answers for the next requests.
func (p *countingProxy) reset(inject ...func(http.ResponseWriter)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.resCount, p.crdCount, p.inject, p.seen = 0, 0, inject, nil
}

// requests are the method and URI of each counted request since reset.
func (p *countingProxy) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}

func (p *countingProxy) counts() (resource, crd int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.resCount, p.crdCount
}

// status answers like the API server would, without a Retry-After header:
// client-go then leaves the retry (or not) to the provider.
func status(code int, reason string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",`+
			`"message":"injected by the test proxy","reason":%q,"code":%d}`, reason, code)
	}
}

// hangUp closes the connection without an answer (the client sees EOF).
func hangUp(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("the proxy must serve HTTP/1.1 to hang up")
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

func spireServer(federation map[string]any) *unstructured.Unstructured {
	spec := harness.SpireServerRequiredSpec()
	spec["federation"] = federation
	return &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "cluster"},
		"spec":     spec,
	}}
}

func endpoint(fields map[string]any) map[string]any {
	be := map[string]any{"profile": "https_spiffe"}
	for k, v := range fields {
		be[k] = v
	}
	return map[string]any{"bundleEndpoint": be}
}

// permanentCase is one answer that must fail at the first request.
type permanentCase struct {
	name   string
	client *kube.Client
	kind   kube.Kind
	obj    *unstructured.Unstructured
	// force takes over the fields the "operator" manager owns, so the
	// answer is about the object rather than a conflict.
	force   bool
	summary string
	detail  []string // substrings the diagnostic's detail must contain
}

// TestAccErrorClassesAgainstAPIServer sends requests to a real kube-apiserver
// with the operators' published CRDs. Permanent answers (a field the schema
// does not declare, a value outside its limits, a CEL rule, RBAC, a field
// owned by another manager, a CRD that is not installed) must come back
// after exactly one request, within a moment, with a diagnostic naming the
// field, the object and the cluster. Throttling, server errors and lost
// connections must be retried until the request gets through.
func TestAccErrorClassesAgainstAPIServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	lab := acctest.LabFor(t, "errs", harness.Options{Names: []string{"errs"}})
	bare := acctest.LabFor(t, "errs-bare", harness.Options{Names: []string{"errs-bare"}, SkipCRDs: true})
	c := lab.Clusters[0]

	// The SpireServer as the operator would hold it, with a federation
	// endpoint whose profile is now fixed, and a refresh hint another
	// manager owns.
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	seed := spireServer(endpoint(map[string]any{"refreshHint": int64(600)}))
	seed.SetAPIVersion(kube.SpireServer.APIVersion())
	seed.SetKind(kube.SpireServer.Kind)
	if _, err := dyn.Resource(kube.SpireServer.GVR()).Apply(ctx, "cluster", seed,
		metav1.ApplyOptions{FieldManager: "operator", Force: true}); err != nil {
		t.Fatalf("creating the SpireServer: %v", err)
	}

	proxy := newCountingProxy(t, c, "/spireservers")
	admin := proxy.client(t, "errs", c.Token)
	viewer := proxy.client(t, "errs", c.ViewerToken)
	bareProxy := newCountingProxy(t, bare.Clusters[0], "/clusterfederatedtrustdomains")
	bareClient := bareProxy.client(t, "errs-bare", bare.Clusters[0].Token)

	cftd := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "peer"},
		"spec":     map[string]any{"trustDomain": "peer.test", "bundleEndpointURL": "https://peer.test"},
	}}
	for _, tc := range []permanentCase{
		{"unknown field", admin, kube.SpireServer, spireServer(endpoint(map[string]any{"port": int64(8443)})), true,
			"Field Not in the Cluster's Schema",
			[]string{".spec.federation.bundleEndpoint.port: field not declared in schema", `SpireServer "cluster"`, `cluster "errs"`}},
		{"422 out of bounds", admin, kube.SpireServer, spireServer(endpoint(map[string]any{"refreshHint": int64(30)})), true,
			"Cluster Rejected the Object",
			[]string{"spec.federation.bundleEndpoint.refreshHint", "greater than or equal to 60", `SpireServer "cluster"`, `cluster "errs"`}},
		{"CEL: immutable profile", admin, kube.SpireServer, spireServer(map[string]any{"bundleEndpoint": map[string]any{
			"profile": "https_web", "httpsWeb": map[string]any{"servingCert": map[string]any{"externalSecretRef": "federation-tls"}},
		}}), true, "Cluster Rejected the Object",
			[]string{"spec.federation.bundleEndpoint", "profile is immutable", `SpireServer "cluster"`, `cluster "errs"`}},
		{"CEL: https_web without its configuration", admin, kube.SpireServer,
			spireServer(map[string]any{"bundleEndpoint": map[string]any{"profile": "https_web"}}), true, "Cluster Rejected the Object",
			[]string{"httpsWeb is required when profile is https_web", `SpireServer "cluster"`, `cluster "errs"`}},
		{"403 forbidden", viewer, kube.SpireServer, spireServer(endpoint(nil)), true, "Forbidden by the Cluster's RBAC",
			[]string{`may not "patch" the resource "spireservers.operator.openshift.io"`, `SpireServer "cluster"`, `cluster "errs"`}},
		{"409 field manager conflict", admin, kube.SpireServer, spireServer(endpoint(map[string]any{"refreshHint": int64(900)})), false,
			"Field Manager Conflict",
			[]string{`manager "operator" owns .spec.federation.bundleEndpoint.refreshHint`, `SpireServer "cluster"`, `cluster "errs"`, "force_conflicts"}},
		{"missing CRD", bareClient, kube.ClusterFederatedTrustDomain, cftd, false, "CustomResourceDefinition Not Installed",
			[]string{`"clusterfederatedtrustdomains.spire.spiffe.io"`, `cluster "errs-bare"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := proxy
			if tc.client == bareClient {
				p = bareProxy
			}
			p.reset()
			start := time.Now()
			_, err := tc.client.Apply(ctx, tc.kind, tc.obj, tc.force)
			elapsed := time.Since(start)
			if err == nil {
				t.Fatal("the API server accepted the object")
			}
			if n, _ := p.counts(); n != 1 {
				t.Errorf("%d requests for %s, want exactly 1: a permanent answer must not be retried", n, tc.kind.Plural)
			}
			// One request and at most one CRD lookup; generous for a loaded machine,
			// far below the 10 s CRD grace and the 30 s retry budget.
			if elapsed > 5*time.Second {
				t.Errorf("took %v, want an answer at once", elapsed)
			}
			d := kube.Diagnostic(err, "apply the test object")
			if d.Summary() != tc.summary {
				t.Errorf("summary %q, want %q (detail: %s)", d.Summary(), tc.summary, d.Detail())
			}
			for _, want := range tc.detail {
				if !strings.Contains(d.Detail(), want) {
					t.Errorf("detail lacks %q:\n%s", want, d.Detail())
				}
			}
			if strings.Contains(d.Detail(), "even after retries") {
				t.Errorf("a permanent refusal is reported as an outage:\n%s", d.Detail())
			}
		})
	}
	t.Run("missing CRD is looked up once", func(t *testing.T) {
		// Absent CRD: one lookup settles it; no waiting for it to appear.
		if _, crd := bareProxy.counts(); crd != 1 {
			t.Errorf("%d CRD lookups, want 1", crd)
		}
	})

	// Retried classes: the proxy answers the first requests itself, then
	// forwards; the apply must succeed, having sent exactly one request more
	// than the injected failures.
	for _, tc := range []struct {
		name   string
		inject []func(http.ResponseWriter)
	}{
		{"429 too many requests", []func(http.ResponseWriter){status(429, "TooManyRequests"), status(429, "TooManyRequests"), status(429, "TooManyRequests")}},
		{"503 unavailable", []func(http.ResponseWriter){status(503, "ServiceUnavailable"), status(503, "ServiceUnavailable")}},
		{"500 internal error that is not a schema error", []func(http.ResponseWriter){status(500, "InternalError")}},
		{"connection closed without an answer", []func(http.ResponseWriter){hangUp, hangUp}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxy.reset(tc.inject...)
			out, err := admin.Apply(ctx, kube.SpireServer, spireServer(endpoint(nil)), false)
			if err != nil {
				t.Fatalf("Apply through %d injected failures: %v", len(tc.inject), err)
			}
			if n, _ := proxy.counts(); n != len(tc.inject)+1 {
				t.Errorf("%d requests, want %d (each failure retried once)", n, len(tc.inject)+1)
			}
			if p, _, _ := unstructured.NestedString(out.Object, "spec", "federation", "bundleEndpoint", "profile"); p != "https_spiffe" {
				t.Errorf("applied object has profile %q", p)
			}
		})
	}

	t.Run("CRD without the provider's version", func(t *testing.T) {
		docs, err := harness.UpstreamCRDDocuments()
		if err != nil {
			t.Fatal(err)
		}
		if err := harness.InstallCRDs(ctx, bare.Clusters[0].RESTConfig(), docs); err != nil {
			t.Fatal(err)
		}
		// The operator's CRD serves v1alpha1 only: asking for another version
		// is as final as a missing CRD, and the message says which it serves.
		future := kube.SpireServer
		future.Version = "v1beta9"
		p := newCountingProxy(t, bare.Clusters[0], "/spireservers")
		client := p.client(t, "errs-bare", bare.Clusters[0].Token)
		start := time.Now()
		_, err = client.Apply(ctx, future, spireServer(endpoint(nil)), false)
		if n, crd := p.counts(); n != 1 || crd != 1 || time.Since(start) > 5*time.Second {
			t.Errorf("%d requests and %d CRD lookups in %v, want 1 and 1 at once", n, crd, time.Since(start))
		}
		d := kube.Diagnostic(err, "apply the test object")
		if d.Summary() != "CustomResourceDefinition Version Not Served" ||
			!strings.Contains(d.Detail(), `"spireservers.operator.openshift.io" serves only v1alpha1`) {
			t.Errorf("diagnostic %q: %s", d.Summary(), d.Detail())
		}
	})

	t.Run("connection refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		_ = ln.Close()
		var attempts atomic.Int64
		cfg := &rest.Config{Host: "https://" + addr, BearerToken: "x", QPS: 50, Burst: 100,
			TLSClientConfig: rest.TLSClientConfig{CAData: c.RESTConfig().CAData},
			WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
				return roundTripFunc(func(r *http.Request) (*http.Response, error) {
					attempts.Add(1)
					return rt.RoundTrip(r)
				})
			}}
		refused, err := kube.NewClient("nobody-home", cfg, "zerotrust")
		if err != nil {
			t.Fatal(err)
		}
		// Nothing listens: the one bounded probe (Reachable) says so, and the
		// request fails at once without retries, naming the cluster and its
		// address. (It was retried for the 30 s budget before a run learned
		// to tell a dead cluster from a dropped connection; a live server
		// that drops one connection still gets its retries:
		// TestDroppedConnectionRetried.)
		start := time.Now()
		_, err = refused.Get(ctx, kube.SpireServer, "", "cluster")
		if err == nil {
			t.Fatal("Get from a closed port succeeded")
		}
		if n, took := attempts.Load(), time.Since(start); n != 1 || took > kube.PlanReachTimeout {
			t.Errorf("%d attempts in %s, want the one probe, at once", n, took)
		}
		d := kube.Diagnostic(err, "read the SpireServer cluster")
		if d.Summary() != "Cluster Unreachable" || !strings.Contains(d.Detail(), `cluster "nobody-home" at https://`+addr) {
			t.Errorf("diagnostic %q: %s", d.Summary(), d.Detail())
		}
		// A later request of the same walk does not ask again.
		if _, err := refused.Get(ctx, kube.SpireServer, "", "other"); !kube.IsUnreachable(err) || attempts.Load() != 1 {
			t.Errorf("second Get: %v after %d attempts, want the same answer without asking", err, attempts.Load())
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
