# The Sail operator's cluster-scoped Istio "default": <kind>:<name>.
terraform import zerotrust_mesh_trust_domain.sail istio_sail:default

# A namespaced object on a cluster of the provider's `clusters` map:
# <cluster>/<kind>:<namespace>:<name>.
terraform import zerotrust_mesh_trust_domain.kyma west/istio_kyma:kyma-system:default
terraform import zerotrust_mesh_trust_domain.kuma_peer north/kuma:kuma-system:west-example-org
