# One OpenShift cluster (the operator's SPIRE) and one AKS cluster (the Helm
# chart's): the contexts of `oc login` and `az aks get-credentials`.
clusters = {
  ocp = { config_context = "ocp" }
  aks = { config_context = "aks", spire_install = "helm" }
}
