package resources_test

import (
	"context"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/resources"
)

// All is the provider's only list of resources; kept sorted, a new entry has
// one obvious place and a duplicate shows up next to its twin.
func TestAllIsSortedAndUnique(t *testing.T) {
	var names []string
	for _, f := range resources.All() {
		var resp resource.MetadataResponse
		f().Metadata(context.Background(), resource.MetadataRequest{ProviderTypeName: "zerotrust"}, &resp)
		names = append(names, resp.TypeName)
	}
	if len(names) == 0 {
		t.Fatal("resources.All() is empty")
	}
	if !slices.IsSorted(names) {
		t.Errorf("resources.All() is not sorted by type name: %v", names)
	}
	if len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("resources.All() lists a resource twice: %v", names)
	}
}
