package kube_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// GetForRefresh must answer exactly what Get answers, with one LIST instead
// of one GET per object once a walk has read more than a handful, and fall
// back to GETs for anything the list cannot answer or when LIST is refused.
func TestAccGetForRefresh(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	lab := acctest.LabFor(t, "snap", harness.Options{Names: []string{"snap"}})
	c := lab.Clusters[0]
	proxy := newCountingProxy(t, c, "/clusterfederatedtrustdomains")
	const n = 30
	names := make([]string, n)
	setup := proxy.client(t, "snap", c.Token)
	for i := range names {
		names[i] = fmt.Sprintf("td%02d", i)
		obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
			"trustDomain":           names[i] + ".example.org",
			"bundleEndpointURL":     "https://" + names[i] + ".example.org:8443",
			"bundleEndpointProfile": map[string]any{"type": "https_web"},
		}}}
		obj.SetName(names[i])
		if _, err := setup.Apply(ctx, kube.ClusterFederatedTrustDomain, obj, false); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("one list", func(t *testing.T) {
		client := proxy.client(t, "snap", c.Token) // a fresh client is a fresh walk
		proxy.reset()
		for _, name := range slices.Concat(names, []string{"absent", names[n-1]}) {
			listed, err := client.GetForRefresh(ctx, kube.ClusterFederatedTrustDomain, "", name)
			if name == "absent" {
				if !kube.IsNotFound(err) {
					t.Fatalf("absent object: err = %v, want not found", err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			want, err := setup.Get(ctx, kube.ClusterFederatedTrustDomain, "", name)
			if err != nil {
				t.Fatal(err)
			}
			if mf := listed.ManagedFields(); !reflect.DeepEqual(mf, want.GetManagedFields()) {
				t.Fatalf("%s: ManagedFields = %+v, Get's = %+v", name, mf, want.GetManagedFields())
			}
			got := listed.Full()
			if got.GetResourceVersion() != want.GetResourceVersion() || got.GetKind() != "ClusterFederatedTrustDomain" ||
				got.GetAPIVersion() != kube.ClusterFederatedTrustDomain.APIVersion() || fmt.Sprint(got.Object["spec"]) != fmt.Sprint(want.Object["spec"]) ||
				len(got.GetManagedFields()) != len(want.GetManagedFields()) {
				t.Fatalf("%s: GetForRefresh = %v, Get = %v", name, got.Object, want.Object)
			}
		}
		// 8 GETs, 1 LIST, 1 GET for the absent object, 1 for the one read
		// twice; plus the n+1 GETs of the comparison above.
		if got, want := len(proxy.requests()), 8+1+1+1+n+1; got != want {
			t.Fatalf("requests = %d, want %d:\n%s", got, want, strings.Join(proxy.requests(), "\n"))
		}
	})

	t.Run("list refused", func(t *testing.T) {
		client := proxy.client(t, "snap", c.Token)
		inject := make([]func(http.ResponseWriter), 9)
		inject[8] = status(http.StatusForbidden, "Forbidden") // the LIST
		proxy.reset(inject...)
		for _, name := range names {
			if _, err := client.GetForRefresh(ctx, kube.ClusterFederatedTrustDomain, "", name); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if got := len(proxy.requests()); got != n+1 {
			t.Fatalf("requests = %d, want %d (one refused LIST, then a GET per object)", got, n+1)
		}
	})
}
