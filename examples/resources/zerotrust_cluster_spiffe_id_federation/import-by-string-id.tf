# Adopt the federation a ClusterSPIFFEID already has: the import reads
# spec.federatesWith, and with the same trust domains in the configuration
# the plan is empty. Changing them needs force_conflicts = true if another
# field manager set the list.
import {
  to = zerotrust_cluster_spiffe_id_federation.default
  id = "east/spire-spire-default"
}
