# Terraform >= 1.12: import by resource identity instead of an ID string.
import {
  to = zerotrust_spire_bundle.west_in_east
  identity = {
    cluster      = "east"
    trust_domain = "west.example.org"
  }
}
