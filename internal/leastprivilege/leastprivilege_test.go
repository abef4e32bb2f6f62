package leastprivilege_test

import (
	"testing"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/rbac"
)

// TestAccLeastPrivilege applies the committed manifests of a cluster whose
// SPIRE the operator installed (examples/rbac/operator.yaml, istio-csr.yaml,
// mesh-kyma.yaml and mesh-kuma.yaml) unchanged to such a cluster, then runs
// every resource's lifecycle (create, refresh, update, import by ID and by
// identity, destroy), every list resource, every data source and both actions
// with the provider's only credential the token of the ServiceAccount they
// create and bind. Then it takes each rule those files grant out in turn and
// runs the operation that needs it: the operation fails at once (or, where
// the provider degrades, warns) with a message naming the verb, the
// resource, the object and the cluster, and the API server saw the refused
// request once. The one role only the chart's file binds,
// zerotrust-spire-bundle, is TestAccLeastPrivilegeChart's.
func TestAccLeastPrivilege(t *testing.T) {
	e := setup(t)
	d := dirs{spire: e.spireLifecycle(t), mesh: e.meshLifecycle(t), csr: e.istioCSRLifecycle(t), domain: e.domainLifecycle(t)}
	e.listAll(t)
	t.Run("each rule needed", func(t *testing.T) {
		xs := e.exercises(t, d)
		// Every rule of the table has its exercise, and only one.
		seen := map[string]bool{}
		for _, x := range xs {
			if seen[x.rule] {
				t.Errorf("two exercises for %s", x.rule)
			}
			seen[x.rule] = true
		}
		granted := map[string]bool{}
		for _, f := range operatorFiles {
			for _, role := range f.Roles() {
				granted[role] = true
			}
		}
		for _, r := range rbac.Rules {
			switch {
			case granted[r.Role] && !seen[r.Key()]:
				t.Errorf("no exercise for %s", r.Key())
			case !granted[r.Role] && r.Role != rbac.SpireBundle:
				t.Errorf("%s is in no file TestAccLeastPrivilege applies, nor TestAccLeastPrivilegeChart's role", r.Key())
			}
		}
		for _, x := range xs {
			t.Run(x.rule, func(t *testing.T) { e.checkRule(t, x) })
		}
	})
	for _, dir := range []string{d.spire, d.mesh, d.csr, d.domain} {
		e.mustTF(t, dir, "destroy", "-auto-approve")
	}
}
