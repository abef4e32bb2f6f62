package datasources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spirefacts"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
)

var _ datasource.DataSourceWithConfigure = (*spireServerDataSource)(nil)

// NewSpireServerDataSource reads the facts of one cluster's SPIRE installation.
func NewSpireServerDataSource() datasource.DataSource {
	return &spireServerDataSource{}
}

type spireServerDataSource struct {
	providerdata.DataSourceBase
}

type spireServerDataSourceModel struct {
	Cluster           types.String `tfsdk:"cluster"`
	TrustDomain       types.String `tfsdk:"trust_domain"`
	ClusterName       types.String `tfsdk:"cluster_name"`
	BundleConfigMap   types.String `tfsdk:"bundle_config_map"`
	Namespace         types.String `tfsdk:"namespace"`
	FederationProfile types.String `tfsdk:"federation_profile"`
	BundleEndpointURL types.String `tfsdk:"bundle_endpoint_url"`
	EndpointSPIFFEID  types.String `tfsdk:"endpoint_spiffe_id"`
}

func (d *spireServerDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = typename.SpireServer.Under(req.ProviderTypeName)
}

func (d *spireServerDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Facts about one cluster's SPIRE installation under the OpenShift Zero Trust Workload Identity " +
			"Manager, read from its ZeroTrustWorkloadIdentityManager `cluster` (or, on older operators, the SpireServer " +
			"`cluster`) and the SpireServer's `spec.federation`, and the operator's federation Route: what a peer needs " +
			"to federate with this cluster, so configurations wire peers from facts instead of copied strings.\n\n" +
			"When the cluster does not answer at all and its `on_unreachable` is `warn` (the provider's default), " +
			"the read is skipped with a warning naming the cluster: every attribute it reads is null, the arguments " +
			"keep their values. With `error`, the read fails at once naming the cluster.",
		Attributes: map[string]schema.Attribute{
			"cluster": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Key of the provider's `clusters` map naming the cluster to read. Unset means the " +
					"provider's `kubernetes` connection.",
			},
			"trust_domain": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The installation's trust domain (`spec.trustDomain`).",
			},
			"cluster_name": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The cluster name SPIRE agents attest with (`spec.clusterName`); null when unset.",
			},
			"bundle_config_map": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Name of the ConfigMap holding the trust bundle (`spec.bundleConfigMap`, default " +
					"`" + spirefacts.DefaultBundleConfigMap + "`), in `namespace`.",
			},
			"namespace": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "Namespace of the SPIRE server and the bundle ConfigMap: the provider's `spire.namespace`.",
			},
			"federation_profile": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "Bundle endpoint profile (`https_spiffe` or `https_web`); null while federation is not configured.",
			},
			"bundle_endpoint_url": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Where peers reach the bundle endpoint: `https://<host>` of the Route " +
					"`" + spirefacts.FederationRouteName + "` that the operator creates when federation is configured with " +
					"`managedRoute` `\"true\"` (host `federation.<trust domain>`). The operator always puts this Route in " +
					"the namespace `" + spirefacts.RouteNamespace + "` (a constant in its code), whatever namespace it runs " +
					"in, so it is read there, not in `namespace`. Null when federation is not configured, the cluster does " +
					"not serve Routes (not OpenShift), the Route does not exist (yet: the operator creates it at the end " +
					"of its reconcile), or `managedRoute` is `\"false\"` and only a Route the operator made earlier is " +
					"left (the operator never deletes it). The released SpireServer has no field saying where its endpoint " +
					"is reachable (the enhancement proposal's `bundleEndpoint.address`/`port` never shipped), so give " +
					"peers the URL another way there. This data source does not wait for the Route: a read may come before " +
					"the operator has made it, and waiting would hold every plan that reads a cluster without one. Where the " +
					"same configuration sets up the federation, use `zerotrust_spire_federation`'s `bundle_endpoint_url` " +
					"(its create and update wait for the Route) or let this data source depend on that resource.",
			},
			"endpoint_spiffe_id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "SPIFFE ID the SPIRE server's bundle endpoint presents: `spiffe://<trust_domain>/spire/server`.",
			},
		},
	}
}

func (d *spireServerDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m spireServerDataSourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || !d.Data.CheckCluster(m.Cluster, path.Root("cluster"), &resp.Diagnostics) {
		return
	}
	client := d.Data.Client(m.Cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	if d.Data.SkipsRead(ctx, client, typename.SpireServer.Full(), &resp.Diagnostics) {
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
		return
	}
	facts, err := spirefacts.Lookup(ctx, client)
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "read the SPIRE installation"))
		return
	}
	if !facts.Found() {
		resp.Diagnostics.AddError("SPIRE Installation Not Found", fmt.Sprintf(
			"Cluster %q has neither a ZeroTrustWorkloadIdentityManager nor a SpireServer named \"cluster\" "+
				"(operator.openshift.io/v1alpha1). Install the OpenShift Zero Trust Workload Identity Manager operator "+
				"and create its ZeroTrustWorkloadIdentityManager \"cluster\" (with trustDomain and clusterName); when "+
				"they are created in the same configuration, make this data source depend on them.", client.DisplayName()))
		return
	}
	td, _ := facts.TrustDomain()
	if td == "" {
		resp.Diagnostics.AddError("Trust Domain Not Set", fmt.Sprintf(
			"Cluster %q has a SpireServer \"cluster\" but no trust domain: newer operators keep it on the "+
				"ZeroTrustWorkloadIdentityManager \"cluster\" (spec.trustDomain), which does not exist. Create it.",
			client.DisplayName()))
		return
	}
	url, err := facts.BundleEndpointURL(ctx, client)
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "read the federation Route"))
		return
	}
	// Empty means unset in these CRDs.
	optionalString := providerdata.OptionalString
	m.TrustDomain = types.StringValue(td)
	m.ClusterName = optionalString(facts.ClusterName())
	m.BundleConfigMap = types.StringValue(facts.BundleConfigMap())
	m.Namespace = types.StringValue(d.Data.SpireNamespace)
	m.FederationProfile = optionalString(facts.FederationProfile())
	m.BundleEndpointURL = optionalString(url)
	m.EndpointSPIFFEID = optionalString(spirefacts.EndpointSPIFFEID(td))
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
