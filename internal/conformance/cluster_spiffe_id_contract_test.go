package conformance

import "github.com/ztfabric/terraform-provider-zerotrust/internal/typename"

// zerotrust_cluster_spiffe_id writes a whole ClusterSPIFFEID. Its CRD is the
// one spire-controller-manager v0.6.4 publishes (config/crd/bases in its Go
// module); the copy the OpenShift Zero Trust Workload Identity Manager
// operator ships is not among the published CRDs the tests have, so it is
// not compared here.
func init() {
	contracts = append(contracts, resourceContract{
		TypeName: typename.ClusterSPIFFEID.Full(),
		CRD:      "clusterspiffeids.spire.spiffe.io",
		Version:  "v1alpha1",
		Fields: []mapping{
			{Attr: "spiffe_id_template", Field: "spec.spiffeIDTemplate", Sample: "spiffe://{{ .TrustDomain }}/x"},
			{Attr: "pod_selector", Field: "spec.podSelector"},
			{Attr: "pod_selector.match_expressions", Field: "spec.podSelector.matchExpressions"},
			{Attr: "pod_selector.match_labels", Field: "spec.podSelector.matchLabels", Sample: "web"},
			{Attr: "pod_selector.match_expressions.*.key", Field: "spec.podSelector.matchExpressions[].key", Sample: "app"},
			{Attr: "pod_selector.match_expressions.*.operator", Field: "spec.podSelector.matchExpressions[].operator", Sample: "In"},
			{Attr: "pod_selector.match_expressions.*.values", Field: "spec.podSelector.matchExpressions[].values", Sample: "web"},
			{Attr: "namespace_selector", Field: "spec.namespaceSelector"},
			{Attr: "namespace_selector.match_expressions", Field: "spec.namespaceSelector.matchExpressions"},
			{Attr: "namespace_selector.match_labels", Field: "spec.namespaceSelector.matchLabels", Sample: "web"},
			{Attr: "namespace_selector.match_expressions.*.key", Field: "spec.namespaceSelector.matchExpressions[].key", Sample: "app"},
			{Attr: "namespace_selector.match_expressions.*.operator", Field: "spec.namespaceSelector.matchExpressions[].operator", Sample: "In"},
			{Attr: "namespace_selector.match_expressions.*.values", Field: "spec.namespaceSelector.matchExpressions[].values", Sample: "web"},
			{Attr: "federates_with", Field: "spec.federatesWith", Sample: "west.example.org"},
			{Attr: "dns_name_templates", Field: "spec.dnsNameTemplates", Sample: "{{ .PodMeta.Name }}.example.org"},
			{Attr: "workload_selector_templates", Field: "spec.workloadSelectorTemplates", Sample: "k8s:ns:{{ .PodMeta.Namespace }}"},
			{Attr: "ttl", Field: "spec.ttl", Sample: "1h"},
			{Attr: "jwt_ttl", Field: "spec.jwtTtl", Sample: "5m"},
			{Attr: "hint", Field: "spec.hint", Sample: "web"},
			{Attr: "fallback", Field: "spec.fallback"},
			{Attr: "admin", Field: "spec.admin"},
			{Attr: "downstream", Field: "spec.downstream"},
			{Attr: "auto_populate_dns_names", Field: "spec.autoPopulateDNSNames"},
			{Attr: "class_name", Field: "spec.className", Sample: "zero-trust-workload-identity-manager-spire"},
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
