package leastprivilege_test

import (
	"testing"
)

// TestAccLeastPrivilege runs every resource's lifecycle (create, refresh,
// update, import by ID and by identity, destroy), every list resource, every
// data source and both actions with the provider's only credential a
// ServiceAccount token bound to the committed manifest
// examples/rbac/zerotrust-rbac.yaml and nothing else.
func TestAccLeastPrivilege(t *testing.T) {
	e := setup(t)
	dirs := []string{e.spireLifecycle(t), e.meshLifecycle(t), e.istioCSRLifecycle(t), e.domainLifecycle(t)}
	e.listAll(t)
	for _, dir := range dirs {
		e.mustTF(t, dir, "destroy", "-auto-approve")
	}
}
