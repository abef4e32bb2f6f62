package datasources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
)

var _ datasource.DataSourceWithConfigure = (*meshServiceDataSource)(nil)

// NewMeshServiceDataSource reads one Kuma MeshService: its identities
// (spec.identities, what a client verifies in the SAN of the service's
// certificates), ports, selector, state and status.
func NewMeshServiceDataSource() datasource.DataSource {
	return &meshServiceDataSource{}
}

type meshServiceDataSource struct {
	providerdata.DataSourceBase
}

type meshServiceDataSourceModel struct {
	Cluster          types.String `tfsdk:"cluster"`
	Namespace        types.String `tfsdk:"namespace"`
	Name             types.String `tfsdk:"name"`
	Identities       types.List   `tfsdk:"identities"`
	SpiffeIDs        types.List   `tfsdk:"spiffe_ids"`
	Ports            types.List   `tfsdk:"ports"`
	Selector         types.Object `tfsdk:"selector"`
	State            types.String `tfsdk:"state"`
	Hostnames        types.List   `tfsdk:"hostnames"`
	VIPs             types.List   `tfsdk:"vips"`
	DataplaneProxies types.Object `tfsdk:"dataplane_proxies"`
	TLSStatus        types.String `tfsdk:"tls_status"`
}

type meshServiceIdentityModel struct {
	Type  types.String `tfsdk:"type"`
	Value types.String `tfsdk:"value"`
}

type meshServicePortModel struct {
	Name        types.String `tfsdk:"name"`
	Port        types.Int64  `tfsdk:"port"`
	TargetPort  types.String `tfsdk:"target_port"`
	AppProtocol types.String `tfsdk:"app_protocol"`
}

type meshServiceSelectorModel struct {
	DataplaneLabels types.Map    `tfsdk:"dataplane_labels"`
	DataplaneRef    types.String `tfsdk:"dataplane_ref"`
}

type meshServiceDataplaneProxiesModel struct {
	Total     types.Int64 `tfsdk:"total"`
	Connected types.Int64 `tfsdk:"connected"`
	Healthy   types.Int64 `tfsdk:"healthy"`
}

func (d *meshServiceDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = typename.MeshService.Under(req.ProviderTypeName)
}

func (d *meshServiceDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m meshServiceDataSourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || !d.Data.CheckCluster(m.Cluster, path.Root("cluster"), &resp.Diagnostics) {
		return
	}
	client := d.Data.Client(m.Cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	if d.Data.SkipsRead(ctx, client, typename.MeshService.Full(), &resp.Diagnostics) {
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
		return
	}
	ns, name := m.Namespace.ValueString(), m.Name.ValueString()
	obj, err := client.Get(ctx, kube.KumaMeshService, ns, name)
	if kube.IsNotFound(err) {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "MeshService Not Found", fmt.Sprintf(
			"MeshService %q does not exist in namespace %q of cluster %q. Kuma creates a MeshService for each "+
				"Kubernetes Service of a meshed namespace; check the names, and when the MeshService is created in "+
				"the same configuration, make this data source depend on what creates it.", name, ns, client.DisplayName()))
		return
	}
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, fmt.Sprintf("read the MeshService %s/%s", ns, name)))
		return
	}
	resp.Diagnostics.Append(setMeshServiceFromObject(ctx, &m, obj)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// setMeshServiceFromObject fills the computed attributes from obj.
func setMeshServiceFromObject(ctx context.Context, m *meshServiceDataSourceModel, obj *unstructured.Unstructured) diag.Diagnostics {
	var diags diag.Diagnostics
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	status, _, _ := unstructured.NestedMap(obj.Object, "status")

	identities := []meshServiceIdentityModel{}
	spiffeIDs := []string{}
	for _, item := range msItems(spec, "identities") {
		id := meshServiceIdentityModel{Type: providerdata.FieldString(item, "type"), Value: providerdata.FieldString(item, "value")}
		identities = append(identities, id)
		if id.Type.ValueString() == "SpiffeID" {
			spiffeIDs = append(spiffeIDs, id.Value.ValueString())
		}
	}
	m.Identities = msObjectList(ctx, meshServiceObjectAttrTypes("identities"), identities, &diags)
	m.SpiffeIDs = msStringList(ctx, spiffeIDs, &diags)

	ports := []meshServicePortModel{}
	for _, item := range msItems(spec, "ports") {
		ports = append(ports, meshServicePortModel{
			Name: providerdata.FieldString(item, "name"), Port: providerdata.FieldInt64(item, "port"),
			TargetPort: providerdata.FieldString(item, "targetPort"), AppProtocol: providerdata.FieldString(item, "appProtocol"),
		})
	}
	m.Ports = msObjectList(ctx, meshServiceObjectAttrTypes("ports"), ports, &diags)

	m.Selector = types.ObjectNull(meshServiceObjectAttrTypes("selector"))
	if selector, ok := spec["selector"].(map[string]any); ok {
		labels := types.MapNull(types.StringType)
		if match, ok := msNestedMap(selector, "dataplaneLabels", "matchLabels"); ok {
			values := map[string]string{}
			for k, v := range match {
				values[k] = fmt.Sprint(v)
			}
			var d diag.Diagnostics
			labels, d = types.MapValueFrom(ctx, types.StringType, values)
			diags.Append(d...)
		}
		ref, _ := msNestedMap(selector, "dataplaneRef")
		obj, d := types.ObjectValueFrom(ctx, meshServiceObjectAttrTypes("selector"),
			meshServiceSelectorModel{DataplaneLabels: labels, DataplaneRef: providerdata.FieldString(ref, "name")})
		diags.Append(d...)
		m.Selector = obj
	}
	m.State = providerdata.FieldString(spec, "state")

	hostnames, vips := []string{}, []string{}
	for _, item := range msItems(status, "addresses") {
		if h := providerdata.FieldString(item, "hostname"); !h.IsNull() {
			hostnames = append(hostnames, h.ValueString())
		}
	}
	for _, item := range msItems(status, "vips") {
		if ip := providerdata.FieldString(item, "ip"); !ip.IsNull() {
			vips = append(vips, ip.ValueString())
		}
	}
	m.Hostnames = msStringList(ctx, hostnames, &diags)
	m.VIPs = msStringList(ctx, vips, &diags)

	m.DataplaneProxies = types.ObjectNull(meshServiceObjectAttrTypes("dataplane_proxies"))
	if proxies, ok := status["dataplaneProxies"].(map[string]any); ok {
		obj, d := types.ObjectValueFrom(ctx, meshServiceObjectAttrTypes("dataplane_proxies"), meshServiceDataplaneProxiesModel{
			Total: providerdata.FieldInt64(proxies, "total"), Connected: providerdata.FieldInt64(proxies, "connected"), Healthy: providerdata.FieldInt64(proxies, "healthy"),
		})
		diags.Append(d...)
		m.DataplaneProxies = obj
	}
	tls, _ := msNestedMap(status, "tls")
	m.TLSStatus = providerdata.FieldString(tls, "status")
	return diags
}

// msItems returns the objects of the list m[key]; other items are skipped.
func msItems(m map[string]any, key string) []map[string]any {
	items, _ := m[key].([]any)
	var out []map[string]any
	for _, item := range items {
		if o, ok := item.(map[string]any); ok {
			out = append(out, o)
		}
	}
	return out
}

func msNestedMap(m map[string]any, keys ...string) (map[string]any, bool) {
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil, false
		}
		m = next
	}
	return m, true
}

func msObjectList[T any](ctx context.Context, attrTypes map[string]attr.Type, items []T, diags *diag.Diagnostics) types.List {
	l, d := types.ListValueFrom(ctx, types.ObjectType{AttrTypes: attrTypes}, items)
	diags.Append(d...)
	return l
}

func msStringList(ctx context.Context, items []string, diags *diag.Diagnostics) types.List {
	l, d := types.ListValueFrom(ctx, types.StringType, items)
	diags.Append(d...)
	return l
}
