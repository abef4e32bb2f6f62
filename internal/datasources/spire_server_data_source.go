package datasources

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spirefacts"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
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
	Cluster            types.String `tfsdk:"cluster"`
	Install            types.String `tfsdk:"install"`
	InstalledBy        types.String `tfsdk:"installed_by"`
	BundleNamespace    types.String `tfsdk:"bundle_namespace"`
	BundleEndpointPort types.Int64  `tfsdk:"bundle_endpoint_port"`
	ClassName          types.String `tfsdk:"class_name"`
	ServerPod          types.String `tfsdk:"server_pod"`
	ServerContainer    types.String `tfsdk:"server_container"`
	HelmRelease        types.String `tfsdk:"helm_release"`
	TrustDomain        types.String `tfsdk:"trust_domain"`
	ClusterName        types.String `tfsdk:"cluster_name"`
	BundleConfigMap    types.String `tfsdk:"bundle_config_map"`
	BundleConfigMapKey types.String `tfsdk:"bundle_config_map_key"`
	Namespace          types.String `tfsdk:"namespace"`
	FederationProfile  types.String `tfsdk:"federation_profile"`
	BundleEndpointURL  types.String `tfsdk:"bundle_endpoint_url"`
	EndpointSPIFFEID   types.String `tfsdk:"endpoint_spiffe_id"`
	BundlePublishers   types.List   `tfsdk:"bundle_publishers"`
}

func (d *spireServerDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = typename.SpireServer.Under(req.ProviderTypeName)
}

func (d *spireServerDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Facts about one cluster's SPIRE installation: what a peer needs to federate with this " +
			"cluster, so configurations wire peers from facts instead of copied strings. Two installs are read (`install`): " +
			"the OpenShift Zero Trust Workload Identity Manager's, from its ZeroTrustWorkloadIdentityManager `cluster` (or, " +
			"on older operators, the SpireServer `cluster`), the SpireServer's `spec.federation` and the operator's " +
			"federation Route; and the SPIFFE project's Helm chart (`spiffe/spire` from `spiffe/helm-charts-hardened`), " +
			"from the SPIRE server's configuration ConfigMap (key `" + spirefacts.HelmServerConfigKey + "`, named as the " +
			"server StatefulSet), the controller manager's ConfigMap and the federation Ingress the chart creates.\n\n" +
			"When the cluster does not answer at all and its `on_unreachable` is `warn` (the provider's default), " +
			"the read is skipped with a warning naming the cluster: every attribute it reads is null, the arguments " +
			"keep their values. With `error`, the read fails at once naming the cluster.",
		Attributes: map[string]schema.Attribute{
			"cluster": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Key of the provider's `clusters` map naming the cluster to read. Unset means the " +
					"provider's `kubernetes` connection.",
			},
			"install": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Which install to read: `" + spirefacts.InstallOperator + "` (the Zero Trust Workload " +
					"Identity Manager's objects), `" + spirefacts.InstallHelm + "` (a ConfigMap labelled " +
					"`app.kubernetes.io/managed-by=Helm` holding `" + spirefacts.HelmServerConfigKey + "`, looked for in " +
					"`namespace`; exactly one release there may have one) or `" + spirefacts.InstallAuto + "` (the operator's " +
					"when its objects exist, else the chart's). Unset means `" + spirefacts.InstallAuto + "`; " +
					"`installed_by` says which was found. When none is found the read fails naming what it looked for where.",
				Validators: []validator.String{stringvalidator.OneOf(spirefacts.Installs...)},
			},
			"installed_by": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The install read: `" + spirefacts.InstallOperator + "` or `" + spirefacts.InstallHelm + "`.",
			},
			"bundle_namespace": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Namespace of `bundle_config_map`: `namespace` for the operator; for the chart, the " +
					"namespace its bundle publisher writes to (`spire-system` in the chart's recommended layout).",
			},
			"bundle_endpoint_port": schema.Int64Attribute{
				Computed: true,
				MarkdownDescription: "Port the SPIRE server's bundle endpoint listens on in its pod (the chart's " +
					"`federation.bundleEndpoint.port`, default 8443; the SpireServer's `bundleEndpoint.port` where set). " +
					"Null without federation or where the install does not say.",
			},
			"class_name": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "The `className` of the install's spire-controller-manager: the cluster's " +
					"`spire.class_name` for the operator; for the chart, its controller manager's configuration " +
					"(`controllerManager.className`, by default `<release namespace>-<release name>`). Null when unknown.",
			},
			"server_pod": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "The SPIRE server pod `spire-server` commands run in, in `namespace`: the cluster's " +
					"configured pod for the operator (`spire-server-0` by default), `<server StatefulSet>-0` for the chart.",
			},
			"server_container": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The SPIRE server's container in `server_pod`: `" + providerdata.SpireServerContainer + "`.",
			},
			"helm_release": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`<namespace>/<name>` of the Helm release that installed SPIRE; null for the operator.",
			},
			"trust_domain": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The installation's trust domain (the operator's `spec.trustDomain`, the chart's `server.trust_domain`).",
			},
			"cluster_name": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "The cluster name SPIRE agents attest with (the operator's `spec.clusterName`, the " +
					"chart controller manager's `clusterName`); null when unset.",
			},
			"bundle_config_map": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Name of the ConfigMap holding the trust bundle (the operator's `spec.bundleConfigMap`, " +
					"default `" + spirefacts.DefaultBundleConfigMap + "`; the chart's bundle publisher's or notifier's " +
					"ConfigMap, null when it publishes none), in `bundle_namespace`, holding the bundle under " +
					"`bundle_config_map_key`.",
			},
			"bundle_config_map_key": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Key of `bundle_config_map` that SPIRE writes the bundle under, as the server's " +
					"configuration says: for the chart, its BundlePublisher `k8s_configmap`'s `configmap_key` (the chart's " +
					"default, `" + bundlesource.KeySPIFFE + "`, SPIFFE bundle JSON) or, with `notifier.k8sBundle`, its " +
					"Notifier `k8sbundle`'s `config_map_key` (`" + bundlesource.KeyPEM + "`, PEM, by default); `" +
					bundlesource.KeyPEM + "` for the operator, which renders that notifier. `zerotrust_trust_bundle`'s " +
					"`config_map` reads either key. Null when `bundle_config_map` is.",
			},
			"namespace": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "Namespace of the SPIRE server. For the operator, unset means the cluster's " +
					"`spire.namespace` when its `spire.install` is `operator` (the cluster's own `spire`, else the provider's), " +
					"else `" + providerdata.OperatorSpireNamespace + "`. For the chart, the namespace its server's ConfigMap " +
					"is looked for in: unset means the cluster's `spire.namespace` when its `spire.install` is `helm`, else `" +
					spirefacts.HelmDefaultNamespace + "`, where the chart's documentation installs it and where its " +
					"recommended layout puts the server. Only this namespace is searched, so the provider needs `list` on " +
					"`configmaps` there, not cluster-wide.",
				Validators: []validator.String{validate.DNSLabel()},
			},
			"federation_profile": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "Bundle endpoint profile (`https_spiffe` or `https_web`); null while federation is not configured.",
			},
			"bundle_endpoint_url": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Where peers reach the bundle endpoint. For the chart: `https://<host>` of the Ingress " +
					"`<server StatefulSet>-federation` in `namespace` (its first rule's host), which the chart creates with " +
					"`federation.ingress.enabled`; null without federation or without that Ingress. For the operator: " +
					"`https://<host>` of the Route " +
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
			"bundle_publishers": bundlePublishersAttribute(),
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
	install := m.Install.ValueString()
	if install == "" {
		install = spirefacts.InstallAuto
	}
	// The cluster's configured install gives its own defaults; the other
	// install, which auto may find instead, keeps its defaults.
	operator := providerdata.ResolveSpire(providerdata.SpireSettings{Install: types.StringValue(providerdata.SpireInstallOperator)})
	helm := providerdata.ResolveSpire(providerdata.SpireSettings{Install: types.StringValue(providerdata.SpireInstallHelm)})
	if spire := d.Data.SpireOf(client); spire.IsHelm() {
		helm = spire
	} else {
		operator = spire
	}
	if ns := m.Namespace.ValueString(); ns != "" {
		operator.Namespace, helm.Namespace = ns, ns
	}
	in, err := spirefacts.Detect(ctx, client, install, helm.Namespace, spirefacts.OperatorDefaults{
		Namespace: operator.Namespace, ClassName: operator.ClassName,
		Pod: operator.Pod, Container: operator.Container,
	})
	if err != nil {
		resp.Diagnostics.Append(spireServerDiagnostic(err, client.DisplayName()))
		return
	}
	// Empty means unset in these CRDs and in SPIRE's configuration.
	optionalString := providerdata.OptionalString
	var diags diag.Diagnostics
	m.InstalledBy = types.StringValue(in.Install)
	m.TrustDomain = types.StringValue(in.TrustDomain)
	m.ClusterName = optionalString(in.ClusterName)
	m.BundleConfigMap = optionalString(in.BundleConfigMap)
	m.BundleNamespace = optionalString(in.BundleNamespace)
	m.BundleConfigMapKey = optionalString(in.BundleKey)
	if in.BundleConfigMap == "" {
		m.BundleConfigMapKey = types.StringNull()
	}
	m.Namespace = types.StringValue(in.ServerNamespace)
	m.FederationProfile = optionalString(in.FederationProfile)
	m.BundleEndpointURL = optionalString(in.BundleEndpointURL)
	m.BundleEndpointPort = types.Int64Null()
	if in.BundleEndpointPort != 0 {
		m.BundleEndpointPort = types.Int64Value(in.BundleEndpointPort)
	}
	m.EndpointSPIFFEID = optionalString(in.EndpointSPIFFEID)
	m.BundlePublishers, diags = bundlePublishersValue(in.Publishers)
	for _, p := range in.Publishers {
		d.Data.Published.Record(p.URL, in.TrustDomain)
	}
	resp.Diagnostics.Append(diags...)
	m.ClassName = optionalString(in.ClassName)
	m.ServerPod = optionalString(in.ServerPod)
	m.ServerContainer = optionalString(in.ServerContainer)
	m.HelmRelease = types.StringNull()
	if in.Release != "" {
		m.HelmRelease = types.StringValue(in.ReleaseNamespace + "/" + in.Release)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// spireServerDiagnostic says what Detect's error means and what to do.
func spireServerDiagnostic(err error, cluster string) diag.Diagnostic {
	var notFound *spirefacts.NotFoundError
	var noTD *spirefacts.NoTrustDomainError
	var ambiguous *spirefacts.AmbiguousError
	switch {
	case errors.As(err, &notFound):
		return diag.NewAttributeErrorDiagnostic(path.Root("install"), "SPIRE Installation Not Found", fmt.Sprintf(
			"Cluster %q has %s. Install SPIRE (the Zero Trust Workload Identity Manager operator with its "+
				"ZeroTrustWorkloadIdentityManager \"cluster\", with trustDomain and clusterName, or the SPIFFE Helm "+
				"chart), or point `cluster` at the cluster that has it; when it is installed in the same configuration, "+
				"make this data source depend on it.", cluster, strings.TrimPrefix(err.Error(), fmt.Sprintf("cluster %q has ", cluster))))
	case errors.As(err, &noTD):
		return diag.NewErrorDiagnostic("Trust Domain Not Set", fmt.Sprintf(
			"Cluster %q has a SpireServer \"cluster\" but no trust domain: newer operators keep it on the "+
				"ZeroTrustWorkloadIdentityManager \"cluster\" (spec.trustDomain), which does not exist. Create it.", cluster))
	case errors.As(err, &ambiguous):
		return diag.NewAttributeErrorDiagnostic(path.Root("install"), "More Than One SPIRE Installation", fmt.Sprintf(
			"%s. This data source reads one SPIRE server per cluster; remove the releases not in use.", err))
	}
	return kube.Diagnostic(err, "read the SPIRE installation")
}
