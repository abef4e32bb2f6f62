package conformance

import "github.com/ztfabric/terraform-provider-zerotrust/internal/typename"

// DomainVerification publishes no CRD: these tables hold the resource
// against the project's own (internal/testkit/harness/crds), one per API version the
// resource writes (api_version).
func init() {
	for _, version := range []string{"v1", "v1alpha1"} {
		contracts = append(contracts, resourceContract{
			TypeName: typename.DomainVerification.Full(),
			CRD:      "domainverifications.kuadrant.dev",
			Version:  version,
			Fields: []mapping{
				{Attr: "domain", Field: "spec.domain"},
			},
			Unmapped: map[string]string{
				"name":            "metadata.name, which the CRD does not describe; validated as a DNS subdomain",
				"cluster":         "which provider connection; not part of the object",
				"api_version":     "which served version is written and read; not a field",
				"force_conflicts": "server-side apply option",
				"adopt_existing":  "whether Create adopts an object another manager made; not a field",
			},
			Transitions: []transition{
				{Field: "spec.domain", Message: "spec.domain is immutable; create a new DomainVerification for another domain",
					Replace: []string{"domain"}},
			},
		})
	}
}
