// Package provider implements the zerotrust provider: its configuration,
// the registry of resources and data sources, and its functions.
package provider

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/actions"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/datasources"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/resources"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

var (
	_ provider.Provider              = (*zerotrustProvider)(nil)
	_ provider.ProviderWithFunctions = (*zerotrustProvider)(nil)
	_ provider.ProviderWithActions   = (*zerotrustProvider)(nil)
)

type zerotrustProvider struct {
	version string
	// configured is what Configure gave resources, for the fast paths
	// (FastPaths); nil before Configure, after a failed one and while the
	// provider defers, so that the framework answers then. One provider
	// serves one server (protoserver.New).
	configured atomic.Pointer[providerdata.Data]
}

// FastPaths are the fast paths (internal/fastpath) of p, a provider New
// made, for protoserver.WithFastPaths: they serve the resources a
// configuration holds by the hundred from what p's Configure configured.
// Another provider has none.
func FastPaths(p provider.Provider) map[string]fastpath.Resource {
	zp, ok := p.(*zerotrustProvider)
	if !ok {
		return nil
	}
	return resources.FastPaths(zp.configured.Load)
}

// New returns a constructor for the provider at the given version.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &zerotrustProvider{version: version} }
}

func (p *zerotrustProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = typename.Provider
	resp.Version = p.version
}

func (p *zerotrustProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = providerSchema()
}

func (p *zerotrustProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	p.configured.Store(nil)
	defer func() {
		if data, ok := resp.ResourceData.(*providerdata.Data); ok && resp.Deferred == nil && !resp.Diagnostics.HasError() {
			p.configured.Store(data)
		}
	}()
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}

	reconnect, err := time.ParseDuration(providerdata.StringOr(cfg.ReconnectTimeout, defaultReconnectTimeout))
	if err != nil {
		validate.AttributeError(&resp.Diagnostics, path.Root("reconnect_timeout"), "Invalid Reconnect Timeout",
			fmt.Sprintf("%q is not a Go duration such as \"60s\" or \"5m\".", cfg.ReconnectTimeout.ValueString()))
		return
	}
	settings := kube.Settings{
		FieldManager:     providerdata.StringOr(cfg.FieldManager, defaultFieldManager),
		QPS:              float32(defaultQPS),
		Burst:            defaultBurst,
		UserAgent:        "terraform-provider-zerotrust/" + p.version,
		ReconnectTimeout: reconnect,
	}
	if !cfg.QPS.IsNull() && !cfg.QPS.IsUnknown() {
		settings.QPS = float32(cfg.QPS.ValueFloat64())
	}
	if !cfg.Burst.IsNull() && !cfg.Burst.IsUnknown() {
		settings.Burst = int(cfg.Burst.ValueInt64())
	}
	clusters := kube.NewClusters(settings)

	// The default connection: attributes first, then the kubernetes provider's environment variables.
	var def connectionModel
	defUnknown := cfg.Kubernetes.IsUnknown() || hasUnknown(cfg.Kubernetes)
	if !cfg.Kubernetes.IsNull() && !cfg.Kubernetes.IsUnknown() {
		resp.Diagnostics.Append(cfg.Kubernetes.As(ctx, &def, basetypes.ObjectAsOptions{})...)
	}
	defConn := connectionFromModel(ctx, def, path.Root("kubernetes"), &resp.Diagnostics)
	applyEnv(&defConn)
	if !defConn.IsEmpty() || defUnknown {
		clusters.Add(kube.DefaultKey, defConn, defUnknown)
	}
	onUnreachable := map[string]string{kube.DefaultKey: def.OnUnreachable.ValueString()}
	clusterSpire := map[string]providerdata.Spire{}
	addSpire(ctx, clusterSpire, kube.DefaultKey, def.Spire, &resp.Diagnostics)
	connectionUnknown := defUnknown

	if cfg.Clusters.IsUnknown() {
		if req.ClientCapabilities.DeferralAllowed {
			// Without keys no resource can be matched to a cluster: defer
			// all of them (see the deferral at the end).
			resp.Deferred = &provider.Deferred{Reason: provider.DeferredReasonProviderConfigUnknown}
			return
		}
		resp.Diagnostics.AddAttributeError(path.Root("clusters"), "Cluster Map Not Known at Plan Time",
			"The keys of `clusters` must be known when planning, because resources are matched to clusters by key. "+
				"Values inside each cluster (host, token, certificates) may be unknown; build the map with known keys.")
		return
	}
	for key, v := range cfg.Clusters.Elements() {
		obj, ok := v.(types.Object)
		if !ok {
			continue
		}
		p := path.Root("clusters").AtMapKey(key)
		if key == "" {
			resp.Diagnostics.AddAttributeError(p, "Invalid Cluster Key", "Cluster keys must not be empty.")
			continue
		}
		var m connectionModel
		if !obj.IsUnknown() && !obj.IsNull() {
			resp.Diagnostics.Append(obj.As(ctx, &m, basetypes.ObjectAsOptions{})...)
		}
		unknown := obj.IsUnknown() || hasUnknown(obj)
		connectionUnknown = connectionUnknown || unknown
		clusters.Add(key, connectionFromModel(ctx, m, p, &resp.Diagnostics), unknown)
		onUnreachable[key] = m.OnUnreachable.ValueString()
		addSpire(ctx, clusterSpire, key, m.Spire, &resp.Diagnostics)
	}
	if resp.Diagnostics.HasError() {
		return
	}

	data := &providerdata.Data{
		Clusters:                 clusters,
		Spire:                    providerdata.ResolveSpire(providerdata.SpireSettings{}),
		ClusterSpire:             clusterSpire,
		MaxFederatedTrustDomains: defaultMaxFederatedTrustDomains,
		UnreachableNotes:         resources.UnreachableNotes(),
		OnUnreachable:            onUnreachable,
		OnUnreachableDefault:     providerdata.StringOr(cfg.OnUnreachable, providerdata.OnUnreachableWarn),
		Published:                &providerdata.PublishedURLs{},
	}
	if v := cfg.MaxFederatedTrustDomains; !v.IsNull() && !v.IsUnknown() {
		data.MaxFederatedTrustDomains = int(v.ValueInt64())
	}
	timeout := defaultDNSTimeout
	if cfg.DNS != nil {
		data.DNSResolver = cfg.DNS.Resolver.ValueString()
		if v := cfg.DNS.Timeout.ValueString(); v != "" {
			timeout = v
		}
	}
	d, err := time.ParseDuration(timeout)
	if err != nil || d <= 0 {
		validate.AttributeError(&resp.Diagnostics, path.Root("dns").AtName("timeout"), "Invalid DNS Timeout",
			fmt.Sprintf("%q is not a positive Go duration such as \"5s\" or \"1m\".", timeout))
		return
	}
	data.DNSTimeout = d
	if cfg.Spire != nil {
		data.Spire = providerdata.ResolveSpire(*cfg.Spire)
	}
	resp.ResourceData = data
	resp.DataSourceData = data
	resp.ActionData = data
	resp.ListResourceData = data
	// While any cluster connection is unknown (a cluster created in the same
	// run, as in Terraform Stacks) and the client supports deferred actions
	// (-allow-deferral), defer every resource and data source of the
	// provider. Clients without that support keep the older answer: resources
	// on such a cluster plan with unknown values, the others as usual.
	//
	// The deferral is the provider-wide one the framework applies by itself,
	// not a per-resource one (ModifyPlan and Read setting resp.Deferred only
	// when their own cluster is unknown): that would repeat the check in every
	// resource, while deferring all costs resources on known clusters only the
	// one extra plan-and-apply round the unknown cluster needs anyway.
	if connectionUnknown && req.ClientCapabilities.DeferralAllowed {
		resp.Deferred = &provider.Deferred{Reason: provider.DeferredReasonProviderConfigUnknown}
	}
}

func (p *zerotrustProvider) Resources(context.Context) []func() resource.Resource {
	return resources.All()
}

// ListResources serves `list` blocks (Terraform >= 1.14, `terraform query`).
func (p *zerotrustProvider) ListResources(context.Context) []func() list.ListResource {
	return resources.Lists()
}

// Actions serves `action` blocks (Terraform >= 1.14).
func (p *zerotrustProvider) Actions(context.Context) []func() action.Action {
	return actions.All()
}

func (p *zerotrustProvider) DataSources(context.Context) []func() datasource.DataSource {
	return datasources.All()
}

func (p *zerotrustProvider) Functions(context.Context) []func() function.Function {
	return []func() function.Function{
		NewSpiffeIDFunction,
		NewParseSpiffeIDFunction,
		NewTrustDomainFunction,
	}
}

// addSpire records a connection's own `spire` under its key; a connection
// without one takes the provider's (Data.SpireOf).
func addSpire(ctx context.Context, into map[string]providerdata.Spire, key string, v types.Object, diags *diag.Diagnostics) {
	if v.IsNull() || v.IsUnknown() {
		return
	}
	var s providerdata.SpireSettings
	diags.Append(v.As(ctx, &s, basetypes.ObjectAsOptions{})...)
	into[key] = providerdata.ResolveSpire(s)
}

func connectionFromModel(ctx context.Context, m connectionModel, p path.Path, diags *diag.Diagnostics) kube.Connection {
	c := kube.Connection{
		ConfigContext:         m.ConfigContext.ValueString(),
		ConfigContextAuthInfo: m.ConfigContextAuthInfo.ValueString(),
		ConfigContextCluster:  m.ConfigContextCluster.ValueString(),
		Host:                  m.Host.ValueString(),
		Token:                 m.Token.ValueString(),
		ClientCertificate:     m.ClientCertificate.ValueString(),
		ClientKey:             m.ClientKey.ValueString(),
		ClusterCACertificate:  m.ClusterCACertificate.ValueString(),
		Insecure:              m.Insecure.ValueBool(),
		TLSServerName:         m.TLSServerName.ValueString(),
		ProxyURL:              m.ProxyURL.ValueString(),
	}
	if v := m.ConfigPath.ValueString(); v != "" {
		c.ConfigPaths = append(c.ConfigPaths, v)
	}
	if !m.ConfigPaths.IsNull() && !m.ConfigPaths.IsUnknown() {
		var paths []string
		diags.Append(m.ConfigPaths.ElementsAs(ctx, &paths, false)...)
		c.ConfigPaths = append(c.ConfigPaths, paths...)
	}
	if !m.Exec.IsNull() && !m.Exec.IsUnknown() {
		var e execModel
		diags.Append(m.Exec.As(ctx, &e, basetypes.ObjectAsOptions{})...)
		exec := &kube.ExecConfig{APIVersion: e.APIVersion.ValueString(), Command: e.Command.ValueString()}
		if !e.Args.IsNull() && !e.Args.IsUnknown() {
			diags.Append(e.Args.ElementsAs(ctx, &exec.Args, false)...)
		}
		if !e.Env.IsNull() && !e.Env.IsUnknown() {
			diags.Append(e.Env.ElementsAs(ctx, &exec.Env, false)...)
		}
		c.Exec = exec
	}
	if c.ClientCertificate != "" && c.ClientKey == "" || c.ClientCertificate == "" && c.ClientKey != "" {
		diags.AddAttributeError(p.AtName("client_key"), "Incomplete Client Certificate",
			"Set both client_certificate and client_key, or neither.")
	}
	return c
}

// applyEnv fills unset default-connection values from the environment
// variables the hashicorp/kubernetes provider reads, so CI setups carry over.
func applyEnv(c *kube.Connection) {
	if len(c.ConfigPaths) == 0 {
		if v := os.Getenv("KUBE_CONFIG_PATH"); v != "" {
			c.ConfigPaths = []string{v}
		} else if v := os.Getenv("KUBE_CONFIG_PATHS"); v != "" {
			c.ConfigPaths = strings.Split(v, string(os.PathListSeparator))
		}
	}
	setFromEnv(&c.ConfigContext, "KUBE_CTX")
	setFromEnv(&c.ConfigContextAuthInfo, "KUBE_CTX_AUTH_INFO")
	setFromEnv(&c.ConfigContextCluster, "KUBE_CTX_CLUSTER")
	setFromEnv(&c.Host, "KUBE_HOST")
	setFromEnv(&c.Token, "KUBE_TOKEN")
	setFromEnv(&c.ClusterCACertificate, "KUBE_CLUSTER_CA_CERT_DATA")
	setFromEnv(&c.ClientCertificate, "KUBE_CLIENT_CERT_DATA")
	setFromEnv(&c.ClientKey, "KUBE_CLIENT_KEY_DATA")
	setFromEnv(&c.TLSServerName, "KUBE_TLS_SERVER_NAME")
	setFromEnv(&c.ProxyURL, "KUBE_PROXY_URL")
	if v, err := strconv.ParseBool(os.Getenv("KUBE_INSECURE")); err == nil && !c.Insecure {
		c.Insecure = v
	}
}

func setFromEnv(dst *string, name string) {
	if *dst == "" {
		*dst = os.Getenv(name)
	}
}

// hasUnknown reports whether v or anything nested in it is unknown.
func hasUnknown(v attr.Value) bool {
	if v == nil || v.IsNull() {
		return false
	}
	if v.IsUnknown() {
		return true
	}
	switch t := v.(type) {
	case types.Object:
		for _, e := range t.Attributes() {
			if hasUnknown(e) {
				return true
			}
		}
	case types.List:
		for _, e := range t.Elements() {
			if hasUnknown(e) {
				return true
			}
		}
	case types.Map:
		for _, e := range t.Elements() {
			if hasUnknown(e) {
				return true
			}
		}
	}
	return false
}
