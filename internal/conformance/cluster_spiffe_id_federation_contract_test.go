package conformance

import "github.com/ztfabric/terraform-provider-zerotrust/internal/typename"

// zerotrust_cluster_spiffe_id_federation writes spec.federatesWith of a
// ClusterSPIFFEID someone else owns, and nothing else.
func init() {
	contracts = append(contracts, resourceContract{
		TypeName: typename.ClusterSPIFFEIDFederation.Full(),
		CRD:      "clusterspiffeids.spire.spiffe.io",
		Version:  "v1alpha1",
		Fields: []mapping{
			{Attr: "federates_with", Field: "spec.federatesWith", Sample: "west.example.org"},
		},
		Unmapped: map[string]string{
			"cluster":         "which provider connection; not part of the object",
			"name":            "metadata.name: which object to write, not a spec field",
			"spire_server":    "the SPIRE server pod asked whether the workloads federate; not part of the object",
			"force_conflicts": "server-side apply option",
			"timeouts":        "how long create and update wait",
		},
	})
}
