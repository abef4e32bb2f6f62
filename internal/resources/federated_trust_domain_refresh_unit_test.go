package resources

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// listedFederatedTrustDomain is one item of a LIST of
// ClusterFederatedTrustDomains as the API server writes it after the
// provider's server-side apply (field manager "zerotrust") created it, with
// className set; the managed fields take most of the bytes.
func listedFederatedTrustDomain(name string) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"spire.spiffe.io/v1alpha1","kind":"ClusterFederatedTrustDomain",`+
		`"metadata":{"creationTimestamp":"2026-11-29T10:02:17Z","generation":1,`+
		`"managedFields":[{"apiVersion":"spire.spiffe.io/v1alpha1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{`+
		`"f:bundleEndpointProfile":{"f:endpointSPIFFEID":{},"f:type":{}},"f:bundleEndpointURL":{},"f:className":{},`+
		`"f:trustDomain":{}}},"manager":"zerotrust","operation":"Apply","time":"2026-11-29T10:02:17Z"}],`+
		`"name":%q,"resourceVersion":"48213","uid":"5b0c6f0e-8f43-4a55-9d7e-2f1d3c9a7b21"},`+
		`"spec":{"bundleEndpointProfile":{"endpointSPIFFEID":"spiffe://%s.example.org/spire/server","type":"https_spiffe"},`+
		`"bundleEndpointURL":"https://spire-bundle.%s.example.org:8443","className":"zerotrust",`+
		`"trustDomain":"%s.example.org"}}`, name, name, name, name)
}

// BenchmarkFederatedTrustDomainRefreshObject is a refresh's work for one
// listed object below the fast path's Refresh hook, SPIRE's side aside: the
// item decoded as GetForRefresh serves it, the model set from it, and the
// ownership record of spec.className.
func BenchmarkFederatedTrustDomainRefreshObject(b *testing.B) {
	ctx := b.Context()
	raw := listedFederatedTrustDomain("peer-0042")
	obj, err := kube.DecodeListItem(raw, kube.ClusterFederatedTrustDomain)
	if err != nil {
		b.Fatal(err)
	}
	prior, diags := federatedTrustDomainStateFromObject(ctx, types.StringValue("east"), obj.Full())
	if diags.HasError() {
		b.Fatal(diags)
	}
	b.ReportAllocs()
	for b.Loop() {
		obj, err := kube.DecodeListItem(raw, kube.ClusterFederatedTrustDomain)
		if err != nil {
			b.Fatal(err)
		}
		state := prior
		if diags := setFederatedTrustDomainFromObject(ctx, &state, obj.Object); diags.HasError() {
			b.Fatal(diags)
		}
		if rec := classNameOwnership(appliesClassName(obj, "zerotrust")).value(); len(rec) == 0 {
			b.Fatal("no ownership record")
		}
	}
}

// appliesClassName answers the same of a listed object, whose managed fields
// stay undecoded, as of the whole object a GET returns.
func TestAppliesClassName(t *testing.T) {
	entry := func(manager, operation, subresource, fields string) string {
		sub := ""
		if subresource != "" {
			sub = fmt.Sprintf(`,"subresource":%q`, subresource)
		}
		return fmt.Sprintf(`{"apiVersion":"spire.spiffe.io/v1alpha1","fieldsType":"FieldsV1","fieldsV1":%s,"manager":%q,`+
			`"operation":%q%s,"time":"2026-11-29T10:02:17Z"}`, fields, manager, operation, sub)
	}
	const (
		withClass    = `{"f:spec":{"f:className":{},"f:trustDomain":{}}}`
		withoutClass = `{"f:spec":{"f:trustDomain":{}}}`
	)
	for name, tc := range map[string]struct {
		className bool // spec.className is set
		entries   []string
		want      bool
	}{
		"applied":                {true, []string{entry("zerotrust", "Apply", "", withClass)}, true},
		"applied after another":  {true, []string{entry("kubectl", "Update", "", withoutClass), entry("zerotrust", "Apply", "", withClass)}, true},
		"not on the object":      {false, []string{entry("zerotrust", "Apply", "", withClass)}, false},
		"another manager's":      {true, []string{entry("zerotrust", "Apply", "", withoutClass), entry("helm", "Apply", "", withClass)}, false},
		"updated, not applied":   {true, []string{entry("zerotrust", "Update", "", withClass)}, false},
		"through a subresource":  {true, []string{entry("zerotrust", "Apply", "status", withClass)}, false},
		"held as null":           {true, []string{entry("zerotrust", "Apply", "", `{"f:spec":{"f:className":null}}`)}, false},
		"no managed fields":      {true, nil, false},
		"keyed list items too":   {true, []string{entry("zerotrust", "Apply", "", `{"f:spec":{"f:l":{"k:{\"n\":\"a\"}":{}},"f:className":{}}}`)}, true},
		"set spelled in escapes": {true, []string{entry("zerotrust", "Apply", "", `{"f:spec":{"f:class\u004eame":{}}}`)}, true},
	} {
		t.Run(name, func(t *testing.T) {
			spec := `"trustDomain":"peer.example.org"`
			if tc.className {
				spec += `,"className":"zerotrust"`
			}
			raw := fmt.Appendf(nil, `{"apiVersion":"spire.spiffe.io/v1alpha1","kind":"ClusterFederatedTrustDomain",`+
				`"metadata":{"managedFields":[%s],"name":"peer"},"spec":{%s}}`, strings.Join(tc.entries, ","), spec)
			listed, err := kube.DecodeListItem(raw, kube.ClusterFederatedTrustDomain)
			if err != nil {
				t.Fatal(err)
			}
			whole := &unstructured.Unstructured{}
			if err := whole.UnmarshalJSON(raw); err != nil {
				t.Fatal(err)
			}
			if got := appliesClassName(listed, "zerotrust"); got != tc.want {
				t.Errorf("listed: appliesClassName = %v, want %v", got, tc.want)
			}
			if got := appliesClassName(&kube.Refreshed{Object: whole}, "zerotrust"); got != tc.want {
				t.Errorf("whole: appliesClassName = %v, want %v", got, tc.want)
			}
		})
	}
}
