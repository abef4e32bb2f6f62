package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/list"
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
	typeName := func(m interface {
		Metadata(context.Context, resource.MetadataRequest, *resource.MetadataResponse)
	}) string {
		var resp resource.MetadataResponse
		m.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: p.TypeName}, &resp)
		return resp.TypeName
	}
	out := typeNames("resource", resources.All(), func(r resource.Resource) string { return typeName(r) })
	out = append(out, typeNames("data source", datasources.All(), func(d datasource.DataSource) string {
		var resp datasource.MetadataResponse
		d.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: p.TypeName}, &resp)
		return resp.TypeName
	})...)
	out = append(out, typeNames("list", resources.Lists(), func(l list.ListResource) string { return typeName(l) })...)
	return append(out, typeNames("action", actions.All(), func(a action.Action) string {
		var resp action.MetadataResponse
		a.Metadata(ctx, action.MetadataRequest{ProviderTypeName: p.TypeName}, &resp)
		return resp.TypeName
	})...)
}

// typeNames is "<kind> <type name>" of each registered constructor.
func typeNames[T any](kind string, registry []func() T, name func(T) string) []string {
	out := make([]string, 0, len(registry))
	for _, f := range registry {
		out = append(out, kind+" "+name(f()))
	}
	return out
}
