package leastprivilege_test

import (
	"testing"
)

// lists asks every list resource, with include_resource, for the objects
// the lifecycles left in place.
const lists = `
list "zerotrust_federated_trust_domain" "all" {
  provider         = zerotrust
  include_resource = true
}

list "zerotrust_spire_federation" "all" {
  provider         = zerotrust
  include_resource = true
}

list "zerotrust_istio_csr" "all" {
  provider         = zerotrust
  include_resource = true
}

list "zerotrust_mesh_trust_domain" "all" {
  provider         = zerotrust
  include_resource = true
}

list "zerotrust_mesh_service_identities" "all" {
  provider         = zerotrust
  include_resource = true
}

list "zerotrust_domain_verification" "all" {
  provider         = zerotrust
  include_resource = true
}
`

// listAll runs terraform query over every list resource and checks that
// each finds what the lifecycles created.
func (e *env) listAll(t *testing.T) {
	dir := e.workdir(t, "")
	e.write(t, dir, "lists.tfquery.hcl", lists)
	out := e.mustTF(t, dir, "query")
	expect(t, "terraform query", out,
		"list.zerotrust_federated_trust_domain.all", "list.zerotrust_spire_federation.all", "list.zerotrust_istio_csr.all",
		"list.zerotrust_mesh_trust_domain.all", "list.zerotrust_mesh_service_identities.all", "list.zerotrust_domain_verification.all",
		dvDomain, csrNS, kumaNS+"/cart", "istio_sail:default", "istio_kyma:"+kymaNS+":default", "kuma:"+kumaNS+":")
}
