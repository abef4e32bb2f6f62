package conformance

import "github.com/ztfabric/terraform-provider-zerotrust/internal/typename"

// The ClusterFederatedTrustDomain CRD (the operator's published copy, the
// same schema as spire-controller-manager's) declares no defaults and no CEL
// rules, and only an enum on bundleEndpointProfile.type; its trustDomain
// pattern is unanchored, so the provider's go-spiffe check is the stricter
// one. The controller's own rules (https_spiffe needs endpointSPIFFEID,
// https_web refuses it, bundles for the right trust domain) are plan-time
// checks of the resource (TestAccFederatedTrustDomain_invalidInputFailsAtPlan).
func init() {
	contracts = append(contracts, resourceContract{
		TypeName: typename.FederatedTrustDomain.Full(),
		CRD:      "clusterfederatedtrustdomains.spire.spiffe.io",
		Version:  "v1alpha1",
		Fields: []mapping{
			{Attr: "trust_domain", Field: "spec.trustDomain"},
			{Attr: "bundle_endpoint_url", Field: "spec.bundleEndpointURL"},
			{Attr: "bundle_endpoint_profile", Field: "spec.bundleEndpointProfile"},
			{Attr: "bundle_endpoint_profile.type", Field: "spec.bundleEndpointProfile.type"},
			{Attr: "bundle_endpoint_profile.endpoint_spiffe_id", Field: "spec.bundleEndpointProfile.endpointSPIFFEID"},
			{Attr: "trust_domain_bundle", Field: "spec.trustDomainBundle"},
			{Attr: "class_name", Field: "spec.className"},
		},
		Unmapped: map[string]string{
			"name":                     "metadata.name, which the CRD does not describe; validated as a DNS subdomain",
			"cluster":                  "which provider connection; not part of the object",
			"force_conflicts":          "server-side apply option",
			"wait_for_bundle":          "asks the SPIRE server through pod exec; not part of the object",
			"delete_bundle_on_destroy": "asks the SPIRE server through pod exec; not part of the object",
			"check_spire":              "asks the SPIRE server through pod exec; not part of the object",
			"spire_server":             "where the SPIRE server pod is; not part of the object",
		},
	})
}
