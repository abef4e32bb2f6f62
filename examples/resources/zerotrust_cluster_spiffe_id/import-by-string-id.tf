# Adopt a ClusterSPIFFEID you created by hand: the import reads every field,
# and with the same values in the configuration the plan is empty. To add
# federation to one a Helm chart or operator owns, without taking it over,
# use zerotrust_cluster_spiffe_id_federation instead.
import {
  to = zerotrust_cluster_spiffe_id.web
  id = "east/web"
}
