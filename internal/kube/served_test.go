package kube_test

import (
	"context"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// TestAccServedAgainstAPIServer asks a real API server's discovery documents
// whether kinds are served: an installed CRD, a core kind, a missing kind in
// a served group, and a group that does not exist (404 from the API server).
func TestAccServedAgainstAPIServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	lab := acctest.LabFor(t, "served", harness.Options{Names: []string{"served"}})
	client, err := kube.NewClient("served", lab.Clusters[0].RESTConfig(), "zerotrust-test")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		kind kube.Kind
		want bool
	}{
		{"installed CRD", kube.ClusterFederatedTrustDomain, true},
		{"core kind", kube.Kind{Version: "v1", Kind: "ConfigMap", Plural: "configmaps", Namespaced: true}, true},
		{"missing kind in a served group", kube.Kind{Group: "spire.spiffe.io", Version: "v1alpha1", Kind: "Nope", Plural: "nopes"}, false},
		{"group not served", kube.Kind{Group: "absent.zt.test", Version: "v1", Kind: "Thing", Plural: "things"}, false},
	} {
		got, err := client.Served(ctx, tc.kind)
		if err != nil {
			t.Errorf("%s: Served(%s): %v", tc.name, tc.kind.APIVersion(), err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s: Served(%s %s) = %v, want %v", tc.name, tc.kind.APIVersion(), tc.kind.Plural, got, tc.want)
		}
	}
}

// A "served" answer is remembered for the client's life (a plan asks once
// per created object); "not served" is asked again each time, since the CRD
// may be installed moments later.
func TestAccServedRemembersOnlyYes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	lab := acctest.LabFor(t, "served-cache", harness.Options{Names: []string{"served-cache"}})
	c := lab.Clusters[0]
	// Counts the discovery document of spire.spiffe.io/v1alpha1: only Served asks for it here.
	proxy := newCountingProxy(t, c, "/apis/spire.spiffe.io/v1alpha1")
	client := proxy.client(t, "served-cache", c.Token)
	missing := kube.Kind{Group: "spire.spiffe.io", Version: "v1alpha1", Kind: "Nope", Plural: "nopes"}
	for _, tc := range []struct {
		name     string
		kind     kube.Kind
		want     bool
		requests int // for three calls
	}{
		{"served", kube.ClusterFederatedTrustDomain, true, 1},
		{"not served", missing, false, 3},
	} {
		proxy.reset()
		for range 3 {
			got, err := client.Served(ctx, tc.kind)
			if err != nil || got != tc.want {
				t.Fatalf("%s: Served = %v, %v; want %v", tc.name, got, err, tc.want)
			}
		}
		if got := proxy.requests(); len(got) != tc.requests {
			t.Errorf("%s: %d discovery requests for three calls, want %d: %v", tc.name, len(got), tc.requests, got)
		}
	}
}
