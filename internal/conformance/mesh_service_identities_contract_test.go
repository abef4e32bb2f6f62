package conformance

import "github.com/ztfabric/terraform-provider-zerotrust/internal/typename"

// zerotrust_mesh_service_identities writes spec.identities of a Kuma
// MeshService and nothing else; name and namespace address the object.
func init() {
	contracts = append(contracts, resourceContract{
		TypeName: typename.MeshServiceIdentities.Full(),
		CRD:      "meshservices.kuma.io",
		Version:  "v1alpha1",
		Fields: []mapping{
			// Each SPIFFE ID becomes {type: SpiffeID, value: <ID>}, so the
			// enum on type is met by construction.
			{Attr: "identities", Field: "spec.identities", Sample: "spiffe://example.org/ns/default/sa/app", Except: map[string]string{
				"type": "a list of SPIFFE ID strings, each written as the object {type: SpiffeID, value}",
			}},
		},
		Unmapped: map[string]string{
			"cluster":         "which provider connection; not part of the object",
			"namespace":       "metadata.namespace: which object to write, not a spec field",
			"name":            "metadata.name: which object to write, not a spec field",
			"force_conflicts": "server-side apply option",
		},
	})
}
