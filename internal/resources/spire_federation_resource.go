package resources

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/objectvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spirefacts"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

var (
	_ resource.ResourceWithConfigure      = (*spireFederationResource)(nil)
	_ resource.ResourceWithImportState    = (*spireFederationResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*spireFederationResource)(nil)
	_ resource.ResourceWithValidateConfig = (*spireFederationResource)(nil)
)

// planLookupTimeout bounds the plan-time reads of the cluster's trust domain:
// they are a courtesy (apply repeats them before writing), so a slow or
// unreachable cluster must not hold the plan for the client's full retry budget.
const planLookupTimeout = 15 * time.Second

// acmeEmail is the released SpireServer CRD's pattern for acme.email, as
// published, so the plan refuses exactly what the API server would.
var acmeEmail = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._%+-]*[a-zA-Z0-9]@[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*\.[a-zA-Z]{2,}$`)

// NewSpireFederationResource manages spec.federation of the SpireServer `cluster`.
func NewSpireFederationResource() resource.Resource {
	return &spireFederationResource{}
}

type spireFederationResource struct {
	providerdata.ResourceBase
}

func (r *spireFederationResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_spire_federation"
}

func (r *spireFederationResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	profiles := []string{profileHTTPSSPIFFE, profileHTTPSWeb}
	resp.Schema = schema.Schema{
		MarkdownDescription: "SPIRE federation settings of one cluster: `spec.federation` of the SpireServer `cluster` " +
			"(`operator.openshift.io/v1alpha1`, cluster-scoped) of the OpenShift Zero Trust Workload Identity Manager. " +
			"The provider writes only `spec.federation`, by server-side apply; the operator creates the SpireServer " +
			"itself, and it must exist before apply.\n\n" +
			"The operator refuses to remove `spec.federation` once it is set and to change the bundle endpoint " +
			"`profile`. Destroying this resource therefore releases only the `federates_with` entries, leaves the bundle " +
			"endpoint in place with a warning, and forgets the resource. A profile change is refused at plan.\n\n" +
			"`federates_with` becomes static SPIRE server configuration. `zerotrust_federated_trust_domain` " +
			"(ClusterFederatedTrustDomain) is the dynamic alternative, which needs no SPIRE server restart.\n\n" +
			"Attributes whose CRD field has a default (`profile`, `refresh_hint`, `managed_route`, `tos_accepted`, " +
			"`file_sync_interval`) plan that default when unset, but are sent only when configured: the API server " +
			"fills in the rest, so importing a SpireServer someone else set up plans no change and writes nothing.\n\n" +
			"**Differences from the federation enhancement proposal.** This resource follows the released " +
			"SpireServer CRD, not the proposal it grew from. The proposal's `bundleEndpoint.port`, " +
			"`bundleEndpoint.address` and `servingCert.secretName` never shipped, so they are not offered (the API " +
			"server refuses them as \"field not declared in schema\"). The released operator serves the endpoint on " +
			"its fixed port and publishes it through the OpenShift Route `spire-server-federation` in its namespace, " +
			"host `federation.<trust domain>` (with `managed_route = true`); `bundle_endpoint_url` reads that Route. " +
			"`federatesWith` is an atomic list in the released CRD, not a map keyed by trust domain: whoever " +
			"writes it writes all of it.",
		Attributes: map[string]schema.Attribute{
			"id":      idAttribute("`cluster` on the default connection, `<cluster>/cluster` otherwise; also the import ID."),
			"cluster": clusterAttribute(),
			"bundle_endpoint": schema.SingleNestedAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "How this cluster's SPIRE server serves its trust bundle to peers. Defaults to " +
					"`{ profile = \"https_spiffe\", refresh_hint = 300 }`.",
				Default: objectdefault.StaticValue(types.ObjectValueMust(federationBundleEndpointAttrTypes, map[string]attr.Value{
					"profile":      types.StringValue(profileHTTPSSPIFFE),
					"refresh_hint": types.Int64Value(defaultRefreshHint),
					"https_web":    types.ObjectNull(federationHTTPSWebAttrTypes),
				})),
				Attributes: map[string]schema.Attribute{
					"profile": schema.StringAttribute{
						Optional: true,
						Computed: true,
						Default:  stringdefault.StaticString(profileHTTPSSPIFFE),
						MarkdownDescription: "`https_spiffe` (peers authenticate the endpoint by its SPIFFE ID, " +
							"`spiffe://<trust domain>/spire/server`) or `https_web` (a Web PKI certificate; needs `https_web`). " +
							"Defaults to `https_spiffe`. Cannot change once set: the operator forbids it, and a change is " +
							"refused at plan.",
						Validators: []validator.String{stringvalidator.OneOf(profiles...)},
					},
					"refresh_hint": schema.Int64Attribute{
						Optional:            true,
						Computed:            true,
						Default:             int64default.StaticInt64(defaultRefreshHint),
						MarkdownDescription: "Seconds peers should wait before fetching the bundle again, 60 to 3600. Defaults to `300`.",
						Validators:          []validator.Int64{int64validator.Between(60, 3600)},
					},
					"https_web": schema.SingleNestedAttribute{
						Optional: true,
						MarkdownDescription: "Web PKI certificate of the endpoint; required with `profile = \"https_web\"`, " +
							"refused otherwise. Exactly one of `acme` or `serving_cert`; the operator forbids switching " +
							"between them later.",
						Attributes: map[string]schema.Attribute{
							"acme": schema.SingleNestedAttribute{
								Optional:            true,
								MarkdownDescription: "Obtain the certificate from an ACME CA (for example Let's Encrypt).",
								Validators: []validator.Object{
									objectvalidator.ExactlyOneOf(path.MatchRoot("bundle_endpoint").AtName("https_web").AtName("serving_cert")),
								},
								Attributes: map[string]schema.Attribute{
									"directory_url": schema.StringAttribute{
										Required:            true,
										MarkdownDescription: "ACME directory URL (`https://`).",
										Validators:          []validator.String{validate.HTTPSURL()},
									},
									"domain_name": schema.StringAttribute{
										Required:            true,
										MarkdownDescription: "Domain name the certificate is issued for.",
										Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
									},
									"email": schema.StringAttribute{
										Required:            true,
										MarkdownDescription: "Contact email of the ACME account (the CRD's email pattern).",
										Validators: []validator.String{
											stringvalidator.RegexMatches(acmeEmail, "must be an email address such as admin@example.com"),
										},
									},
									"tos_accepted": schema.BoolAttribute{
										Optional: true,
										Computed: true,
										Default:  booldefault.StaticBool(false),
										MarkdownDescription: "Whether you accept the ACME CA's terms of service (the CRD's string " +
											"`tosAccepted`, `\"true\"`/`\"false\"`). Defaults to `false`; sent only when set.",
									},
								},
							},
							"serving_cert": schema.SingleNestedAttribute{
								Optional:            true,
								MarkdownDescription: "Serve a certificate you provide.",
								Attributes: map[string]schema.Attribute{
									"file_sync_interval": schema.Int64Attribute{
										Optional: true,
										Computed: true,
										Default:  int64default.StaticInt64(defaultFileSyncInterval),
										MarkdownDescription: "Seconds between reloads of the certificate files, 3600 (1h) to 7776000 (90d). " +
											"Defaults to `86400`; sent only when set.",
										Validators: []validator.Int64{int64validator.Between(3600, 7776000)},
									},
									"external_secret_ref": schema.StringAttribute{
										Optional: true,
										MarkdownDescription: "Secret (`tls.crt`, `tls.key`) holding the certificate for the federation " +
											"Route's host; a Kubernetes object name.",
										Validators: []validator.String{validate.K8sName()},
									},
								},
							},
						},
					},
				},
			},
			"managed_route": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(true),
				MarkdownDescription: "Whether the operator creates the OpenShift Route `spire-server-federation` exposing " +
					"the bundle endpoint (the CRD's string `managedRoute`, `\"true\"`/`\"false\"`). Defaults to `true`; sent " +
					"only when set.",
			},
			"federates_with": schema.MapNestedAttribute{
				Optional: true,
				MarkdownDescription: "Peer trust domains this SPIRE server federates with, keyed by trust domain (so order " +
					"never matters). At most 50 entries, or the provider's `max_federated_trust_domains`. No entry may " +
					"name this cluster's own trust domain. The released CRD keeps `federatesWith` as one atomic list: " +
					"when this attribute is set, the resource owns the whole list, and entries someone else added show " +
					"up as changes to remove (applying over another field manager's list needs `force_conflicts`). Leave " +
					"it unset to leave the list alone.",
				Validators: []validator.Map{mapvalidator.KeysAre(validate.TrustDomain())},
				NestedObject: schema.NestedAttributeObject{
					Attributes: map[string]schema.Attribute{
						"bundle_endpoint_url": schema.StringAttribute{
							Required:            true,
							MarkdownDescription: "The peer's bundle endpoint: an `https://` URL with a host and no user info.",
							Validators:          []validator.String{validate.HTTPSURL()},
						},
						"bundle_endpoint_profile": schema.StringAttribute{
							Required:            true,
							MarkdownDescription: "How the peer's endpoint authenticates: `https_spiffe` (needs `endpoint_spiffe_id`) or `https_web`.",
							Validators:          []validator.String{stringvalidator.OneOf(profiles...)},
						},
						"endpoint_spiffe_id": schema.StringAttribute{
							Optional: true,
							MarkdownDescription: "SPIFFE ID of the peer's bundle endpoint, usually `spiffe://<trust domain>/spire/server`. " +
								"Required for `https_spiffe`, refused for `https_web`.",
							Validators: []validator.String{validate.SPIFFEID()},
						},
					},
				},
			},
			"force_conflicts": forceConflictsAttribute(),
			"trust_domain": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "This cluster's trust domain, from the ZeroTrustWorkloadIdentityManager `cluster` " +
					"(`spec.trustDomain`) or, on older operators, the SpireServer.",
			},
			"endpoint_spiffe_id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "SPIFFE ID this cluster's bundle endpoint presents: `spiffe://<trust_domain>/spire/server`.",
			},
			"bundle_endpoint_url": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Where peers reach this cluster's bundle endpoint: `https://<host>` of the Route " +
					"`spire-server-federation` that the operator creates in its namespace (the provider's `spire.namespace`) " +
					"with `managed_route = true`. Null where Routes are not served (not OpenShift) or the Route does " +
					"not exist (yet); the SpireServer itself does not say where its endpoint is reachable.",
			},
		},
	}
}

// ValidateConfig applies the CRD's cross-field rules, so they fail at plan.
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
		case be.Profile.ValueString() == profileHTTPSWeb && be.HTTPSWeb.IsNull():
			resp.Diagnostics.AddAttributeError(webPath, "Missing https_web Configuration",
				"Attribute bundle_endpoint.https_web: the https_web profile serves the bundle with a Web PKI certificate, "+
					"so https_web must say where it comes from: https_web = { acme = { ... } } or "+
					"https_web = { serving_cert = { ... } }.")
		case be.Profile.ValueString() != profileHTTPSWeb && !be.HTTPSWeb.IsNull():
			resp.Diagnostics.AddAttributeError(webPath, "https_web Not Applicable",
				"Attribute bundle_endpoint.https_web: it configures the https_web profile, but profile is "+
					"\"https_spiffe\" (the default), where it has no effect. Remove https_web, or set profile = \"https_web\".")
		}
	}
	if cfg.FederatesWith.IsNull() || cfg.FederatesWith.IsUnknown() {
		return
	}
	for td, v := range cfg.FederatesWith.Elements() {
		obj, ok := v.(types.Object)
		if !ok || obj.IsNull() || obj.IsUnknown() {
			continue
		}
		var p federationPeerModel
		resp.Diagnostics.Append(obj.As(ctx, &p, opts)...)
		idPath := path.Root("federates_with").AtMapKey(td).AtName("endpoint_spiffe_id")
		switch {
		case p.BundleEndpointProfile.IsUnknown():
		case p.BundleEndpointProfile.ValueString() == profileHTTPSSPIFFE && p.EndpointSPIFFEID.IsNull():
			resp.Diagnostics.AddAttributeError(idPath, "Missing Endpoint SPIFFE ID",
				fmt.Sprintf("Attribute %s: the https_spiffe profile authenticates the peer's bundle endpoint by its SPIFFE "+
					"ID, so endpoint_spiffe_id is required, usually \"spiffe://%s/spire/server\".", idPath, td))
		case p.BundleEndpointProfile.ValueString() == profileHTTPSWeb && !p.EndpointSPIFFEID.IsNull():
			resp.Diagnostics.AddAttributeError(idPath, "Endpoint SPIFFE ID Not Applicable",
				fmt.Sprintf("Attribute %s: the https_web profile authenticates the peer's bundle endpoint with Web PKI, "+
					"so endpoint_spiffe_id must not be set. Remove it, or use bundle_endpoint_profile = \"https_spiffe\".", idPath))
		}
	}
}

func (r *spireFederationResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		if !req.State.Raw.IsNull() {
			resp.Diagnostics.AddWarning("Federation Stays on the SpireServer", destroyDetail(""))
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
	if resp.Diagnostics.HasError() || !r.Data.CheckCluster(plan.Cluster, path.Root("cluster"), &resp.Diagnostics) {
		return
	}
	if !plan.FederatesWith.IsNull() && !plan.FederatesWith.IsUnknown() {
		if n, limit := len(plan.FederatesWith.Elements()), r.Data.MaxFederatedTrustDomains; limit > 0 && n > limit {
			resp.Diagnostics.AddAttributeError(path.Root("federates_with"), "Too Many Federated Trust Domains",
				fmt.Sprintf("Attribute federates_with: %d entries, more than the limit of %d (the provider's "+
					"max_federated_trust_domains, by default the SpireServer CRD's own limit of 50). Federate with the "+
					"others through zerotrust_federated_trust_domain, or raise the limit if your operator's CRD allows more.",
					n, limit))
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
	facts := r.planFacts(ctx, plan.Cluster)
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
	case state != nil:
		plan.TrustDomain, plan.EndpointSPIFFEID = state.TrustDomain, state.EndpointSPIFFEID
	default:
		plan.TrustDomain, plan.EndpointSPIFFEID = types.StringUnknown(), types.StringUnknown()
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
func (r *spireFederationResource) planFacts(ctx context.Context, cluster types.String) *spirefacts.Facts {
	key := providerdata.ClusterKey(cluster)
	if cluster.IsUnknown() || r.Data.Clusters.IsUnknown(key) {
		return nil
	}
	client, err := r.Data.Clusters.Client(key)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, planLookupTimeout)
	defer cancel()
	facts, err := spirefacts.Lookup(ctx, client)
	if err != nil {
		return nil
	}
	return facts
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
		diags.AddAttributeError(path.Root("bundle_endpoint").AtName("profile"), "Federation Profile Cannot Change",
			fmt.Sprintf("Attribute bundle_endpoint.profile: %s has profile %q; the configuration asks for %q. The Zero Trust "+
				"Workload Identity Manager operator refuses to change the profile once set, and it refuses to remove "+
				"spec.federation too, so neither an update nor a replacement can do it. Keep profile = %q. To change it "+
				"anyway: uninstall and reinstall the operator (which recreates the SpireServer without federation), run "+
				"`terraform state rm` on this resource, and apply again.", source, prior.profile(), profile, prior.profile()))
		return
	}
	if old := prior.httpsWebMode(); old != "" && mode != "" && old != mode {
		diags.AddAttributeError(path.Root("bundle_endpoint").AtName("https_web"), "https_web Certificate Source Cannot Change",
			fmt.Sprintf("Attribute bundle_endpoint.https_web: %s uses %s; the configuration asks for %s. The operator "+
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
			diags.AddAttributeError(p, "Cannot Federate With Own Trust Domain",
				fmt.Sprintf("Attribute %s: %q is this cluster's own trust domain (spec.trustDomain of the %s `cluster`). "+
					"A SPIRE server cannot federate with its own trust domain: remove this entry. With for_each over "+
					"clusters, leave each cluster out of its own federates_with.", p, td, source.Kind))
		}
	}
}

func destroyDetail(cluster string) string {
	where := "the cluster"
	if cluster != "" {
		where = fmt.Sprintf("cluster %q", cluster)
	}
	return fmt.Sprintf("The Zero Trust Workload Identity Manager operator forbids removing spec.federation from the "+
		"SpireServer once set (\"Federation configuration cannot be removed once set.\"). Destroying zerotrust_spire_federation "+
		"therefore releases only its federates_with entries and leaves the bundle endpoint configuration on %s "+
		"running as it is; Terraform stops managing it. To disable federation entirely, uninstall and reinstall the "+
		"operator. To manage it again, import it (terraform import <address> [<cluster>/]cluster).", where)
}

func (r *spireFederationResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan spireFederationResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var cfg spireFederationResourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.apply(ctx, &plan, cfg, "set spec.federation of the SpireServer cluster", &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *spireFederationResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan spireFederationResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var cfg spireFederationResourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.apply(ctx, &plan, cfg, "update spec.federation of the SpireServer cluster", &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// apply checks what needs the cluster, then writes spec.federation and fills
// the computed attributes of m. The checks use the plan m (the values in
// effect, defaults included); what is sent comes from the configuration
// cfg, so fields left to the CRD's defaults are not written by this provider.
func (r *spireFederationResource) apply(ctx context.Context, m *spireFederationResourceModel, cfg spireFederationResourceModel, action string, diags *diag.Diagnostics) {
	client := r.Data.Client(m.Cluster, diags)
	if client == nil {
		return
	}
	spec, d := specFromModel(ctx, *m)
	diags.Append(d...)
	send, d := specFromModel(ctx, cfg)
	diags.Append(d...)
	if diags.HasError() {
		return
	}
	// Applying onto a missing SpireServer would create one, which the API
	// refuses for lack of the fields only the operator fills in.
	existing, err := client.Get(ctx, kube.SpireServer, "", spirefacts.ObjectName)
	if kube.IsNotFound(err) {
		diags.AddError("SpireServer Not Found", fmt.Sprintf(
			"Could not %s: cluster %q has no SpireServer named \"cluster\". The OpenShift Zero Trust Workload Identity "+
				"Manager operator creates it, with the SPIRE server settings this resource does not manage (jwtIssuer, "+
				"caSubject, persistence, datastore). Install the operator and create its SpireServer (and "+
				"ZeroTrustWorkloadIdentityManager) \"cluster\" first; when they are created in the same configuration, "+
				"make this resource depend on them.", action, client.DisplayName()))
		return
	}
	if err != nil {
		diags.Append(kube.Diagnostic(err, action))
		return
	}
	ztwim, err := spirefacts.GetIfServed(ctx, client, kube.ZeroTrustWorkloadIdentityManager)
	if err != nil {
		diags.Append(kube.Diagnostic(err, "read the cluster's trust domain"))
		return
	}
	facts := &spirefacts.Facts{ZTWIM: ztwim, SpireServer: existing}
	td, kind := facts.TrustDomain()
	peers := make([]string, 0, len(spec.Peers))
	for p := range spec.Peers {
		peers = append(peers, p)
	}
	sort.Strings(peers)
	checkSelfFederation(peers, td, kind, diags)
	if prior, found := specFromObject(existing); found {
		checkEndpointChange(prior, spec.profile(), spec.httpsWebMode(), "the SpireServer", diags)
	}
	if diags.HasError() {
		return
	}

	obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"federation": send.object()}}}
	obj.SetName(spirefacts.ObjectName)
	out, err := client.Apply(ctx, kube.SpireServer, obj, m.ForceConflicts.ValueBool())
	if err != nil {
		diags.Append(kube.Diagnostic(err, action))
		return
	}
	facts.SpireServer = out
	r.setComputed(ctx, client, m, facts, diags)
}

func (r *spireFederationResource) setComputed(ctx context.Context, client *kube.Client, m *spireFederationResourceModel, facts *spirefacts.Facts, diags *diag.Diagnostics) {
	td, _ := facts.TrustDomain()
	m.ID = types.StringValue(resourceID(m.Cluster, spirefacts.ObjectName))
	m.TrustDomain = optionalString(td)
	m.EndpointSPIFFEID = optionalString(spirefacts.EndpointSPIFFEID(td))
	u, err := facts.BundleEndpointURL(ctx, client, r.Data.SpireNamespace)
	if err != nil {
		diags.Append(kube.Diagnostic(err, "read the federation Route"))
		return
	}
	m.BundleEndpointURL = optionalString(u)
	if m.ForceConflicts.IsNull() || m.ForceConflicts.IsUnknown() {
		m.ForceConflicts = types.BoolValue(false)
	}
}

func (r *spireFederationResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state spireFederationResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client := r.Data.ReadClient(state.Cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	facts, found := r.read(ctx, client, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if !found {
		resp.State.RemoveResource(ctx)
		return
	}
	spec, _ := specFromObject(facts.SpireServer)
	// federatesWith is one atomic list: while this resource manages it, every
	// entry is its business, and an entry changed, removed or added elsewhere
	// shows up as a plan. Otherwise the list is someone else's.
	managed := !state.FederatesWith.IsNull()
	resp.Diagnostics.Append(spec.setModel(&state, managed, managed)...)
	r.setComputed(ctx, client, &state, facts, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// read returns the cluster's facts; found is false when the SpireServer, its
// CRD or its spec.federation is gone.
func (r *spireFederationResource) read(ctx context.Context, client *kube.Client, diags *diag.Diagnostics) (*spirefacts.Facts, bool) {
	obj, err := client.Get(ctx, kube.SpireServer, "", spirefacts.ObjectName)
	if kube.IsNotFound(err) || kube.IsCRDNotInstalled(err) {
		return nil, false
	}
	if err != nil {
		diags.Append(kube.Diagnostic(err, "read the SpireServer cluster"))
		return nil, false
	}
	if _, found := specFromObject(obj); !found {
		return nil, false
	}
	ztwim, err := spirefacts.GetIfServed(ctx, client, kube.ZeroTrustWorkloadIdentityManager)
	if err != nil {
		diags.Append(kube.Diagnostic(err, "read the cluster's trust domain"))
		return nil, false
	}
	return &spirefacts.Facts{ZTWIM: ztwim, SpireServer: obj}, true
}

// Delete releases the federates_with entries and leaves the bundle endpoint,
// which the operator forbids removing, with a warning.
func (r *spireFederationResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state spireFederationResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client := r.Data.Client(state.Cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	obj, err := client.Get(ctx, kube.SpireServer, "", spirefacts.ObjectName)
	if kube.IsNotFound(err) || kube.IsCRDNotInstalled(err) {
		return
	}
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "read the SpireServer cluster"))
		return
	}
	spec, found := specFromObject(obj)
	if !found {
		return
	}
	// Re-applying the fields as they are now, without federatesWith, keeps
	// the bundle endpoint running as it is (the API refuses to drop
	// spec.federation) and releases the list, which goes when no other
	// manager owns it.
	spec.Peers = nil
	release := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"federation": spec.object()}}}
	release.SetName(spirefacts.ObjectName)
	if _, err := client.Apply(ctx, kube.SpireServer, release, state.ForceConflicts.ValueBool()); err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "release the federates_with entries of the SpireServer cluster"))
		return
	}
	resp.Diagnostics.AddWarning("Federation Left on the SpireServer", destroyDetail(client.DisplayName()))
}

func (r *spireFederationResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	cluster, name := parseImportID(req.ID)
	if name != spirefacts.ObjectName {
		resp.Diagnostics.AddError("Invalid Import ID", fmt.Sprintf(
			"Expected \"cluster\" (default connection) or \"<cluster>/cluster\": the SpireServer is a singleton named "+
				"\"cluster\"; got %q.", req.ID))
		return
	}
	if !cluster.IsNull() && r.Data != nil && !r.Data.CheckCluster(cluster, path.Root("cluster"), &resp.Diagnostics) {
		return
	}
	client := r.Data.Client(cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	facts, found := r.read(ctx, client, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if !found {
		resp.Diagnostics.AddError("Nothing to Import", fmt.Sprintf(
			"Cluster %q has no SpireServer \"cluster\" with spec.federation. Create the resource instead of importing it.",
			client.DisplayName()))
		return
	}
	spec, _ := specFromObject(facts.SpireServer)
	state := spireFederationResourceModel{Cluster: cluster, ForceConflicts: types.BoolValue(false)}
	resp.Diagnostics.Append(spec.setModel(&state, true, false)...)
	r.setComputed(ctx, client, &state, facts, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}
