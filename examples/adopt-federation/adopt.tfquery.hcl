# `terraform query -generate-config-out=adopted.tf` lists what the runbook
# made on every cluster of the provider and writes configuration and import
# blocks for it. Run it once, before the first apply.

list "zerotrust_spire_federation" "adopted" {
  provider = zerotrust
}

list "zerotrust_federated_trust_domain" "adopted" {
  provider = zerotrust
}
