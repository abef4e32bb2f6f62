package rbac_test

import (
	"slices"
	"testing"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/provider"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/rbac"
)

// TestTableCoversEveryType fails when a type registered with the provider
// (resource, data source, list resource or action) uses no rule of the
// table, or the table names a type the provider does not serve: a new type
// must say which permissions it needs before it ships.
func TestTableCoversEveryType(t *testing.T) {
	served, inTable := provider.Types(), rbac.Types()
	for _, typ := range served {
		if !slices.Contains(inTable, typ) {
			t.Errorf("%s is registered but uses no rule of the RBAC table (internal/rbac/rbac.go): add its rows", typ)
		}
	}
	for _, typ := range inTable {
		if !slices.Contains(served, typ) {
			t.Errorf("the RBAC table names %s, which the provider does not register", typ)
		}
	}
}

// TestNamespacesAreTheProvidersDefaults: the install files bind the SPIRE
// roles where the provider looks by default.
func TestNamespacesAreTheProvidersDefaults(t *testing.T) {
	for got, want := range map[string]string{
		rbac.OperatorSpireNamespace:   providerdata.OperatorSpireNamespace,
		rbac.HelmSpireNamespace:       providerdata.HelmSpireNamespace,
		rbac.HelmSpireBundleNamespace: providerdata.HelmSpireBundleNS,
	} {
		if got != want {
			t.Errorf("internal/rbac binds in %q where the provider's default is %q", got, want)
		}
	}
}
