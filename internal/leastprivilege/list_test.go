package leastprivilege_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/provider"
)

// listTypes are the provider's list resources, from its registry: a new
// list resource is queried here without an edit.
func listTypes() []string {
	var out []string
	for _, typ := range provider.Types() {
		if name, ok := strings.CutPrefix(typ, "list "); ok {
			out = append(out, name)
		}
	}
	return out
}

// lists asks every list resource, with include_resource, for the objects
// the lifecycles left in place.
func lists() string {
	var b strings.Builder
	for _, name := range listTypes() {
		fmt.Fprintf(&b, "\nlist %q \"all\" {\n  provider         = zerotrust\n  include_resource = true\n}\n", name)
	}
	return b.String()
}

// listAll runs terraform query over every list resource and checks that
// each finds what the lifecycles created.
func (e *env) listAll(t *testing.T) {
	dir := e.workdir(t, "")
	e.write(t, dir, "lists.tfquery.hcl", lists())
	out := e.mustTF(t, dir, "query")
	want := []string{dvDomain, csrNS, kumaNS + "/cart", "istio_sail:default", "istio_kyma:" + kymaNS + ":default", "kuma:" + kumaNS + ":"}
	for _, name := range listTypes() {
		want = append(want, "list."+name+".all")
	}
	expect(t, "terraform query", out, want...)
}
