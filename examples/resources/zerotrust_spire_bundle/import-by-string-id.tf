# Adopt a bundle someone set by hand (`spire-server bundle set`): the import
# reads what SPIRE holds, and a configured bundle with the same authorities
# plans nothing.
import {
  to = zerotrust_spire_bundle.west_in_east
  id = "east/west.example.org"
}
