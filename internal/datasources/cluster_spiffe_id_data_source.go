package datasources

import (
	"context"
	"fmt"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/clusterspiffeid"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/workloadtrust"
)

var _ datasource.DataSourceWithConfigure = (*clusterSPIFFEIDDataSource)(nil)

// NewClusterSPIFFEIDDataSource reads one spire-controller-manager
// ClusterSPIFFEID: its spec and the statistics of the controller's last
// reconciliation (status.stats).
func NewClusterSPIFFEIDDataSource() datasource.DataSource {
	return &clusterSPIFFEIDDataSource{}
}

type clusterSPIFFEIDDataSource struct {
	providerdata.DataSourceBase
}

type clusterSPIFFEIDDataSourceModel struct {
	Cluster types.String `tfsdk:"cluster"`
	Name    types.String `tfsdk:"name"`
	// Spec is read as the resource zerotrust_cluster_spiffe_id reads it, so
	// the same object gives the same values of the same types in both.
	clusterspiffeid.Spec
	Stats types.Object `tfsdk:"stats"`
}

// clusterSPIFFEIDStats names the counters of status.stats, in the
// attribute's order, with the controller's field names.
var clusterSPIFFEIDStats = []struct{ attr, field, description string }{
	{"namespaces_selected", "namespacesSelected", "Namespaces the namespace selector selected."},
	{"namespaces_ignored", "namespacesIgnored", "Selected namespaces the controller ignores (its `ignoreNamespaces`)."},
	{"pods_selected", "podsSelected", "Pods selected in the namespaces not ignored."},
	{"pod_entry_render_failures", "podEntryRenderFailures", "Pods whose entry failed to render (a template error)."},
	{"entries_masked", "entriesMasked", "Entries another ClusterSPIFFEID's identical entry masks."},
	{"entries_to_set", "entriesToSet", "Entries the controller wanted to set in SPIRE."},
	{"entry_failures", "entryFailures", "Entries SPIRE refused (for example federating with a trust domain whose bundle it does not hold)."},
}

func clusterSPIFFEIDStatsTypes() map[string]attr.Type {
	out := map[string]attr.Type{}
	for _, s := range clusterSPIFFEIDStats {
		out[s.attr] = types.Int64Type
	}
	return out
}

func (d *clusterSPIFFEIDDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = typename.ClusterSPIFFEID.Under(req.ProviderTypeName)
}

func (d *clusterSPIFFEIDDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	stats := map[string]schema.Attribute{}
	for _, s := range clusterSPIFFEIDStats {
		stats[s.attr] = schema.Int64Attribute{Computed: true, MarkdownDescription: s.description + " (`" + s.field + "`)"}
	}
	attrs := clusterspiffeid.DataSourceAttributes()
	maps.Copy(attrs, map[string]schema.Attribute{
		"cluster": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Key of the provider's `clusters` map naming the cluster to read. Unset means the " +
				"provider's `kubernetes` connection.",
		},
		"name": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: "Name of the ClusterSPIFFEID.",
			Validators:          []validator.String{validate.K8sName()},
		},
		"stats": schema.SingleNestedAttribute{
			Computed: true,
			MarkdownDescription: "`status.stats` of the controller's last reconciliation; all zero before the first " +
				"one, or when no controller serves the object's class.",
			Attributes: stats,
		},
	})
	resp.Schema = schema.Schema{
		MarkdownDescription: "One spire-controller-manager `ClusterSPIFFEID` (`spire.spiffe.io/v1alpha1`): how it " +
			"registers pods (template, selectors), the trust domains their entries federate with, and what the " +
			"controller reported about its last reconciliation (`status.stats`). Whether SPIRE's entries carry the " +
			"federation is what `zerotrust_cluster_spiffe_id` waits for and `zerotrust_federation_status` reports.\n\n" +
			"The spec's attributes are those of the resource `zerotrust_cluster_spiffe_id`, of the same types, and " +
			"read as its import reads them.\n\n" +
			"When the cluster does not answer at all and its `on_unreachable` is `warn` (the provider's default), " +
			"the read is skipped with a warning naming the cluster: every attribute it reads is null, the arguments " +
			"keep their values. With `error`, the read fails at once naming the cluster.",
		Attributes: attrs,
	}
}

func (d *clusterSPIFFEIDDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m clusterSPIFFEIDDataSourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || !d.Data.CheckCluster(m.Cluster, path.Root("cluster"), &resp.Diagnostics) {
		return
	}
	client := d.Data.Client(m.Cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	if d.Data.SkipsRead(ctx, client, typename.ClusterSPIFFEID.Full(), &resp.Diagnostics) {
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
		return
	}
	name := m.Name.ValueString()
	obj, err := client.Get(ctx, kube.ClusterSPIFFEID, "", name)
	if kube.IsNotFound(err) {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "ClusterSPIFFEID Not Found", fmt.Sprintf(
			"ClusterSPIFFEID %q does not exist on cluster %q; when it is created in the same configuration, make this "+
				"data source depend on what creates it.", name, client.DisplayName()))
		return
	}
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "read the ClusterSPIFFEID "+name))
		return
	}
	resp.Diagnostics.Append(setClusterSPIFFEIDDataFromObject(ctx, &m, obj)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// setClusterSPIFFEIDDataFromObject reads the spec as the resource's import
// does, and the controller's status.stats.
func setClusterSPIFFEIDDataFromObject(ctx context.Context, m *clusterSPIFFEIDDataSourceModel, obj *unstructured.Unstructured) diag.Diagnostics {
	diags := m.SetFromObject(ctx, obj)
	st := workloadtrust.StatsOf(obj)
	values := map[string]int64{
		"namespaces_selected": st.NamespacesSelected, "namespaces_ignored": st.NamespacesIgnored, "pods_selected": st.PodsSelected,
		"pod_entry_render_failures": st.PodEntryRenderFailures, "entries_masked": st.EntriesMasked,
		"entries_to_set": st.EntriesToSet, "entry_failures": st.EntryFailures,
	}
	attrs := map[string]attr.Value{}
	for k, v := range values {
		attrs[k] = types.Int64Value(v)
	}
	stats, d := types.ObjectValue(clusterSPIFFEIDStatsTypes(), attrs)
	diags.Append(d...)
	m.Stats = stats
	return diags
}
