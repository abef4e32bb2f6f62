package resources

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spirefacts"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireserverattr"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// operatorPeerLimit is the operator's own limit on federatesWith
// (validation.go validateFederationConfig: "federatesWith array cannot
// exceed 50 entries"), hard-coded in its code whatever its CRD allows.
const operatorPeerLimit = 50

// refuseHelmFederation refuses the resource on a cluster whose spire.install
// is "helm": it edits the operator's SpireServer, which the chart does not
// install, and nothing else would hold what it says. It runs at plan, and
// again before the apply writes anything, for a cluster key that was
// unknown at plan.
func refuseHelmFederation(data *providerdata.Data, cluster types.String, diags *diag.Diagnostics) bool {
	if data == nil || cluster.IsUnknown() || !data.SpireAt(cluster).IsHelm() {
		return false
	}
	where := "the `kubernetes` connection"
	if !cluster.IsNull() {
		where = fmt.Sprintf("cluster %q", cluster.ValueString())
	}
	diags.AddAttributeError(path.Root("cluster"), "SPIRE Installed by the Helm Chart",
		fmt.Sprintf("The SPIRE of %s comes from the SPIFFE Helm chart (its spire.install is %q), which has no "+
			"SpireServer for this resource to edit. The chart's values set its bundle endpoint: spire-server "+
			"`federation.enabled` (with `federation.ingress.enabled` or a Service of your own to publish it). Its federation "+
			"relationships are zerotrust_federated_trust_domain objects, one per peer. Remove this resource, or set "+
			"the cluster's spire.install to %q if the Zero Trust Workload Identity Manager operator installed its SPIRE.",
			where, providerdata.SpireInstallHelm, providerdata.SpireInstallOperator))
	return true
}

// ValidateConfig applies the CRD's cross-field rules and the rules the
// operator's controller checks while it reconciles (validation.go
// validateFederationConfig), so they fail at plan, with no cluster needed:
// the operator would accept the object and then refuse to reconcile it.
func (r *spireFederationResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var cfg spireFederationResourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	opts := basetypes.ObjectAsOptions{UnhandledNullAsEmpty: true, UnhandledUnknownAsEmpty: true}
	if !cfg.BundleEndpoint.IsNull() && !cfg.BundleEndpoint.IsUnknown() {
		var be federationBundleEndpointModel
		resp.Diagnostics.Append(cfg.BundleEndpoint.As(ctx, &be, opts)...)
		webPath := path.Root("bundle_endpoint").AtName("https_web")
		switch {
		case be.Profile.IsUnknown() || be.HTTPSWeb.IsUnknown():
		case be.Profile.ValueString() == spireexec.ProfileHTTPSWeb && be.HTTPSWeb.IsNull():
			validate.AttributeError(&resp.Diagnostics, webPath, "Missing https_web Configuration",
				"the https_web profile serves the bundle with a Web PKI certificate, "+
					"so https_web must say where it comes from: https_web = { acme = { ... } } or "+
					"https_web = { serving_cert = { ... } }.")
		case be.Profile.ValueString() != spireexec.ProfileHTTPSWeb && !be.HTTPSWeb.IsNull():
			validate.AttributeError(&resp.Diagnostics, webPath, "https_web Not Applicable",
				"it configures the https_web profile, but profile is "+
					"\"https_spiffe\" (the default), where it has no effect. Remove https_web, or set profile = \"https_web\".")
		}
		checkACMETermsAccepted(ctx, be.HTTPSWeb, &resp.Diagnostics)
	}
	if cfg.FederatesWith.IsNull() || cfg.FederatesWith.IsUnknown() {
		return
	}
	if n := len(cfg.FederatesWith.Elements()); n > operatorPeerLimit {
		validate.AttributeError(&resp.Diagnostics, path.Root("federates_with"), "Too Many Federated Trust Domains",
			fmt.Sprintf("%d entries, more than the limit of %d. The Zero Trust Workload Identity Manager operator "+
				"refuses more whatever its CRD allows (validation.go validateFederationConfig: \"federatesWith array "+
				"cannot exceed 50 entries\") and would stop reconciling the SpireServer. Federate with the others "+
				"through zerotrust_federated_trust_domain.", n, operatorPeerLimit))
	}
	for td, v := range cfg.FederatesWith.Elements() {
		obj, ok := v.(types.Object)
		if !ok || obj.IsNull() || obj.IsUnknown() {
			continue
		}
		var p federationPeerModel
		resp.Diagnostics.Append(obj.As(ctx, &p, opts)...)
		if p.BundleEndpointProfile.IsUnknown() {
			continue
		}
		if summary, detail := bundlesource.EndpointSPIFFEIDProblem(p.BundleEndpointProfile.ValueString(),
			!p.EndpointSPIFFEID.IsNull(), td); summary != "" {
			validate.AttributeError(&resp.Diagnostics, path.Root("federates_with").AtMapKey(td).AtName("endpoint_spiffe_id"),
				summary, detail)
		}
	}
}

// checkACMETermsAccepted refuses ACME without tos_accepted = true: the
// operator's validation.go validateAcmeConfig refuses it ("tosAccepted must
// be true to use ACME"), and the CRD's default is "false".
func checkACMETermsAccepted(ctx context.Context, httpsWeb types.Object, diags *diag.Diagnostics) {
	if httpsWeb.IsNull() || httpsWeb.IsUnknown() {
		return
	}
	opts := basetypes.ObjectAsOptions{UnhandledNullAsEmpty: true, UnhandledUnknownAsEmpty: true}
	var web federationHTTPSWebModel
	diags.Append(httpsWeb.As(ctx, &web, opts)...)
	if web.ACME.IsNull() || web.ACME.IsUnknown() {
		return
	}
	var acme federationACMEModel
	diags.Append(web.ACME.As(ctx, &acme, opts)...)
	if acme.TOSAccepted.IsUnknown() || acme.TOSAccepted.ValueBool() {
		return
	}
	validate.AttributeError(diags, path.Root("bundle_endpoint").AtName("https_web").AtName("acme").AtName("tos_accepted"),
		"ACME Terms of Service Not Accepted",
		"tos_accepted must be true to use ACME (unset, it is the CRD's default false). The Zero Trust Workload "+
			"Identity Manager operator refuses the federation otherwise (validation.go validateAcmeConfig: "+
			"\"tosAccepted must be true to use ACME\"): it sets ConfigurationValid=False on the SpireServer and stops "+
			"reconciling it. Read the ACME CA's terms of service and set tos_accepted = true, or use serving_cert.")
}

func (r *spireFederationResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		if !req.State.Raw.IsNull() {
			var cluster types.String
			resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("cluster"), &cluster)...)
			resp.Diagnostics.AddWarning("Federation Stays on the SpireServer", destroyDetail(cluster.ValueString()))
		}
		return
	}
	if r.Data == nil {
		return
	}
	var plan spireFederationResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	var state *spireFederationResourceModel
	if !req.State.Raw.IsNull() {
		state = &spireFederationResourceModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	}
	if resp.Diagnostics.HasError() || !r.Data.CheckCluster(plan.Cluster, path.Root("cluster"), &resp.Diagnostics) ||
		refuseHelmFederation(r.Data, plan.Cluster, &resp.Diagnostics) {
		return
	}
	if !plan.FederatesWith.IsNull() && !plan.FederatesWith.IsUnknown() && !plan.Cluster.IsUnknown() {
		planned := plannedFederationsOf(r.Data)
		for td := range plan.FederatesWith.Elements() {
			at := path.Root("federates_with").AtMapKey(td)
			carried := planned.add(plan.Cluster.ValueString(), td)
			planned.refuseCarried(plan.Cluster.ValueString(), td, carried, at, &resp.Diagnostics)
			refuseSecondSource(r.Data, plan.Cluster, td, inConfigFile, declaredBySpireFederation(plan.Cluster, td), at, &resp.Diagnostics)
		}
	}
	if !plan.FederatesWith.IsNull() && !plan.FederatesWith.IsUnknown() {
		// Above operatorPeerLimit ValidateConfig has refused already.
		if n, limit := len(plan.FederatesWith.Elements()), r.Data.MaxFederatedTrustDomains; limit > 0 && n > limit && n <= operatorPeerLimit {
			validate.AttributeError(&resp.Diagnostics, path.Root("federates_with"), "Too Many Federated Trust Domains",
				fmt.Sprintf("%d entries, more than the limit of %d (the provider's "+
					"max_federated_trust_domains). Federate with the others through zerotrust_federated_trust_domain, "+
					"or raise the limit (up to %d, the operator's own).", n, limit, operatorPeerLimit))
		}
	}
	profile, mode, known := plannedEndpoint(ctx, plan.BundleEndpoint)
	if state != nil && known {
		if prior, d := specFromModel(ctx, *state); !d.HasError() {
			checkEndpointChange(prior, profile, mode, "the SpireServer", &resp.Diagnostics)
		}
	}

	if plan.Cluster.IsUnknown() {
		plan.ID = types.StringUnknown()
	} else {
		plan.ID = types.StringValue(resourceID(plan.Cluster, spirefacts.ObjectName))
	}
	facts := r.planFacts(ctx, plan.Cluster, &resp.Diagnostics)
	trustDomain := "" // known only from the cluster's facts
	switch {
	case facts != nil:
		td, kind := facts.TrustDomain()
		checkSelfFederation(plannedPeers(plan.FederatesWith), td, kind, &resp.Diagnostics)
		// A new resource may meet a federation set up before (state, when
		// there is one, was just refreshed from the same object).
		if state == nil && facts.SpireServer != nil && known {
			if prior, found := specFromObject(facts.SpireServer); found {
				checkEndpointChange(prior, profile, mode, "the existing SpireServer", &resp.Diagnostics)
			}
		}
		plan.TrustDomain = optionalString(td)
		plan.EndpointSPIFFEID = optionalString(spirefacts.EndpointSPIFFEID(td))
		trustDomain = td
		if state != nil {
			r.warnPeersWithoutBundle(ctx, plan, *state, facts, &resp.Diagnostics)
		}
		warnAPIRelationships(ctx, r.Data, plan.Cluster, plannedPeers(plan.FederatesWith), &resp.Diagnostics)
	case state != nil:
		plan.TrustDomain, plan.EndpointSPIFFEID = state.TrustDomain, state.EndpointSPIFFEID
	default:
		plan.TrustDomain, plan.EndpointSPIFFEID = types.StringUnknown(), types.StringUnknown()
	}
	if state == nil || !plan.BundleEndpoint.Equal(state.BundleEndpoint) || !plan.ManagedRoute.Equal(state.ManagedRoute) {
		// Warned when the choice is made (create, or a change of these), not
		// on every plan after it.
		resp.Diagnostics.Append(federationChoiceWarnings(ctx, plan, trustDomain)...)
	}
	if state != nil && plan.BundleEndpoint.Equal(state.BundleEndpoint) && plan.ManagedRoute.Equal(state.ManagedRoute) {
		plan.BundleEndpointURL = state.BundleEndpointURL
	} else {
		plan.BundleEndpointURL = types.StringUnknown()
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	checkPlannedApply(ctx, r.Data, req, resp, plannedApply{Kind: kube.SpireServer,
		Outputs: []string{"trust_domain", "endpoint_spiffe_id", "bundle_endpoint_url"},
		Object: func() (*unstructured.Unstructured, bool) {
			// What apply sends: spec.federation from the configuration.
			var cfg spireFederationResourceModel
			if d := req.Config.Get(ctx, &cfg); d.HasError() {
				return nil, false
			}
			send, d := specFromModel(ctx, cfg)
			obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"federation": send.object()}}}
			obj.SetName(spirefacts.ObjectName)
			return obj, !d.HasError()
		}})
}

// planFacts reads the cluster's singletons when its connection is known and
// it answers; nil otherwise (apply checks again before it writes).
func (r *spireFederationResource) planFacts(ctx context.Context, cluster types.String, diags *diag.Diagnostics) *spirefacts.Facts {
	ctx, client, cancel := planLookup(ctx, r.Data, cluster, planLookupTimeout, diags)
	defer cancel()
	if client == nil {
		return nil
	}
	facts, err := spirefacts.Lookup(ctx, client)
	if err != nil {
		return nil
	}
	return facts
}

// warnPeersWithoutBundle warns about each federates_with entry, planned and
// already in state, whose bundle the cluster's SPIRE server does not hold
// (peersWithoutBundle). It asks SPIRE through the view every
// zerotrust_federated_trust_domain of the cluster shares (one `bundle list`
// per cluster and Terraform operation), bounded by planLookupTimeout, and
// says nothing when SPIRE cannot be asked: the check is a courtesy.
func (r *spireFederationResource) warnPeersWithoutBundle(ctx context.Context, plan, state spireFederationResourceModel,
	facts *spirefacts.Facts, diags *diag.Diagnostics,
) {
	ctx, client, cancel := planLookup(ctx, r.Data, plan.Cluster, planLookupTimeout, diags)
	defer cancel()
	if client == nil {
		return
	}
	applied := map[string]bool{}
	for _, td := range plannedPeers(state.FederatesWith) {
		applied[td] = true
	}
	if len(applied) == 0 || appliedWithin(facts.SpireServer, client.FieldManager, spireTrustPending, time.Now()) {
		// Nothing applied yet, or moments ago: the operator is still rolling
		// SPIRE out, which then fetches the bundles at its first refresh.
		return
	}
	server, d := spireserverattr.ServerFrom(ctx, client, r.Data, types.ObjectNull(nil))
	if d.HasError() {
		return
	}
	view, err := spireViewOf(ctx, client, server)
	if err != nil {
		return
	}
	for _, td := range peersWithoutBundle(plannedPeers(plan.FederatesWith), applied, view) {
		diags.AddAttributeWarning(path.Root("federates_with").AtMapKey(td), "SPIRE Holds No Bundle of a Peer", fmt.Sprintf(
			"The %s holds no bundle of %q (`spire-server bundle list` does not list it), although "+
				"federates_with has named it for more than %s. SPIRE does not trust that trust domain's workloads. "+
				"federates_with is a relationship in SPIRE's server configuration, which has no bootstrap bundle that "+
				"anything re-seeds: with an https_spiffe endpoint SPIRE cannot fetch the bundle at all until one is "+
				"set by hand (spire-server bundle set -id spiffe://%s), and with https_web the endpoint has not "+
				"answered. Check the peer's bundle endpoint, or federate with it through "+
				"zerotrust_federated_trust_domain, whose trust_domain_bundle bootstraps and repairs it.",
			server, td, spireTrustPending, td))
	}
}

// peersWithoutBundle returns the planned peers, among those applied, whose
// bundle view does not hold, in the order of planned.
func peersWithoutBundle(planned []string, applied map[string]bool, view spireexec.View) []string {
	var missing []string
	for _, td := range planned {
		if applied[td] && view.Bundles[td] == nil {
			missing = append(missing, td)
		}
	}
	return missing
}

// plannedEndpoint returns the planned profile and https_web mode; known is
// false while either is unknown.
func plannedEndpoint(ctx context.Context, obj types.Object) (profile, mode string, known bool) {
	if obj.IsNull() || obj.IsUnknown() {
		return "", "", false
	}
	var be federationBundleEndpointModel
	if d := obj.As(ctx, &be, basetypes.ObjectAsOptions{}); d.HasError() || be.Profile.IsUnknown() || be.HTTPSWeb.IsUnknown() {
		return "", "", false
	}
	if !be.HTTPSWeb.IsNull() {
		var web federationHTTPSWebModel
		if d := be.HTTPSWeb.As(ctx, &web, basetypes.ObjectAsOptions{}); d.HasError() || web.ACME.IsUnknown() || web.ServingCert.IsUnknown() {
			return "", "", false
		}
		switch {
		case !web.ACME.IsNull():
			mode = "acme"
		case !web.ServingCert.IsNull():
			mode = "serving_cert"
		}
	}
	return be.Profile.ValueString(), mode, true
}

// checkEndpointChange refuses what the operator's CEL rules refuse: a new
// profile, or switching https_web between acme and serving_cert. Neither can
// be worked around by replacing the resource, because spec.federation cannot
// be removed either; the message says what can be done.
func checkEndpointChange(prior federationSpec, profile, mode, source string, diags *diag.Diagnostics) {
	if prior.profile() != profile {
		validate.AttributeError(diags, path.Root("bundle_endpoint").AtName("profile"), "Federation Profile Cannot Change",
			fmt.Sprintf("%s has profile %q; the configuration asks for %q. The Zero Trust "+
				"Workload Identity Manager operator refuses to change the profile once set, and it refuses to remove "+
				"spec.federation too, so neither an update nor a replacement can do it. Keep profile = %q. To change it "+
				"anyway: uninstall and reinstall the operator (which recreates the SpireServer without federation), run "+
				"`terraform state rm` on this resource, and apply again.", source, prior.profile(), profile, prior.profile()))
		return
	}
	if old := prior.httpsWebMode(); old != "" && mode != "" && old != mode {
		validate.AttributeError(diags, path.Root("bundle_endpoint").AtName("https_web"), "https_web Certificate Source Cannot Change",
			fmt.Sprintf("%s uses %s; the configuration asks for %s. The operator "+
				"refuses to switch between acme and serving_cert once set, and spec.federation cannot be removed. Keep "+
				"https_web.%s, or uninstall and reinstall the operator, run `terraform state rm` on this resource, and "+
				"apply again.", source, old, mode, old))
	}
}

func plannedPeers(m types.Map) []string {
	if m.IsNull() || m.IsUnknown() {
		return nil
	}
	tds := make([]string, 0, len(m.Elements()))
	for td := range m.Elements() {
		tds = append(tds, td)
	}
	sort.Strings(tds)
	return tds
}

// checkSelfFederation refuses an entry for the cluster's own trust domain:
// SPIRE cannot federate a trust domain with itself.
func checkSelfFederation(peers []string, own string, source kube.Kind, diags *diag.Diagnostics) {
	if own == "" {
		return
	}
	for _, td := range peers {
		if td == own {
			p := path.Root("federates_with").AtMapKey(td)
			validate.AttributeError(diags, p, "Cannot Federate With Own Trust Domain",
				fmt.Sprintf("%q is this cluster's own trust domain (spec.trustDomain of the %s `cluster`). "+
					"A SPIRE server cannot federate with its own trust domain: remove this entry. With for_each over "+
					"clusters, leave each cluster out of its own federates_with.", td, source.Kind))
		}
	}
}

// federationChoiceWarnings warns about valid choices with which the
// operator's result is not what the configuration suggests. trustDomain is
// the cluster's own, or "" when the plan cannot know it.
func federationChoiceWarnings(ctx context.Context, plan spireFederationResourceModel, trustDomain string) diag.Diagnostics {
	var diags diag.Diagnostics
	if !plan.ManagedRoute.IsUnknown() && !plan.ManagedRoute.IsNull() && !plan.ManagedRoute.ValueBool() {
		validate.AttributeWarning(&diags, path.Root("managed_route"), "SpireServer Will Not Become Ready",
			"with managed_route = false the Zero Trust Workload Identity Manager operator reports "+
				"RouteAvailable=False (FederationRouteDisabled, routes.go reconcileRoute) and, counting that as a "+
				"failure (status.go SetReadyCondition), Ready=False with \"RouteAvailable: Federation managed route "+
				"disabled\" for as long as it stays false; the ZeroTrustWorkloadIdentityManager then reports its "+
				"operands not ready. The SPIRE server still runs. Keep it only if you expose the bundle endpoint "+
				"yourself and can live with that status; otherwise set managed_route = true.")
		// Without the operator's Route, its host and TLS mode are not the
		// question below.
		return diags
	}
	if plan.BundleEndpoint.IsNull() || plan.BundleEndpoint.IsUnknown() {
		return diags
	}
	opts := basetypes.ObjectAsOptions{UnhandledNullAsEmpty: true, UnhandledUnknownAsEmpty: true}
	var be federationBundleEndpointModel
	var web federationHTTPSWebModel
	diags.Append(plan.BundleEndpoint.As(ctx, &be, opts)...)
	if be.HTTPSWeb.IsNull() || be.HTTPSWeb.IsUnknown() {
		return diags
	}
	diags.Append(be.HTTPSWeb.As(ctx, &web, opts)...)
	webPath := path.Root("bundle_endpoint").AtName("https_web")
	if !web.ServingCert.IsNull() && !web.ServingCert.IsUnknown() {
		var cert federationServingCertModel
		diags.Append(web.ServingCert.As(ctx, &cert, opts)...)
		if cert.ExternalSecretRef.IsNull() {
			validate.AttributeWarning(&diags, webPath.AtName("serving_cert").AtName("external_secret_ref"),
				"https_web Peers Will See the Router's Certificate",
				"serving_cert without external_secret_ref: the SPIRE server serves the service-CA certificate "+
					"spire-server-serving-cert (statefulset.go), which only the cluster trusts, and the operator's "+
					"Route re-encrypts (routes.go generateFederationRoute), so https_web peers are answered with the "+
					"router's default certificate for federation.<trust domain>, which they must trust for that name. "+
					"To serve a Web PKI certificate of yours, put it in a Secret (tls.crt, tls.key) and name it in "+
					"external_secret_ref.")
		}
	}
	if trustDomain == "" || web.ACME.IsNull() || web.ACME.IsUnknown() {
		return diags
	}
	var acme federationACMEModel
	diags.Append(web.ACME.As(ctx, &acme, opts)...)
	if want := "federation." + trustDomain; !acme.DomainName.IsUnknown() && acme.DomainName.ValueString() != want {
		validate.AttributeWarning(&diags, webPath.AtName("acme").AtName("domain_name"), "ACME Domain Name Not the Route's Host",
			fmt.Sprintf("%q is not %q, the host of the operator's Route (routes.go generateFederationRoute: always "+
				"federation.<trust domain>). The Route passes TLS through by that name, and SPIRE's ACME client answers "+
				"only connections naming domain_name, so the ACME CA most likely cannot validate the certificate and "+
				"peers cannot connect. The operator does not check this. Set domain_name = %q.",
				acme.DomainName.ValueString(), want, want))
	}
	return diags
}
