# Every IstioCSR "default" in every namespace of one cluster, with its
# attributes (include_resource) for review before importing.
list "zerotrust_istio_csr" "east" {
  provider         = zerotrust
  include_resource = true

  config {
    cluster = "east"
  }
}
