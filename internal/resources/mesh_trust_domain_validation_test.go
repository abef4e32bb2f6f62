package resources_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
)

// TestAccMeshTrustDomain_invalidInputFailsAtPlan: every rule that can be
// checked offline (the mesh CRDs' limits, SPIFFE rules, what each kind of
// mesh object can hold) fails `terraform plan`, naming the attribute.
func TestAccMeshTrustDomain_invalidInputFailsAtPlan(t *testing.T) {
	now := time.Now()
	peer := spiffeid.RequireTrustDomainFromString("peer.test")
	other := spiffeid.RequireTrustDomainFromString("other.test")
	peerPEM := fmt.Sprintf("%q", bundletest.PEM(bundletest.NewCA(t, peer, now.Add(-time.Hour), now.Add(time.Hour))))
	otherPEM := fmt.Sprintf("%q", bundletest.PEM(bundletest.NewCA(t, other, now.Add(-time.Hour), now.Add(time.Hour))))
	dash := spiffeid.RequireTrustDomainFromString("-peer.test")
	dashPEM := fmt.Sprintf("%q", bundletest.PEM(bundletest.NewCA(t, dash, now.Add(-time.Hour), now.Add(time.Hour))))

	sail := map[string]string{
		"cluster":      `"west"`,
		"mesh":         `{ kind = "istio_sail" }`,
		"trust_domain": `"apps.test"`,
	}
	kuma := map[string]string{
		"cluster":      `"west"`,
		"mesh":         `{ kind = "kuma" }`,
		"trust_domain": `"peer.test"`,
		"ca_bundles":   "[" + peerPEM + "]",
	}
	kyma := map[string]string{"mesh": `{ kind = "istio_kyma" }`, "trust_domain": `"apps.test"`}
	with := func(base map[string]string, attrs map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range attrs {
			out[k] = v
		}
		return out
	}
	const notSupported = `Not Supported by This Mesh Kind`
	cases := []planFailureCase{
		{"unknown kind", map[string]string{"mesh": `{ kind = "linkerd" }`}, `value must be one of`, "mesh.kind"},
		{"trust domain uppercase", map[string]string{"trust_domain": `"Apps.test"`}, `Invalid Trust Domain`, "trust_domain"},
		{"trust domain as SPIFFE ID", map[string]string{"trust_domain": `"spiffe://apps.test"`}, `Invalid Trust Domain`, "trust_domain"},
		{"trust domain too long", map[string]string{"trust_domain": fmt.Sprintf("%q", strings.Repeat("a", 256))}, `Invalid Trust Domain`, "trust_domain"},
		{"invalid alias", map[string]string{"trust_domain_aliases": `["Cluster.Local"]`}, `Invalid Trust Domain`, "trust_domain_aliases[0]"},
		{"duplicate alias", map[string]string{"trust_domain_aliases": `["a.test", "a.test"]`}, `duplicate values`, "trust_domain_aliases"},
		{"alias equal to the trust domain", map[string]string{"trust_domain_aliases": `["apps.test"]`}, `Alias Equals Trust Domain`, "trust_domain_aliases[0]"},
		{"alias equal to the default trust domain", map[string]string{"trust_domain": "", "trust_domain_aliases": `["cluster.local"]`}, `Alias Equals Trust Domain`, "trust_domain_aliases[0]"},
		{"sail with a namespace", map[string]string{"mesh": `{ kind = "istio_sail", namespace = "istio-system" }`}, notSupported, "mesh.namespace"},
		{"bad mesh name", map[string]string{"mesh": `{ kind = "istio_sail", name = "Bad_Name" }`}, `Invalid Kubernetes Name`, "mesh.name"},
		{"kuma_mesh on sail", map[string]string{"mesh": `{ kind = "istio_sail", kuma_mesh = "default" }`}, notSupported, "mesh.kuma_mesh"},
		{"ca_bundles on sail", map[string]string{"ca_bundles": "[" + peerPEM + "]"}, notSupported, "ca_bundles"},
		{"CA certificate with pem and URL", map[string]string{"ca_certificates": `[{ pem = ` + peerPEM + `, spiffe_bundle_url = "https://b.peer.test" }]`},
			`Invalid Attribute Combination`, "ca_certificates[0]"},
		{"CA certificate with neither", map[string]string{"ca_certificates": `[{ trust_domains = ["peer.test"] }]`}, `Invalid Attribute Combination`, "ca_certificates[0]"},
		{"CA certificate URL not https", map[string]string{"ca_certificates": `[{ spiffe_bundle_url = "http://b.peer.test" }]`}, `Invalid HTTPS URL`, "ca_certificates[0].spiffe_bundle_url"},
		{"CA certificate not PEM", map[string]string{"ca_certificates": `[{ pem = "MIIB" }]`}, `Invalid PEM Certificates`, "ca_certificates[0].pem"},
		{"CA certificate trust domain", map[string]string{"ca_certificates": `[{ spiffe_bundle_url = "https://b.peer.test", trust_domains = ["Peer"] }]`},
			`Invalid Trust Domain`, "ca_certificates[0].trust_domains[0]"},
		{"CA address without port", map[string]string{"ca_address": `"cert-manager-istio-csr.cert-manager.svc"`}, `missing port`, "ca_address"},
	}
	kymaCases := []planFailureCase{
		{"kyma with aliases", map[string]string{"trust_domain_aliases": `["old.test"]`}, notSupported, "trust_domain_aliases"},
		{"kyma keeping the previous domain", map[string]string{"keep_previous_as_alias": `true`}, notSupported, "keep_previous_as_alias"},
		{"kyma with CA address", map[string]string{"ca_address": `"istio-csr.cert-manager.svc:443"`}, notSupported, "ca_address"},
		{"kyma namespace", map[string]string{"mesh": `{ kind = "istio_kyma", namespace = "Kyma" }`}, `Invalid DNS Label`, "mesh.namespace"},
	}
	kumaCases := []planFailureCase{
		{"kuma without trust domain", map[string]string{"trust_domain": ""}, `Missing Trust Domain`, "trust_domain"},
		{"kuma without CA bundles", map[string]string{"ca_bundles": ""}, `Missing CA Bundles`, "ca_bundles"},
		{"kuma with no CA bundle", map[string]string{"ca_bundles": `[]`}, `at least 1`, "ca_bundles"},
		{"kuma trust domain above 253", map[string]string{"trust_domain": fmt.Sprintf("%q", strings.Repeat("a", 254))}, `at most 253 characters`, "trust_domain"},
		{"kuma bundle not PEM", map[string]string{"ca_bundles": `["{}"]`}, `Invalid PEM Certificates`, "ca_bundles[0]"},
		{"kuma bundle of another trust domain", map[string]string{"ca_bundles": "[" + otherPEM + "]"}, `belongs to trust domain "other.test"`, "ca_bundles[0]"},
		{"kuma with aliases", map[string]string{"trust_domain_aliases": `["old.test"]`}, notSupported, "trust_domain_aliases"},
		{"kuma with CA certificates", map[string]string{"ca_certificates": `[{ spiffe_bundle_url = "https://b.peer.test" }]`}, notSupported, "ca_certificates"},
		{"kuma mesh label", map[string]string{"mesh": `{ kind = "kuma", kuma_mesh = "a/b" }`}, `Invalid Label Value`, "mesh.kuma_mesh"},
		{"kuma name not derivable", map[string]string{"trust_domain": `"-peer.test"`, "ca_bundles": "[" + dashPEM + "]"}, `Cannot Derive Object Name`, "mesh.name"},
	}
	for i := range kymaCases {
		kymaCases[i].attrs = with(kyma, kymaCases[i].attrs)
	}
	for i := range kumaCases {
		kumaCases[i].attrs = with(kuma, kumaCases[i].attrs)
	}
	runPlanFailureCases(t, "zerotrust_mesh_trust_domain", sail, append(append(cases, kymaCases...), kumaCases...))
}
