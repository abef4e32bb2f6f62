# What the SPIRE Helm chart's default ClusterSPIFFEID on cluster "east"
# declares, and whether spire-controller-manager's last reconciliation of it
# had failures (an entry SPIRE refused, a template that failed to render).
data "zerotrust_cluster_spiffe_id" "default" {
  cluster = "east"
  name    = "spire-spire-default"
}

output "default_federates_with" {
  value = data.zerotrust_cluster_spiffe_id.default.federates_with
}

output "default_healthy" {
  value = (data.zerotrust_cluster_spiffe_id.default.stats.entry_failures == 0 &&
  data.zerotrust_cluster_spiffe_id.default.stats.pod_entry_render_failures == 0)
}
