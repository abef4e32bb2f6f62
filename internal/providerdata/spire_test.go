package providerdata

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// TestResolveSpire: each install's defaults, the chart's names derived from
// the release as its templates derive them, and explicit values (class_name
// "" included) kept.
func TestResolveSpire(t *testing.T) {
	str := types.StringValue
	helm := str(SpireInstallHelm)
	for name, tc := range map[string]struct {
		in   SpireSettings
		want Spire
	}{
		"operator default": {SpireSettings{}, Spire{Install: "operator", Namespace: "zero-trust-workload-identity-manager",
			Pod: "spire-server-0", Container: "spire-server", ClassName: "zero-trust-workload-identity-manager-spire",
			BundleNamespace: "zero-trust-workload-identity-manager", BundleConfigMap: "spire-bundle"}},
		"operator namespace moves the bundle": {SpireSettings{Namespace: str("ztwim")}, Spire{Install: "operator",
			Namespace: "ztwim", Pod: "spire-server-0", Container: "spire-server",
			ClassName: "zero-trust-workload-identity-manager-spire", BundleNamespace: "ztwim", BundleConfigMap: "spire-bundle"}},
		"helm defaults": {SpireSettings{Install: helm}, Spire{Install: "helm", Namespace: "spire-server",
			Pod: "spire-server-0", Container: "spire-server", ClassName: "spire-server-spire",
			BundleNamespace: "spire-system", BundleConfigMap: "spire-bundle", HelmRelease: "spire"}},
		"helm release": {SpireSettings{Install: helm, HelmRelease: str("edge")}, Spire{Install: "helm",
			Namespace: "spire-server", Pod: "edge-server-0", Container: "spire-server", ClassName: "spire-server-edge",
			BundleNamespace: "spire-system", BundleConfigMap: "spire-bundle", HelmRelease: "edge"}},
		"helm release containing server": {SpireSettings{Install: helm, HelmRelease: str("idserver")}, Spire{
			Install: "helm", Namespace: "spire-server", Pod: "idserver-0", Container: "spire-server",
			ClassName: "spire-server-idserver", BundleNamespace: "spire-system", BundleConfigMap: "spire-bundle",
			HelmRelease: "idserver"}},
		"helm explicit": {SpireSettings{Install: helm, Namespace: str("spire"), ClassName: str("mine"),
			BundleNamespace: str("spire")}, Spire{Install: "helm", Namespace: "spire", Pod: "spire-server-0",
			Container: "spire-server", ClassName: "mine", BundleNamespace: "spire", BundleConfigMap: "spire-bundle",
			HelmRelease: "spire"}},
		"helm namespace names the class": {SpireSettings{Install: helm, Namespace: str("spire")}, Spire{Install: "helm",
			Namespace: "spire", Pod: "spire-server-0", Container: "spire-server", ClassName: "spire-spire",
			BundleNamespace: "spire-system", BundleConfigMap: "spire-bundle", HelmRelease: "spire"}},
		"no class": {SpireSettings{ClassName: str("")}, Spire{Install: "operator", Namespace: "zero-trust-workload-identity-manager",
			Pod: "spire-server-0", Container: "spire-server", BundleNamespace: "zero-trust-workload-identity-manager",
			BundleConfigMap: "spire-bundle"}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := ResolveSpire(tc.in); got != tc.want {
				t.Errorf("ResolveSpire(%+v)\n got %+v\nwant %+v", tc.in, got, tc.want)
			}
		})
	}
}

// TestSpireOf: a cluster's own spire replaces the provider's whole (its
// unset attributes take its install's defaults, not the provider's values);
// the `kubernetes` connection's own likewise; a cluster without one and no
// client get the provider's.
func TestSpireOf(t *testing.T) {
	provider := ResolveSpire(SpireSettings{Namespace: types.StringValue("ztwim"), ClassName: types.StringValue("ours")})
	eks := ResolveSpire(SpireSettings{Install: types.StringValue(SpireInstallHelm)})
	d := &Data{Spire: provider, ClusterSpire: map[string]Spire{"eks": eks}}
	if got := d.SpireAt(types.StringNull()); got != provider {
		t.Errorf("SpireAt(null) without a kubernetes spire = %+v, want the provider's %+v", got, provider)
	}
	for _, tc := range []struct {
		client *kube.Client
		want   Spire
	}{
		{&kube.Client{Name: "eks"}, eks},
		{&kube.Client{Name: "ocp"}, provider},
		{&kube.Client{Name: kube.DefaultKey}, provider},
		{nil, provider},
	} {
		if got := d.SpireOf(tc.client); got != tc.want {
			t.Errorf("SpireOf(%v) = %+v, want %+v", tc.client, got, tc.want)
		}
	}
	if got := d.SpireAt(types.StringValue("eks")); got != eks {
		t.Errorf("SpireAt(eks) = %+v, want %+v", got, eks)
	}
	d.ClusterSpire[kube.DefaultKey] = eks
	if got := d.SpireAt(types.StringNull()); got != eks {
		t.Errorf("SpireAt(null) with a kubernetes spire = %+v, want it: %+v", got, eks)
	}
	if got := d.SpireOf(&kube.Client{Name: kube.DefaultKey}); got != eks {
		t.Errorf("SpireOf(the kubernetes connection) = %+v, want its own %+v", got, eks)
	}
	var none *Data
	if got := none.SpireOf(nil); got != ResolveSpire(SpireSettings{}) {
		t.Errorf("an unconfigured provider's SPIRE is %+v, want the operator's defaults", got)
	}
}
