package datasources

import (
	"context"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/datasourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireserverattr"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

var (
	_ datasource.DataSourceWithConfigure        = (*trustBundleDataSource)(nil)
	_ datasource.DataSourceWithConfigValidators = (*trustBundleDataSource)(nil)
	_ datasource.DataSourceWithValidateConfig   = (*trustBundleDataSource)(nil)
)

const (
	tbDefaultTimeout = 2 * time.Minute

	// on_unreachable values.
	tbOnUnreachableError = "error"
	tbOnUnreachableWarn  = "warn"
)

// NewTrustBundleDataSource reads one trust domain's SPIFFE bundle.
func NewTrustBundleDataSource() datasource.DataSource {
	return &trustBundleDataSource{}
}

type trustBundleDataSource struct {
	providerdata.DataSourceBase
}

func (d *trustBundleDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = typename.TrustBundle.Under(req.ProviderTypeName)
}

func (d *trustBundleDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = trustBundleSchema()
}

func (d *trustBundleDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{
		datasourcevalidator.ExactlyOneOf(path.MatchRoot("endpoint"), path.MatchRoot("published"), path.MatchRoot("config_map"),
			path.MatchRoot("spire_server")),
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
	attrError := func(name, summary, detail string) {
		validate.AttributeError(&resp.Diagnostics, path.Root("endpoint").AtName(name), summary, detail)
	}
	profile, trustDomain := tbEndpointProfile(e), ""
	if !m.TrustDomain.IsNull() && !m.TrustDomain.IsUnknown() {
		trustDomain = m.TrustDomain.ValueString()
	}
	if summary, detail := bundlesource.EndpointSPIFFEIDProblem(profile, !e.EndpointSPIFFEID.IsNull(), trustDomain); summary != "" {
		attrError("endpoint_spiffe_id", summary, detail)
	}
	if profile == spireexec.ProfileHTTPSWeb {
		if !e.BootstrapBundle.IsNull() {
			attrError("bootstrap_bundle", "Bootstrap Bundle Not Applicable",
				"an https_web endpoint is verified with ca_certificates (or the system roots), not a SPIFFE bundle. "+
					"Remove bootstrap_bundle, or use profile = \"https_spiffe\".")
		}
		return
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

// tbBootstrapTrustDomain is the trust domain the bootstrap bundle must belong
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
	timeout := providerdata.DurationOr(m.Timeout, tbDefaultTimeout, path.Root("timeout"), &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	src, srcPath := d.source(ctx, m, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}

	if client := tbSourceClient(src); client != nil && tbWarnsUnreachable(d.Data, m, client) &&
		!d.Data.Answers(ctx, client, &resp.Diagnostics) {
		// Said once per cluster by Answers; what depends on the bundle
		// keeps what it has (zerotrust_spire_bundle keeps its last one).
		tbSetNoOutputs(&m)
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
		return
	}
	b, err := bundlesource.Read(ctx, src, td, timeout)
	if err != nil {
		resp.Diagnostics.Append(tbReadFailure(err, td, src, srcPath))
		return
	}
	if cm, ok := src.(bundlesource.ConfigMap); ok && tbCheckSpire(ctx, m, &resp.Diagnostics) {
		tbLeaveOutRevoked(ctx, cm, d.Data.SpireOf(cm.Client), td, b, &resp.Diagnostics)
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
	case !m.Published.IsNull():
		return tbPublishedSource(ctx, m, diags), path.Root("published")
	case !m.ConfigMap.IsNull():
		var c trustBundleConfigMapModel
		diags.Append(m.ConfigMap.As(ctx, &c, basetypes.ObjectAsOptions{})...)
		client := d.Data.Client(m.Cluster, diags)
		if diags.HasError() {
			return nil, path.Root("config_map")
		}
		spire := d.Data.SpireOf(client)
		return bundlesource.ConfigMap{
			Client:    client,
			Namespace: providerdata.StringOr(c.Namespace, spire.BundleNamespace),
			Name:      providerdata.StringOr(c.Name, spire.BundleConfigMap),
			Key:       c.Key.ValueString(),
		}, path.Root("config_map")
	case !m.SpireServer.IsNull():
		client := d.Data.Client(m.Cluster, diags)
		server, sd := spireserverattr.ServerFrom(ctx, client, d.Data, m.SpireServer)
		diags.Append(sd...)
		if diags.HasError() {
			return nil, path.Root("spire_server")
		}
		return bundlesource.SpireServer(server), path.Root("spire_server")
	}
	diags.AddError("No Trust Bundle Source", "Set exactly one of endpoint, published, config_map or spire_server.")
	return nil, path.Empty()
}

// tbSourceClient is the cluster client of a ConfigMap or SPIRE server
// source; nil for an endpoint.
// tbWarnsUnreachable: on_unreachable, or when unset the cluster's policy
// (the provider's on_unreachable and the cluster's own).
func tbWarnsUnreachable(data *providerdata.Data, m trustBundleModel, client *kube.Client) bool {
	if m.OnUnreachable.IsNull() || m.OnUnreachable.IsUnknown() {
		return data.WarnsUnreachable(client)
	}
	return m.OnUnreachable.ValueString() == tbOnUnreachableWarn
}

func tbSourceClient(src bundlesource.Source) *kube.Client {
	switch s := src.(type) {
	case bundlesource.ConfigMap:
		return s.Client
	case bundlesource.SpireServer:
		return s.Client
	}
	return nil
}

func tbPublishedSource(ctx context.Context, m trustBundleModel, diags *diag.Diagnostics) bundlesource.Source {
	var p trustBundlePublishedModel
	diags.Append(m.Published.As(ctx, &p, basetypes.ObjectAsOptions{})...)
	if diags.HasError() {
		return nil
	}
	src := bundlesource.Published{URL: p.URL.ValueString()}
	if !p.CACertificates.IsNull() {
		roots, err := bundlesource.ParseCertificates(p.CACertificates.ValueString())
		if err != nil {
			diags.AddAttributeError(path.Root("published").AtName("ca_certificates"), "Invalid CA Certificates", err.Error())
			return nil
		}
		src.Roots = roots
	}
	return src
}

func tbEndpointSource(m trustBundleModel, e trustBundleEndpointModel, diags *diag.Diagnostics) bundlesource.Source {
	src := bundlesource.Endpoint{URL: e.URL.ValueString(), Profile: tbEndpointProfile(e)}
	at := path.Root("endpoint")
	if src.Profile == spireexec.ProfileHTTPSWeb {
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

// tbReadFailure explains why no bundle was read, with what to check for the
// kind of source.
func tbReadFailure(err error, td spiffeid.TrustDomain, src bundlesource.Source, at path.Path) diag.Diagnostic {
	var hint string
	switch src.(type) {
	case bundlesource.Endpoint:
		hint = "Check that the URL is reachable from where Terraform runs and, for https_spiffe, that endpoint_spiffe_id " +
			"is the SPIFFE ID the endpoint presents (usually spiffe://<trust domain>/spire/server) and bootstrap_bundle " +
			"is a current bundle of its trust domain; for https_web, that ca_certificates (or the system roots) verify it."
	case bundlesource.Published:
		hint = "Check that the object store answers from where Terraform runs, that the URL is the one " +
			"zerotrust_spire_server reports in bundle_publishers, and that SPIRE's log shows no failed publish."
	case bundlesource.ConfigMap:
		hint = "Check that the ConfigMap exists and that the SPIRE server writes the bundle into it: with its " +
			bundlesource.PluginPublisher + " (the Helm chart's default, key " + bundlesource.KeySPIFFE + ") or its " +
			bundlesource.PluginNotifier + " (the operator's, key " + bundlesource.KeyPEM + ")."
	case bundlesource.SpireServer:
		hint = "Check that the SPIRE server pod is running and that the credentials may `get` `pods` and `get` and `create` `pods/exec` in its namespace."
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

// tbCheckSpire is config_map.check_spire, true when unset.
func tbCheckSpire(ctx context.Context, m trustBundleModel, diags *diag.Diagnostics) bool {
	var c trustBundleConfigMapModel
	diags.Append(m.ConfigMap.As(ctx, &c, basetypes.ObjectAsOptions{})...)
	return c.CheckSpire.IsNull() || c.CheckSpire.ValueBool()
}

// tbSpireCheckTimeout bounds the one attempt at asking SPIRE for the bundle
// a ConfigMap is compared with: the ConfigMap was read, so a SPIRE server
// that does not answer costs a warning, not the read.
const tbSpireCheckTimeout = 15 * time.Second

// tbLeaveOutRevoked compares the bundle read from cm with the one its SPIRE
// server holds and removes from b the authorities SPIRE does not hold. The
// SPIRE server is the authority on its own bundle. Dropping, rather than
// only warning, keeps such an authority out of everything seeded from this
// bundle (a peer's bootstrap bundle, the repair of a lost one), where no
// later refresh may remove it. The warning says why each is there
// (tbDroppedWarnings): SPIRE revoked it, or someone else put it there.
//
// The SPIRE server asked is the cluster's (spire) when cm is its bundle
// ConfigMap's namespace, as with the chart, whose server publishes to
// another namespace than its own; else the pod of the same name in cm's
// namespace, where the operator runs both.
func tbLeaveOutRevoked(ctx context.Context, cm bundlesource.ConfigMap, spire providerdata.Spire, td spiffeid.TrustDomain,
	b *spiffebundle.Bundle, diags *diag.Diagnostics) {
	at := path.Root("config_map").AtName("check_spire")
	namespace := cm.Namespace
	if namespace == spire.BundleNamespace {
		namespace = spire.Namespace
	}
	pod := spireexec.NewServer(cm.Client, namespace, spire.Pod, spire.Container)
	server := bundlesource.SpireServer(pod)
	ctx, cancel := context.WithTimeout(ctx, tbSpireCheckTimeout)
	defer cancel()
	own, err := server.Fetch(ctx, td)
	if err != nil {
		diags.AddAttributeWarning(at, "Bundle ConfigMap Not Checked Against SPIRE", fmt.Sprintf(
			"Could not ask the %s for the bundle it holds, so the bundle of %q is the one %s holds, which may still carry "+
				"an authority SPIRE revoked (SPIRE does not rewrite the ConfigMap when it revokes one) or one someone else "+
				"added. Allow `get` on `pods` and `get` and `create` on `pods/exec` there, or set config_map.check_spire = "+
				"false to trust the ConfigMap without asking.\n\n%v", server, td.Name(), cm, err))
		return
	}
	diff := trustbundle.CompareX509(b, own, time.Now())
	var dropped []tbDropped
	for _, cert := range diff.Dropped {
		b.RemoveX509Authority(cert)
		dropped = append(dropped, tbDropped{name: trustbundle.Describe([]*x509.Certificate{cert})[0],
			id: hex.EncodeToString(cert.SubjectKeyId)})
	}
	for id := range b.JWTAuthorities() {
		if !own.HasJWTAuthority(id) {
			b.RemoveJWTAuthority(id)
			dropped = append(dropped, tbDropped{name: fmt.Sprintf("JWT authority %q", id), id: id, jwt: true})
		}
	}
	if len(dropped) == 0 && len(diff.Missing) == 0 {
		return
	}
	var w tbWriter
	w.key, w.writer, _ = cm.Writer(ctx) // a second read, only to word the warnings: unknown is said as such
	if len(dropped) > 0 {
		previous, err := pod.Previous(ctx)
		tbDroppedWarnings(cm, w, td, dropped, previous, err, at, diags)
	}
	if len(diff.Missing) > 0 {
		when := "SPIRE's " + bundlesource.PluginNotifier + " writes them at SPIRE's next bundle update"
		if w.publisher() {
			when = "SPIRE's " + bundlesource.PluginPublisher + ", which wrote it, publishes them within 30 seconds"
		}
		diags.AddAttributeWarning(at, "Bundle ConfigMap Lags SPIRE", fmt.Sprintf(
			"The SPIRE server holds X.509 authorities of %q that %s does not yet: %s. %s; read spire_server instead "+
				"to get them now.",
			td.Name(), cm, strings.Join(trustbundle.Describe(diff.Missing), ", "), when))
	}
}
