package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/actions"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/datasources"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/resources"
)

// Types lists every Terraform type the provider serves, read from the
// registries (resources.All and Lists, datasources.All, actions.All), as
// "resource zerotrust_x", "data source zerotrust_x", "list zerotrust_x" and
// "action zerotrust_x": the spelling of the RBAC table's uses, so tests
// can check that the table and the least-privilege exercises cover them all.
func Types() []string {
	ctx := context.Background()
	var p provider.MetadataResponse
	(&zerotrustProvider{}).Metadata(ctx, provider.MetadataRequest{}, &p)
	var out []string
	for _, f := range resources.All() {
		var resp resource.MetadataResponse
		f().Metadata(ctx, resource.MetadataRequest{ProviderTypeName: p.TypeName}, &resp)
		out = append(out, "resource "+resp.TypeName)
	}
	for _, f := range datasources.All() {
		var resp datasource.MetadataResponse
		f().Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: p.TypeName}, &resp)
		out = append(out, "data source "+resp.TypeName)
	}
	for _, f := range resources.Lists() {
		var resp resource.MetadataResponse
		f().Metadata(ctx, resource.MetadataRequest{ProviderTypeName: p.TypeName}, &resp)
		out = append(out, "list "+resp.TypeName)
	}
	for _, f := range actions.All() {
		var resp action.MetadataResponse
		f().Metadata(ctx, action.MetadataRequest{ProviderTypeName: p.TypeName}, &resp)
		out = append(out, "action "+resp.TypeName)
	}
	return out
}
