output "federated_trust_domains" {
  description = "The trust domains this cluster now federates with."
  value       = sort([for f in zerotrust_federated_trust_domain.peer : f.trust_domain])
}

output "ids" {
  description = "Import IDs of the ClusterFederatedTrustDomains, keyed by trust domain."
  value       = { for td, f in zerotrust_federated_trust_domain.peer : td => f.id }
}
