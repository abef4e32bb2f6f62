# The bundles every cluster's SPIRE server holds without a federation
# relationship (set by hand or by another tool), ready for
# `terraform query -generate-config-out=bundles.tf` to adopt them.
list "zerotrust_spire_bundle" "all" {
  provider         = zerotrust
  include_resource = true
}
