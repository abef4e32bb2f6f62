package actions_test

import (
	"context"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/action"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/actions"
)

// All is the provider's only list of actions; kept sorted, a new entry has
// one obvious place and a duplicate shows up next to its twin. Every schema
// must pass the framework's own checks and describe every attribute.
func TestAllIsSortedUniqueAndValid(t *testing.T) {
	ctx := context.Background()
	var names []string
	for _, f := range actions.All() {
		a := f()
		var meta action.MetadataResponse
		a.Metadata(ctx, action.MetadataRequest{ProviderTypeName: "zerotrust"}, &meta)
		names = append(names, meta.TypeName)
		var s action.SchemaResponse
		a.Schema(ctx, action.SchemaRequest{}, &s)
		if d := s.Schema.ValidateImplementation(ctx); d.HasError() {
			t.Errorf("%s: schema: %v", meta.TypeName, d)
		}
		if s.Schema.MarkdownDescription == "" {
			t.Errorf("%s: no MarkdownDescription", meta.TypeName)
		}
		for name, attr := range s.Schema.GetAttributes() {
			if attr.GetMarkdownDescription() == "" {
				t.Errorf("%s: attribute %s has no MarkdownDescription", meta.TypeName, name)
			}
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("actions.All() is not sorted by type name: %v", names)
	}
	if len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("actions.All() lists an action twice: %v", names)
	}
}
