package datasources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireserverattr"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
)

var _ datasource.DataSourceWithConfigure = (*federationStatusDataSource)(nil)

// NewFederationStatusDataSource reports whether the federations of the
// provider's clusters work.
func NewFederationStatusDataSource() datasource.DataSource {
	return &federationStatusDataSource{}
}

type federationStatusDataSource struct {
	providerdata.DataSourceBase
}

func (d *federationStatusDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = typename.FederationStatus.Under(req.ProviderTypeName)
}

func (d *federationStatusDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = federationStatusSchema()
}

func (d *federationStatusDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m federationStatusModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || !d.Data.CheckCluster(m.Cluster, path.Root("cluster"), &resp.Diagnostics) {
		return
	}
	server, sd := spireserverattr.ModelFrom(ctx, m.SpireServer)
	resp.Diagnostics.Append(sd...)
	carried, diags := m.carried(ctx)
	resp.Diagnostics.Append(diags...)
	clusters := d.clusters(m.Cluster, server, &resp.Diagnostics)
	for i := range clusters {
		clusters[i].Carried = carried[clusters[i].Key]
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if m.CheckEndpoints.IsNull() || m.CheckEndpoints.IsUnknown() {
		m.CheckEndpoints = types.BoolValue(true)
	}
	report := checkFederations(ctx, clusters, m.CheckEndpoints.ValueBool())
	resp.Diagnostics.Append(m.setReport(ctx, report)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// clusters resolves `cluster` into the clusters to check, as the list
// resources do (providerdata.Data.Targets), each with its SPIRE server.
func (d *federationStatusDataSource) clusters(cluster types.String, server spireserverattr.Model, diags *diag.Diagnostics) []fsCluster {
	var out []fsCluster
	for _, t := range d.Data.Targets(cluster, "checked", diags) {
		out = append(out, fsCluster{Key: t.Key, Client: t.Client, Spire: server.Server(t.Client, d.Data.SpireOf(t.Client))})
	}
	return out
}
