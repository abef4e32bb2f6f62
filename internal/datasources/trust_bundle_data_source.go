package datasources

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/datasourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

var (
	_ datasource.DataSourceWithConfigure        = (*trustBundleDataSource)(nil)
	_ datasource.DataSourceWithConfigValidators = (*trustBundleDataSource)(nil)
	_ datasource.DataSourceWithValidateConfig   = (*trustBundleDataSource)(nil)
)

const (
	tbDefaultTimeout   = "2m"
	tbDefaultPod       = "spire-server-0"
	tbDefaultContainer = "spire-server"
	tbDefaultConfigMap = "spire-bundle"
)

// NewTrustBundleDataSource reads one trust domain's SPIFFE bundle.
func NewTrustBundleDataSource() datasource.DataSource {
	return &trustBundleDataSource{}
}

type trustBundleDataSource struct {
	providerdata.DataSourceBase
}

type trustBundleModel struct {
	TrustDomain types.String `tfsdk:"trust_domain"`
	Cluster     types.String `tfsdk:"cluster"`
	Timeout     types.String `tfsdk:"timeout"`
	Endpoint    types.Object `tfsdk:"endpoint"`
	ConfigMap   types.Object `tfsdk:"config_map"`
	SpireServer types.Object `tfsdk:"spire_server"`

	SPIFFEBundle           types.String `tfsdk:"spiffe_bundle"`
	X509AuthoritiesPEM     types.String `tfsdk:"x509_authorities_pem"`
	JWTAuthorities         types.Map    `tfsdk:"jwt_authorities"`
	RefreshHint            types.Int64  `tfsdk:"refresh_hint"`
	SequenceNumber         types.Int64  `tfsdk:"sequence_number"`
	X509FingerprintsSHA256 types.List   `tfsdk:"x509_fingerprints_sha256"`
	ExpiresAt              types.String `tfsdk:"expires_at"`
}

type trustBundleEndpointModel struct {
	URL              types.String `tfsdk:"url"`
	Profile          types.String `tfsdk:"profile"`
	EndpointSPIFFEID types.String `tfsdk:"endpoint_spiffe_id"`
	BootstrapBundle  types.String `tfsdk:"bootstrap_bundle"`
	CACertificates   types.String `tfsdk:"ca_certificates"`
}

type trustBundleConfigMapModel struct {
	Namespace types.String `tfsdk:"namespace"`
	Name      types.String `tfsdk:"name"`
	Key       types.String `tfsdk:"key"`
}

type trustBundleSpireServerModel struct {
	Namespace types.String `tfsdk:"namespace"`
	Pod       types.String `tfsdk:"pod"`
	Container types.String `tfsdk:"container"`
}

func (d *trustBundleDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_trust_bundle"
}

func (d *trustBundleDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads the SPIFFE trust bundle of one trust domain from exactly one source: the trust domain's " +
			"federation bundle endpoint (`endpoint`), the bundle ConfigMap its SPIRE server keeps current (`config_map`), " +
			"or the SPIRE server itself through pod exec of `spire-server bundle show -format spiffe` (`spire_server`). " +
			"This is how peers get each other's bundles without copying them by hand: pass `spiffe_bundle` to " +
			"`zerotrust_federated_trust_domain.trust_domain_bundle` on the other clusters.\n\n" +
			"The source is retried with backoff until `timeout` (a SPIRE server restarting after a federation change is " +
			"normal). The bundle is then checked: a bundle of another trust domain, or one whose X.509 authorities have all " +
			"expired, is an error. `spiffe_bundle` is normalised (stable key and key-set order), so reading an unchanged " +
			"bundle again never shows a difference in a plan.\n\n" +
			"What each source carries: the endpoint serves the full bundle with its refresh hint; `bundle show` and a " +
			"`bundle.spiffe` ConfigMap key carry authorities and sequence number but no refresh hint; a `bundle.crt` " +
			"(PEM) ConfigMap key carries only the X.509 authorities.",
		Attributes: map[string]schema.Attribute{
			"trust_domain": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The trust domain whose bundle to read, e.g. `west.example.org` (no `spiffe://`). " +
					"The bundle read must belong to it.",
				Validators: []validator.String{validate.TrustDomain()},
			},
			"cluster": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Key of the provider's `clusters` map naming the cluster that `config_map` or " +
					"`spire_server` is read from. Unset means the provider's `kubernetes` connection. Not used by `endpoint`.",
			},
			"timeout": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "How long to keep retrying the source before failing, as a duration such as `30s` or " +
					"`5m`. Defaults to `" + tbDefaultTimeout + "`.",
				Validators: []validator.String{validate.Duration()},
			},
			"endpoint": schema.SingleNestedAttribute{
				Optional:            true,
				MarkdownDescription: "Read the bundle from the trust domain's SPIFFE federation bundle endpoint.",
				Attributes: map[string]schema.Attribute{
					"url": schema.StringAttribute{
						Required:            true,
						MarkdownDescription: "The bundle endpoint URL, e.g. `https://spire-bundle.west.example.org:8443`.",
						Validators:          []validator.String{validate.HTTPSURL()},
					},
					"profile": schema.StringAttribute{
						Optional: true,
						MarkdownDescription: "How the endpoint authenticates: `https_spiffe` (default; it presents an " +
							"X.509-SVID for `endpoint_spiffe_id`, checked against `bootstrap_bundle`) or `https_web` (a Web PKI " +
							"certificate, checked against `ca_certificates` or the system roots).",
						Validators: []validator.String{stringvalidator.OneOf(bundlesource.ProfileHTTPSSPIFFE, bundlesource.ProfileHTTPSWeb)},
					},
					"endpoint_spiffe_id": schema.StringAttribute{
						Optional: true,
						MarkdownDescription: "SPIFFE ID the endpoint must present, usually `spiffe://<trust_domain>/spire/server`. " +
							"Required for `https_spiffe`, refused for `https_web`.",
						Validators: []validator.String{validate.SPIFFEID()},
					},
					"bootstrap_bundle": schema.StringAttribute{
						Optional: true,
						MarkdownDescription: "A SPIFFE bundle (JSON) of the endpoint SPIFFE ID's trust domain that verifies the " +
							"endpoint's certificate, for example an earlier read of this data source from another source. " +
							"Required for `https_spiffe`, refused for `https_web`.",
					},
					"ca_certificates": schema.StringAttribute{
						Optional: true,
						MarkdownDescription: "PEM CA certificates that verify an `https_web` endpoint. Unset means the system " +
							"roots. Refused for `https_spiffe`.",
						Validators: []validator.String{validate.PEMCertificates()},
					},
				},
			},
			"config_map": schema.SingleNestedAttribute{
				Optional: true,
				MarkdownDescription: "Read the bundle from the ConfigMap the SPIRE server publishes it in (its `k8sbundle` " +
					"notifier, or the operator). `config_map = {}` reads the defaults.",
				Attributes: map[string]schema.Attribute{
					"namespace": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "Namespace of the ConfigMap. Defaults to the provider's `spire.namespace`.",
						Validators:          []validator.String{validate.DNSLabel()},
					},
					"name": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "Name of the ConfigMap. Defaults to `" + tbDefaultConfigMap + "`.",
						Validators:          []validator.String{validate.K8sName()},
					},
					"key": schema.StringAttribute{
						Optional: true,
						MarkdownDescription: "Key holding the bundle, as SPIFFE bundle JSON or PEM certificates (detected from " +
							"the content). Defaults to `" + bundlesource.KeySPIFFE + "` when the ConfigMap has it, else `" +
							bundlesource.KeyPEM + "`.",
						Validators: []validator.String{validate.ConfigMapKey()},
					},
				},
			},
			"spire_server": schema.SingleNestedAttribute{
				Optional: true,
				MarkdownDescription: "Ask the SPIRE server itself: pod exec of `spire-server bundle show -format spiffe` " +
					"through the API server (the credentials need `create` on `pods/exec`). `spire_server = {}` reads the defaults.",
				Attributes: map[string]schema.Attribute{
					"namespace": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "Namespace of the SPIRE server pod. Defaults to the provider's `spire.namespace`.",
						Validators:          []validator.String{validate.DNSLabel()},
					},
					"pod": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "Name of the SPIRE server pod. Defaults to `" + tbDefaultPod + "`.",
						Validators:          []validator.String{validate.K8sName()},
					},
					"container": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "Container running `spire-server`. Defaults to `" + tbDefaultContainer + "`.",
						Validators:          []validator.String{validate.DNSLabel()},
					},
				},
			},
			"spiffe_bundle": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "The bundle as SPIFFE bundle JSON, normalised (members sorted, keys ordered by use, key " +
					"ID and certificate), ready for `zerotrust_federated_trust_domain.trust_domain_bundle`.",
			},
			"x509_authorities_pem": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The X.509 authorities as PEM certificates, oldest first.",
			},
			"jwt_authorities": schema.MapAttribute{
				Computed:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "The JWT authorities: key ID to PEM public key.",
			},
			"refresh_hint": schema.Int64Attribute{
				Computed: true,
				MarkdownDescription: "How often, in seconds, the bundle's publisher asks peers to refresh it; null when the " +
					"source does not say (only bundle endpoints do).",
			},
			"sequence_number": schema.Int64Attribute{
				Computed:            true,
				MarkdownDescription: "The bundle's sequence number (it grows with each change); null when the source does not say.",
			},
			"x509_fingerprints_sha256": schema.ListAttribute{
				Computed:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "Lowercase hex SHA-256 fingerprints of the X.509 authorities, sorted.",
			},
			"expires_at": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "When the first X.509 authority expires (RFC 3339, UTC).",
			},
		},
	}
}

func (d *trustBundleDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{
		datasourcevalidator.ExactlyOneOf(path.MatchRoot("endpoint"), path.MatchRoot("config_map"), path.MatchRoot("spire_server")),
	}
}

// ValidateConfig applies the profile rules of the endpoint source and checks
// the bootstrap bundle against the trust domain it must verify.
func (d *trustBundleDataSource) ValidateConfig(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	var m trustBundleModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || m.Endpoint.IsNull() || m.Endpoint.IsUnknown() {
		return
	}
	var e trustBundleEndpointModel
	resp.Diagnostics.Append(m.Endpoint.As(ctx, &e, basetypes.ObjectAsOptions{})...)
	if resp.Diagnostics.HasError() || e.Profile.IsUnknown() {
		return
	}
	at := func(name string) path.Path { return path.Root("endpoint").AtName(name) }
	attrError := func(name, summary, detail string) {
		resp.Diagnostics.AddAttributeError(at(name), summary, "Attribute "+at(name).String()+": "+detail)
	}
	if tbEndpointProfile(e) == bundlesource.ProfileHTTPSWeb {
		if !e.EndpointSPIFFEID.IsNull() {
			attrError("endpoint_spiffe_id", "Endpoint SPIFFE ID Not Applicable",
				"an https_web endpoint authenticates with Web PKI, not a SPIFFE ID. Remove endpoint_spiffe_id, or use profile = \"https_spiffe\".")
		}
		if !e.BootstrapBundle.IsNull() {
			attrError("bootstrap_bundle", "Bootstrap Bundle Not Applicable",
				"an https_web endpoint is verified with ca_certificates (or the system roots), not a SPIFFE bundle. "+
					"Remove bootstrap_bundle, or use profile = \"https_spiffe\".")
		}
		return
	}
	if e.EndpointSPIFFEID.IsNull() {
		attrError("endpoint_spiffe_id", "Missing Endpoint SPIFFE ID",
			"the https_spiffe profile authenticates the endpoint by the SPIFFE ID it presents, so endpoint_spiffe_id is "+
				"required, usually \"spiffe://<trust_domain>/spire/server\".")
	}
	if e.BootstrapBundle.IsNull() {
		attrError("bootstrap_bundle", "Missing Bootstrap Bundle",
			"the https_spiffe profile verifies the endpoint's certificate with a bundle of its trust domain obtained "+
				"beforehand, so bootstrap_bundle is required: read it once through config_map or spire_server (or another "+
				"trusted channel), or use an https_web endpoint.")
	}
	if !e.CACertificates.IsNull() {
		attrError("ca_certificates", "CA Certificates Not Applicable",
			"an https_spiffe endpoint is verified with bootstrap_bundle, not Web PKI CA certificates. Remove "+
				"ca_certificates, or use profile = \"https_web\".")
	}
	if e.BootstrapBundle.IsNull() || e.BootstrapBundle.IsUnknown() {
		return
	}
	td, known := tbBootstrapTrustDomain(m.TrustDomain, e.EndpointSPIFFEID)
	if !known {
		// Only the syntax can be checked; the placeholder is compared with nothing.
		td = spiffeid.RequireTrustDomainFromString("unknown.invalid")
	}
	b, err := trustbundle.Parse(td, []byte(e.BootstrapBundle.ValueString()))
	if err != nil {
		attrError("bootstrap_bundle", "Invalid Bootstrap Bundle",
			"the value must be a SPIFFE bundle JSON document, as `spire-server bundle show -format spiffe` prints it or "+
				"this data source's spiffe_bundle holds: "+err.Error()+".")
		return
	}
	if !known {
		return
	}
	if _, err := trustbundle.Check(td, b, time.Now()); err != nil {
		attrError("bootstrap_bundle", "Unusable Bootstrap Bundle",
			fmt.Sprintf("the bundle cannot verify an endpoint of trust domain %q: %v.", td.Name(), err))
	}
}

func tbEndpointProfile(e trustBundleEndpointModel) string {
	if e.Profile.IsNull() {
		return bundlesource.ProfileHTTPSSPIFFE
	}
	return e.Profile.ValueString()
}

// bootstrapTrustDomain is the trust domain the bootstrap bundle must belong
// to: that of the endpoint's SPIFFE ID (which may differ from the trust
// domain being read), else the trust domain being read.
func tbBootstrapTrustDomain(trustDomain, endpointID types.String) (spiffeid.TrustDomain, bool) {
	if !endpointID.IsNull() {
		if endpointID.IsUnknown() {
			return spiffeid.TrustDomain{}, false
		}
		id, err := validate.ParseSPIFFEID(endpointID.ValueString())
		return id.TrustDomain(), err == nil
	}
	if trustDomain.IsNull() || trustDomain.IsUnknown() {
		return spiffeid.TrustDomain{}, false
	}
	td, err := validate.ParseTrustDomain(trustDomain.ValueString())
	return td, err == nil
}

func (d *trustBundleDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m trustBundleModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || !d.Data.CheckCluster(m.Cluster, path.Root("cluster"), &resp.Diagnostics) {
		return
	}
	td, err := validate.ParseTrustDomain(m.TrustDomain.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("trust_domain"), "Invalid Trust Domain", err.Error())
		return
	}
	timeoutText := tbDefaultTimeout
	if !m.Timeout.IsNull() {
		timeoutText = m.Timeout.ValueString()
	}
	timeout, err := time.ParseDuration(timeoutText)
	if err != nil || timeout <= 0 {
		resp.Diagnostics.AddAttributeError(path.Root("timeout"), "Invalid Duration",
			fmt.Sprintf("%q is not a positive duration such as \"30s\" or \"2m\".", timeoutText))
		return
	}
	src, srcPath := d.source(ctx, m, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}

	b, err := bundlesource.Read(ctx, src, td, timeout)
	if err != nil {
		resp.Diagnostics.Append(tbReadFailure(err, td, src, srcPath))
		return
	}
	warnings, err := trustbundle.Check(td, b, time.Now())
	if err != nil {
		resp.Diagnostics.AddAttributeError(srcPath, "Unusable Trust Bundle", fmt.Sprintf(
			"The bundle read from %s cannot serve as the trust bundle of %q, so nothing was stored. Check that the "+
				"source belongs to that trust domain and that its SPIRE server has a current CA.\n\n%v",
			src, td.Name(), err))
		return
	}
	for _, w := range warnings {
		resp.Diagnostics.AddAttributeWarning(srcPath, "Expired Trust Bundle Authority", fmt.Sprintf(
			"The bundle of %q read from %s still has a valid X.509 authority, but %s. SPIRE drops expired authorities by itself.",
			td.Name(), src, w))
	}
	resp.Diagnostics.Append(tbSetOutputs(ctx, &m, b)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// source builds the configured source, with its defaults applied, and the
// attribute path that errors about it point at.
func (d *trustBundleDataSource) source(ctx context.Context, m trustBundleModel, diags *diag.Diagnostics) (bundlesource.Source, path.Path) {
	switch {
	case !m.Endpoint.IsNull():
		var e trustBundleEndpointModel
		diags.Append(m.Endpoint.As(ctx, &e, basetypes.ObjectAsOptions{})...)
		if diags.HasError() {
			return nil, path.Root("endpoint")
		}
		return tbEndpointSource(m, e, diags), path.Root("endpoint")
	case !m.ConfigMap.IsNull():
		var c trustBundleConfigMapModel
		diags.Append(m.ConfigMap.As(ctx, &c, basetypes.ObjectAsOptions{})...)
		client := d.Data.Client(m.Cluster, diags)
		if diags.HasError() {
			return nil, path.Root("config_map")
		}
		return bundlesource.ConfigMap{
			Client:    client,
			Namespace: tbDefault(c.Namespace, d.Data.SpireNamespace),
			Name:      tbDefault(c.Name, tbDefaultConfigMap),
			Key:       c.Key.ValueString(),
		}, path.Root("config_map")
	case !m.SpireServer.IsNull():
		var s trustBundleSpireServerModel
		diags.Append(m.SpireServer.As(ctx, &s, basetypes.ObjectAsOptions{})...)
		client := d.Data.Client(m.Cluster, diags)
		if diags.HasError() {
			return nil, path.Root("spire_server")
		}
		return bundlesource.SpireServer{
			Client:    client,
			Namespace: tbDefault(s.Namespace, d.Data.SpireNamespace),
			Pod:       tbDefault(s.Pod, tbDefaultPod),
			Container: tbDefault(s.Container, tbDefaultContainer),
		}, path.Root("spire_server")
	}
	diags.AddError("No Trust Bundle Source", "Set exactly one of endpoint, config_map or spire_server.")
	return nil, path.Empty()
}

func tbEndpointSource(m trustBundleModel, e trustBundleEndpointModel, diags *diag.Diagnostics) bundlesource.Source {
	src := bundlesource.Endpoint{URL: e.URL.ValueString(), Profile: tbEndpointProfile(e)}
	at := path.Root("endpoint")
	if src.Profile == bundlesource.ProfileHTTPSWeb {
		if !e.CACertificates.IsNull() {
			roots, err := bundlesource.ParseCertificates(e.CACertificates.ValueString())
			if err != nil {
				diags.AddAttributeError(at.AtName("ca_certificates"), "Invalid CA Certificates", err.Error())
				return nil
			}
			src.Roots = roots
		}
		return src
	}
	id, err := validate.ParseSPIFFEID(e.EndpointSPIFFEID.ValueString())
	if err != nil {
		diags.AddAttributeError(at.AtName("endpoint_spiffe_id"), "Invalid SPIFFE ID", err.Error())
		return nil
	}
	td, _ := tbBootstrapTrustDomain(m.TrustDomain, e.EndpointSPIFFEID)
	bootstrap, err := trustbundle.Parse(td, []byte(e.BootstrapBundle.ValueString()))
	if err != nil {
		diags.AddAttributeError(at.AtName("bootstrap_bundle"), "Invalid Bootstrap Bundle", err.Error())
		return nil
	}
	src.EndpointID, src.Bootstrap = id, bootstrap
	return src
}

// readFailure explains why no bundle was read, with what to check for the
// kind of source.
func tbReadFailure(err error, td spiffeid.TrustDomain, src bundlesource.Source, at path.Path) diag.Diagnostic {
	var hint string
	switch src.(type) {
	case bundlesource.Endpoint:
		hint = "Check that the URL is reachable from where Terraform runs and, for https_spiffe, that endpoint_spiffe_id " +
			"is the SPIFFE ID the endpoint presents (usually spiffe://<trust domain>/spire/server) and bootstrap_bundle " +
			"is a current bundle of its trust domain; for https_web, that ca_certificates (or the system roots) verify it."
	case bundlesource.ConfigMap:
		hint = "Check that the ConfigMap exists and that the SPIRE server (its k8sbundle notifier) or the operator writes " +
			"the bundle into it."
	case bundlesource.SpireServer:
		hint = "Check that the SPIRE server pod is running and that the credentials may `create` `pods/exec` in its namespace."
	}
	var timeout *bundlesource.TimeoutError
	var op *kube.OpError
	switch {
	case errors.As(err, &timeout):
		return diag.NewAttributeErrorDiagnostic(at, "Trust Bundle Not Available", fmt.Sprintf(
			"Could not read the trust bundle of %q from %s within %v (%d attempts). %s\n\nLast error: %v",
			td.Name(), timeout.Source, timeout.Timeout, timeout.Attempts, hint, timeout.Last))
	case errors.As(err, &op):
		return kube.Diagnostic(err, fmt.Sprintf("read the trust bundle of %q from %s", td.Name(), src))
	}
	return diag.NewAttributeErrorDiagnostic(at, "Cannot Read the Trust Bundle", fmt.Sprintf(
		"Could not read the trust bundle of %q from %s. %s\n\n%v", td.Name(), src, hint, err))
}

// setBundleOutputs fills the computed attributes from b.
func tbSetOutputs(ctx context.Context, m *trustBundleModel, b *spiffebundle.Bundle) diag.Diagnostics {
	var diags diag.Diagnostics
	normalized, err := trustbundle.Normalize(b)
	if err != nil {
		diags.AddError("Cannot Render the Trust Bundle", err.Error())
		return diags
	}
	m.SPIFFEBundle = types.StringValue(normalized)
	m.X509AuthoritiesPEM = types.StringValue(trustbundle.X509AuthoritiesPEM(b))
	jwt, d := types.MapValueFrom(ctx, types.StringType, trustbundle.JWTAuthorities(b))
	diags.Append(d...)
	m.JWTAuthorities = jwt
	fingerprints, d := types.ListValueFrom(ctx, types.StringType, trustbundle.FingerprintsSHA256(b))
	diags.Append(d...)
	m.X509FingerprintsSHA256 = fingerprints
	m.RefreshHint = types.Int64Null()
	if hint, ok := b.RefreshHint(); ok {
		m.RefreshHint = types.Int64Value(int64(hint / time.Second))
	}
	m.SequenceNumber = types.Int64Null()
	if seq, ok := b.SequenceNumber(); ok {
		if seq > math.MaxInt64 {
			diags.AddWarning("Sequence Number Out of Range",
				fmt.Sprintf("The bundle's sequence number %d does not fit a Terraform number exactly; sequence_number is null.", seq))
		} else {
			m.SequenceNumber = types.Int64Value(int64(seq))
		}
	}
	m.ExpiresAt = types.StringNull()
	if expiry, ok := trustbundle.EarliestExpiry(b); ok {
		m.ExpiresAt = types.StringValue(expiry.UTC().Format(time.RFC3339))
	}
	return diags
}

func tbDefault(v types.String, def string) string {
	if v.IsNull() || v.IsUnknown() || v.ValueString() == "" {
		return def
	}
	return v.ValueString()
}
