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

// Every resource has an identity and a list resource of the same type name,
// so `terraform query` can adopt any of them; Lists has nothing else.
func TestEveryResourceHasIdentityAndList(t *testing.T) {
	ctx := context.Background()
	var resourceNames, listNames []string
	for _, f := range resources.All() {
		r := f()
		var resp resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "zerotrust"}, &resp)
		resourceNames = append(resourceNames, resp.TypeName)
		withIdentity, ok := r.(resource.ResourceWithIdentity)
		if !ok {
			t.Errorf("%s has no resource identity", resp.TypeName)
			continue
		}
		var id resource.IdentitySchemaResponse
		withIdentity.IdentitySchema(ctx, resource.IdentitySchemaRequest{}, &id)
		// What names the thing: a Kubernetes object's name, or the trust
		// domain of a bundle in SPIRE (zerotrust_spire_bundle).
		naming := "name"
		if resp.TypeName == "zerotrust_spire_bundle" {
			naming = "trust_domain"
		}
		if _, ok := id.IdentitySchema.Attributes[naming]; !ok || id.Diagnostics.HasError() {
			t.Errorf("%s: identity schema %v has no name (%v)", resp.TypeName, id.IdentitySchema.Attributes, id.Diagnostics)
		}
	}
	for _, f := range resources.Lists() {
		var resp resource.MetadataResponse
		f().Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "zerotrust"}, &resp)
		listNames = append(listNames, resp.TypeName)
	}
	if !slices.Equal(resourceNames, listNames) {
		t.Errorf("list resources %v, want one per resource %v", listNames, resourceNames)
	}
}
