# What the SPIRE Helm chart's default ClusterSPIFFEID on cluster "east"
# declares, and whether spire-controller-manager's last reconciliation of it
# had failures (an entry SPIRE refused, a template that failed to render).
data "zerotrust_cluster_spiffe_id" "default" {
  cluster = "east"
  name    = "spire-spire-default"
}

# federates_with is a set of trust domains, null when the object federates
# with none.
output "default_federates_with" {
  value = data.zerotrust_cluster_spiffe_id.default.federates_with == null ? [] : sort(data.zerotrust_cluster_spiffe_id.default.federates_with)
}

# pod_selector is an object, as in the resource: null when the object selects
# every pod.
output "default_pod_labels" {
  value = try(data.zerotrust_cluster_spiffe_id.default.pod_selector.match_labels, null)
}

output "default_healthy" {
  value = (data.zerotrust_cluster_spiffe_id.default.stats.entry_failures == 0 &&
  data.zerotrust_cluster_spiffe_id.default.stats.pod_entry_render_failures == 0)
}
