package datasources

import (
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
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
	Cluster                   types.String `tfsdk:"cluster"`
	Name                      types.String `tfsdk:"name"`
	SPIFFEIDTemplate          types.String `tfsdk:"spiffe_id_template"`
	PodSelector               types.String `tfsdk:"pod_selector"`
	NamespaceSelector         types.String `tfsdk:"namespace_selector"`
	FederatesWith             types.List   `tfsdk:"federates_with"`
	DNSNameTemplates          types.List   `tfsdk:"dns_name_templates"`
	WorkloadSelectorTemplates types.List   `tfsdk:"workload_selector_templates"`
	TTL                       types.String `tfsdk:"ttl"`
	JWTTTL                    types.String `tfsdk:"jwt_ttl"`
	Hint                      types.String `tfsdk:"hint"`
	ClassName                 types.String `tfsdk:"class_name"`
	Fallback                  types.Bool   `tfsdk:"fallback"`
	Admin                     types.Bool   `tfsdk:"admin"`
	Downstream                types.Bool   `tfsdk:"downstream"`
	AutoPopulateDNSNames      types.Bool   `tfsdk:"auto_populate_dns_names"`
	Stats                     types.Object `tfsdk:"stats"`
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
	resp.TypeName = req.ProviderTypeName + "_cluster_spiffe_id"
}

func (d *clusterSPIFFEIDDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	str := func(description string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: description}
	}
	list := func(description string) schema.ListAttribute {
		return schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: description}
	}
	flag := func(description string) schema.BoolAttribute {
		return schema.BoolAttribute{Computed: true, MarkdownDescription: description}
	}
	stats := map[string]schema.Attribute{}
	for _, s := range clusterSPIFFEIDStats {
		stats[s.attr] = schema.Int64Attribute{Computed: true, MarkdownDescription: s.description + " (`" + s.field + "`)"}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "One spire-controller-manager `ClusterSPIFFEID` (`spire.spiffe.io/v1alpha1`): how it " +
			"registers pods (template, selectors), the trust domains their entries federate with, and what the " +
			"controller reported about its last reconciliation (`status.stats`). Whether SPIRE's entries carry the " +
			"federation is what `zerotrust_cluster_spiffe_id` waits for and `zerotrust_federation_status` reports.",
		Attributes: map[string]schema.Attribute{
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
			"spiffe_id_template":          str("`spec.spiffeIDTemplate`."),
			"pod_selector":                str("`spec.podSelector` as a label selector string (`app=web,tier in (a,b)`); null when unset (every pod)."),
			"namespace_selector":          str("`spec.namespaceSelector` as a label selector string; null when unset (every namespace not ignored)."),
			"federates_with":              list("`spec.federatesWith`, sorted; empty when it federates with nothing."),
			"dns_name_templates":          list("`spec.dnsNameTemplates`."),
			"workload_selector_templates": list("`spec.workloadSelectorTemplates`."),
			"ttl":                         str("`spec.ttl`; null when unset."),
			"jwt_ttl":                     str("`spec.jwtTtl`; null when unset."),
			"hint":                        str("`spec.hint`; null when unset."),
			"class_name":                  str("`spec.className`; null when unset."),
			"fallback":                    flag("`spec.fallback`."),
			"admin":                       flag("`spec.admin`."),
			"downstream":                  flag("`spec.downstream`."),
			"auto_populate_dns_names":     flag("`spec.autoPopulateDNSNames`."),
			"stats": schema.SingleNestedAttribute{
				Computed: true,
				MarkdownDescription: "`status.stats` of the controller's last reconciliation; all zero before the first " +
					"one, or when no controller serves the object's class.",
				Attributes: stats,
			},
		},
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

func setClusterSPIFFEIDDataFromObject(ctx context.Context, m *clusterSPIFFEIDDataSourceModel, obj *unstructured.Unstructured) diag.Diagnostics {
	var diags diag.Diagnostics
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	text := func(field string) types.String {
		if s, _ := spec[field].(string); s != "" {
			return types.StringValue(s)
		}
		return types.StringNull()
	}
	strs := func(field string, sorted bool) types.List {
		items, _, _ := unstructured.NestedStringSlice(spec, field)
		if items == nil {
			items = []string{}
		}
		if sorted {
			slices.Sort(items)
		}
		v, d := types.ListValueFrom(ctx, types.StringType, items)
		diags.Append(d...)
		return v
	}
	selector := func(field string) types.String {
		raw, ok := spec[field].(map[string]any)
		if !ok {
			return types.StringNull()
		}
		var ls metav1.LabelSelector
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
			diags.AddAttributeError(path.Root(field), "Unreadable Label Selector", err.Error())
			return types.StringNull()
		}
		return types.StringValue(metav1.FormatLabelSelector(&ls))
	}
	flag := func(field string) types.Bool {
		b, _ := spec[field].(bool)
		return types.BoolValue(b)
	}
	m.SPIFFEIDTemplate = text("spiffeIDTemplate")
	m.PodSelector, m.NamespaceSelector = selector("podSelector"), selector("namespaceSelector")
	m.FederatesWith = strs("federatesWith", true)
	m.DNSNameTemplates, m.WorkloadSelectorTemplates = strs("dnsNameTemplates", false), strs("workloadSelectorTemplates", false)
	m.TTL, m.JWTTTL, m.Hint, m.ClassName = text("ttl"), text("jwtTtl"), text("hint"), text("className")
	m.Fallback, m.Admin, m.Downstream, m.AutoPopulateDNSNames = flag("fallback"), flag("admin"), flag("downstream"), flag("autoPopulateDNSNames")
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
