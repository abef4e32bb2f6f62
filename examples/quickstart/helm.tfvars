# Two clusters whose SPIRE the SPIFFE Helm chart installed, such as EKS and
# GKE: the contexts that `aws eks update-kubeconfig` and `gcloud container
# clusters get-credentials` wrote.
clusters = {
  eks = { config_context = "eks", spire_install = "helm" }
  gke = { config_context = "gke", spire_install = "helm" }
}
