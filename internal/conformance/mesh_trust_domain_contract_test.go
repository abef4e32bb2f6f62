package conformance

import "github.com/ztfabric/terraform-provider-zerotrust/internal/typename"

// zerotrust_mesh_trust_domain writes one of three kinds (mesh.kind); each has
// its own table. Attributes of another kind are refused at plan
// (TestAccMeshTrustDomain_invalidInputFailsAtPlan), so they are Unmapped here.
func init() {
	common := map[string]string{
		"cluster":                "which provider connection; not part of the object",
		"force_conflicts":        "server-side apply option",
		"mesh":                   "which object to write (kind, name, namespace); not a spec field",
		"keep_previous_as_alias": "behaviour switch: adds the previous trust domain to trust_domain_aliases (Sail)",
		"keep_on_destroy":        "behaviour switch: destroy leaves the written values, owned by another field manager",
	}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range common {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	const sailOnly, kumaOnly = "istio_sail only; refused at plan for this kind", "kuma only; refused at plan for this kind"
	// mesh.kuma_mesh is the kuma.io/mesh label (metadata, not spec).
	contracts = append(contracts,
		resourceContract{
			TypeName: typename.MeshTrustDomain.Full(),
			CRD:      "istios.operator.kyma-project.io",
			Version:  "v1alpha2",
			Context:  map[string]string{"mesh.kind": "istio_kyma"},
			Fields: []mapping{
				{Attr: "trust_domain", Field: "spec.config.trustDomain"},
			},
			Unmapped: with(map[string]string{
				"trust_domain_aliases": sailOnly, "ca_certificates": sailOnly, "ca_address": sailOnly, "ca_bundles": kumaOnly,
			}),
		},
		resourceContract{
			TypeName: typename.MeshTrustDomain.Full(),
			CRD:      "istios.sailoperator.io",
			Version:  "v1",
			Context:  map[string]string{"mesh.kind": "istio_sail"},
			Fields: []mapping{
				{Attr: "trust_domain", Field: "spec.values.meshConfig.trustDomain"},
				{Attr: "trust_domain_aliases", Field: "spec.values.meshConfig.trustDomainAliases", Sample: "alias"},
				{Attr: "ca_certificates", Field: "spec.values.meshConfig.caCertificates"},
				{Attr: "ca_certificates.*.pem", Field: "spec.values.meshConfig.caCertificates[].pem"},
				{Attr: "ca_certificates.*.spiffe_bundle_url", Field: "spec.values.meshConfig.caCertificates[].spiffeBundleUrl"},
				{Attr: "ca_certificates.*.trust_domains", Field: "spec.values.meshConfig.caCertificates[].trustDomains"},
				{Attr: "ca_certificates.*.cert_signers", Field: "spec.values.meshConfig.caCertificates[].certSigners"},
				{Attr: "ca_address", Field: "spec.values.global.caAddress"},
			},
			Unmapped: with(map[string]string{"ca_bundles": kumaOnly}),
		},
		resourceContract{
			TypeName: typename.MeshTrustDomain.Full(),
			CRD:      "meshtrusts.kuma.io",
			Version:  "v1alpha1",
			Context:  map[string]string{"mesh.kind": "kuma"},
			Fields: []mapping{
				{Attr: "trust_domain", Field: "spec.trustDomain"},
				// Each PEM becomes {type: Pem, pem: {value: <PEM>}}.
				{Attr: "ca_bundles", Field: "spec.caBundles", Sample: "pem", Except: map[string]string{
					"type": "a list of PEM strings, each written as the object {type: Pem, pem: {value}}",
				}},
			},
			Unmapped: with(map[string]string{
				"trust_domain_aliases": sailOnly, "ca_certificates": sailOnly, "ca_address": sailOnly,
			}),
		},
	)
}
