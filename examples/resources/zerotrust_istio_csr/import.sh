# The IstioCSR is always named "default": the import ID is its namespace.
terraform import zerotrust_istio_csr.this cert-manager

# On a cluster of the provider's `clusters` map: <cluster>/<namespace>.
terraform import zerotrust_istio_csr.this east/cert-manager
