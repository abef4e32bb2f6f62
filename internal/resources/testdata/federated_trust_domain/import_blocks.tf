# Adopts one existing object per cluster with for_each import blocks.
variable "imported" { type = map(string) } # cluster => trust domain

import {
  for_each = var.imported
  to       = zerotrust_federated_trust_domain.imported[each.key]
  id       = "${each.key}/${each.value}"
}

resource "zerotrust_federated_trust_domain" "imported" {
  for_each = var.imported

  cluster                 = each.key
  trust_domain            = each.value
  bundle_endpoint_url     = "https://bundles.${each.value}"
  bundle_endpoint_profile = { type = "https_web" }
}
