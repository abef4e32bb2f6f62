package datasources_test

import (
	"context"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/datasources"
)

// All is the provider's only list of data sources; kept sorted, a new entry has
// one obvious place and a duplicate shows up next to its twin.
func TestAllIsSortedAndUnique(t *testing.T) {
	var names []string
	for _, f := range datasources.All() {
		var resp datasource.MetadataResponse
		f().Metadata(context.Background(), datasource.MetadataRequest{ProviderTypeName: "zerotrust"}, &resp)
		names = append(names, resp.TypeName)
	}
	if len(names) == 0 {
		t.Fatal("datasources.All() is empty")
	}
	if !slices.IsSorted(names) {
		t.Errorf("datasources.All() is not sorted by type name: %v", names)
	}
	if len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("datasources.All() lists a data source twice: %v", names)
	}
}
