package resources

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func ftdTestObject(name string, spec map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	obj.SetName(name)
	return obj
}

// TestFederatedTrustDomainListConvert: the filters, and objects the resource
// would refuse as configuration are left out; what is listed is the state
// ImportState stores.
func TestFederatedTrustDomainListConvert(t *testing.T) {
	ctx := context.Background()
	web := func(td, class string, extra map[string]any) map[string]any {
		spec := map[string]any{"trustDomain": td, "bundleEndpointURL": "https://bundles." + td,
			"bundleEndpointProfile": map[string]any{"type": "https_web"}}
		if class != "" {
			spec["className"] = class
		}
		for k, v := range extra {
			spec[k] = v
		}
		return spec
	}
	all := federatedTrustDomainListConfig{TrustDomain: types.StringNull(), ClassName: types.StringNull()}
	for name, tc := range map[string]struct {
		filter federatedTrustDomainListConfig
		spec   map[string]any
		skip   bool
	}{
		"no filter":                {all, web("a.test", "", nil), false},
		"trust domain matches":     {federatedTrustDomainListConfig{TrustDomain: types.StringValue("a.test")}, web("a.test", "", nil), false},
		"trust domain differs":     {federatedTrustDomainListConfig{TrustDomain: types.StringValue("b.test")}, web("a.test", "", nil), true},
		"class matches":            {federatedTrustDomainListConfig{ClassName: types.StringValue("c")}, web("a.test", "c", nil), false},
		"class differs":            {federatedTrustDomainListConfig{ClassName: types.StringValue("c")}, web("a.test", "d", nil), true},
		"empty class, classless":   {federatedTrustDomainListConfig{ClassName: types.StringValue("")}, web("a.test", "", nil), false},
		"empty class, has a class": {federatedTrustDomainListConfig{ClassName: types.StringValue("")}, web("a.test", "c", nil), true},
		"https_web with an id": {all, web("a.test", "", map[string]any{"bundleEndpointProfile": map[string]any{
			"type": "https_web", "endpointSPIFFEID": "spiffe://a.test/spire/server"}}), true},
		"https_spiffe without id": {all, web("a.test", "", map[string]any{"bundleEndpointProfile": map[string]any{"type": "https_spiffe"}}), true},
		"unknown profile":         {all, web("a.test", "", map[string]any{"bundleEndpointProfile": map[string]any{"type": "mtls"}}), true},
		"http endpoint":           {all, web("a.test", "", map[string]any{"bundleEndpointURL": "http://bundles.a.test"}), true},
		"bad trust domain":        {all, web("A B", "", nil), true},
		"bundle not JSON":         {all, web("a.test", "", map[string]any{"trustDomainBundle": "nope"}), true},
	} {
		t.Run(name, func(t *testing.T) {
			obj := ftdTestObject("obj", tc.spec)
			lo, skip, diags := tc.filter.convert(ctx, listTarget{key: "west"}, obj, true)
			if diags.HasError() {
				t.Fatalf("convert: %v", diags)
			}
			if skip != tc.skip {
				t.Fatalf("skip = %v, want %v", skip, tc.skip)
			}
			if skip {
				return
			}
			if lo.id != (objectIdentity{Cluster: "west", Name: "obj"}) {
				t.Errorf("identity = %+v", lo.id)
			}
			want, _ := federatedTrustDomainStateFromObject(ctx, types.StringValue("west"), obj)
			got, ok := lo.state.(*federatedTrustDomainResourceModel)
			if !ok || !got.BundleEndpointProfile.Equal(want.BundleEndpointProfile) || got.ID != want.ID || !got.Timeouts.Equal(want.Timeouts) ||
				!got.SpireServer.Equal(want.SpireServer) || got.ClassName != want.ClassName {
				t.Errorf("state = %+v, want %+v", lo.state, want)
			}
		})
	}
}
