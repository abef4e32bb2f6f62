# Two OpenShift clusters whose SPIRE the Zero Trust Workload Identity Manager
# installed: the kubeconfig contexts of `oc login` to each.
clusters = {
  east = { config_context = "east" }
  west = { config_context = "west" }
}
