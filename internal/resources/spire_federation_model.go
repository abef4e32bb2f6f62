package resources

import (
	"context"
	"sort"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spirefacts"
)

type spireFederationResourceModel struct {
	ID                types.String   `tfsdk:"id"`
	Cluster           types.String   `tfsdk:"cluster"`
	BundleEndpoint    types.Object   `tfsdk:"bundle_endpoint"`
	ManagedRoute      types.Bool     `tfsdk:"managed_route"`
	FederatesWith     types.Map      `tfsdk:"federates_with"`
	ForceConflicts    types.Bool     `tfsdk:"force_conflicts"`
	TrustDomain       types.String   `tfsdk:"trust_domain"`
	EndpointSPIFFEID  types.String   `tfsdk:"endpoint_spiffe_id"`
	BundleEndpointURL types.String   `tfsdk:"bundle_endpoint_url"`
	Timeouts          timeouts.Value `tfsdk:"timeouts"`
}

type federationBundleEndpointModel struct {
	Profile     types.String `tfsdk:"profile"`
	RefreshHint types.Int64  `tfsdk:"refresh_hint"`
	HTTPSWeb    types.Object `tfsdk:"https_web"`
}

type federationHTTPSWebModel struct {
	ACME        types.Object `tfsdk:"acme"`
	ServingCert types.Object `tfsdk:"serving_cert"`
}

type federationACMEModel struct {
	DirectoryURL types.String `tfsdk:"directory_url"`
	DomainName   types.String `tfsdk:"domain_name"`
	Email        types.String `tfsdk:"email"`
	TOSAccepted  types.Bool   `tfsdk:"tos_accepted"`
}

type federationServingCertModel struct {
	FileSyncInterval  types.Int64  `tfsdk:"file_sync_interval"`
	ExternalSecretRef types.String `tfsdk:"external_secret_ref"`
}

type federationPeerModel struct {
	BundleEndpointURL     types.String `tfsdk:"bundle_endpoint_url"`
	BundleEndpointProfile types.String `tfsdk:"bundle_endpoint_profile"`
	EndpointSPIFFEID      types.String `tfsdk:"endpoint_spiffe_id"`
}

// The released SpireServer CRD's defaults. The schema defaults to the same
// values, so a plan shows what the API server will store, but the provider
// sends a defaulted field only when the configuration sets it: a field the
// user never wrote stays the API server's default, not this provider's
// (server-side apply) ownership, and a brownfield object imports with no
// write at all.
const (
	defaultRefreshHint      = 300
	defaultFileSyncInterval = 86400
)

// federationSpec is spec.federation of a SpireServer in plain Go values: the
// one place where the Terraform shape and the CRD shape meet. A zero field
// (nil, "") is not sent, and reads as the CRD's default.
type federationSpec struct {
	Profile      string // "": not sent (CRD default https_spiffe)
	RefreshHint  *int64 // nil: not sent (CRD default 300)
	ACME         *federationACME
	ServingCert  *federationServingCert
	ManagedRoute *bool                     // nil: not sent (CRD default "true")
	Peers        map[string]federationPeer // empty: federatesWith not sent (the CRD wants 1..50 entries)
}

type federationACME struct {
	DirectoryURL, DomainName, Email string
	TOSAccepted                     *bool // nil: not sent (CRD default "false")
}

type federationServingCert struct {
	FileSyncInterval  *int64 // nil: not sent (CRD default 86400)
	ExternalSecretRef string
}

type federationPeer struct {
	URL, Profile, EndpointSPIFFEID string
}

// profile is the bundle endpoint profile in effect.
func (s federationSpec) profile() string {
	if s.Profile == "" {
		return spireexec.ProfileHTTPSSPIFFE
	}
	return s.Profile
}

func (s federationSpec) refreshHint() int64 {
	if s.RefreshHint == nil {
		return defaultRefreshHint
	}
	return *s.RefreshHint
}

func (s federationSpec) managedRoute() bool { return s.ManagedRoute == nil || *s.ManagedRoute }

// httpsWebMode names which https_web variant a spec uses: "acme",
// "serving_cert" or "".
func (s federationSpec) httpsWebMode() string {
	switch {
	case s.ACME != nil:
		return "acme"
	case s.ServingCert != nil:
		return "serving_cert"
	}
	return ""
}

func int64Ptr(v types.Int64) *int64 {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	n := v.ValueInt64()
	return &n
}

func boolPtr(v types.Bool) *bool {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	b := v.ValueBool()
	return &b
}

// specFromModel reads a fully known model. Null attributes stay unset, so a
// configuration gives what to send, and a plan (where the schema defaults
// filled them in) gives the values in effect.
func specFromModel(ctx context.Context, m spireFederationResourceModel) (federationSpec, diag.Diagnostics) {
	var diags diag.Diagnostics
	opts := basetypes.ObjectAsOptions{}
	s := federationSpec{ManagedRoute: boolPtr(m.ManagedRoute)}
	if !m.BundleEndpoint.IsNull() && !m.BundleEndpoint.IsUnknown() {
		var be federationBundleEndpointModel
		diags.Append(m.BundleEndpoint.As(ctx, &be, opts)...)
		s.Profile = be.Profile.ValueString()
		s.RefreshHint = int64Ptr(be.RefreshHint)
		if !be.HTTPSWeb.IsNull() && !be.HTTPSWeb.IsUnknown() {
			var web federationHTTPSWebModel
			diags.Append(be.HTTPSWeb.As(ctx, &web, opts)...)
			if !web.ACME.IsNull() && !web.ACME.IsUnknown() {
				var a federationACMEModel
				diags.Append(web.ACME.As(ctx, &a, opts)...)
				s.ACME = &federationACME{
					DirectoryURL: a.DirectoryURL.ValueString(), DomainName: a.DomainName.ValueString(),
					Email: a.Email.ValueString(), TOSAccepted: boolPtr(a.TOSAccepted),
				}
			}
			if !web.ServingCert.IsNull() && !web.ServingCert.IsUnknown() {
				var c federationServingCertModel
				diags.Append(web.ServingCert.As(ctx, &c, opts)...)
				s.ServingCert = &federationServingCert{FileSyncInterval: int64Ptr(c.FileSyncInterval), ExternalSecretRef: c.ExternalSecretRef.ValueString()}
			}
		}
	}
	if !m.FederatesWith.IsNull() && !m.FederatesWith.IsUnknown() {
		peers := map[string]federationPeerModel{}
		diags.Append(m.FederatesWith.ElementsAs(ctx, &peers, false)...)
		s.Peers = make(map[string]federationPeer, len(peers))
		for td, p := range peers {
			s.Peers[td] = federationPeer{
				URL: p.BundleEndpointURL.ValueString(), Profile: p.BundleEndpointProfile.ValueString(),
				EndpointSPIFFEID: p.EndpointSPIFFEID.ValueString(),
			}
		}
	}
	return s, diags
}

// object is spec.federation as sent: only the fields that are set.
// bundleEndpoint always (the CRD requires it; the API server fills in
// profile and refreshHint), federatesWith only with entries (the CRD wants at
// least one), booleans as the CRD's strings "true"/"false". The released CRD
// keeps federatesWith an atomic list, so the list sent replaces the whole
// list; it is sorted by trust domain, so it is stable.
func (s federationSpec) object() map[string]any {
	be := map[string]any{}
	if s.Profile != "" {
		be["profile"] = s.Profile
	}
	if s.RefreshHint != nil {
		be["refreshHint"] = *s.RefreshHint
	}
	if s.ACME != nil || s.ServingCert != nil {
		web := map[string]any{}
		if a := s.ACME; a != nil {
			acme := map[string]any{"directoryUrl": a.DirectoryURL, "domainName": a.DomainName, "email": a.Email}
			if a.TOSAccepted != nil {
				acme["tosAccepted"] = strconv.FormatBool(*a.TOSAccepted)
			}
			web["acme"] = acme
		}
		if c := s.ServingCert; c != nil {
			cert := map[string]any{}
			if c.FileSyncInterval != nil {
				cert["fileSyncInterval"] = *c.FileSyncInterval
			}
			if c.ExternalSecretRef != "" {
				cert["externalSecretRef"] = c.ExternalSecretRef
			}
			web["servingCert"] = cert
		}
		be["httpsWeb"] = web
	}
	fed := map[string]any{"bundleEndpoint": be}
	if s.ManagedRoute != nil {
		fed["managedRoute"] = strconv.FormatBool(*s.ManagedRoute)
	}
	if len(s.Peers) > 0 {
		tds := make([]string, 0, len(s.Peers))
		for td := range s.Peers {
			tds = append(tds, td)
		}
		sort.Strings(tds)
		list := make([]any, 0, len(tds))
		for _, td := range tds {
			p := s.Peers[td]
			entry := map[string]any{"trustDomain": td, "bundleEndpointUrl": p.URL, "bundleEndpointProfile": p.Profile}
			if p.EndpointSPIFFEID != "" {
				entry["endpointSpiffeId"] = p.EndpointSPIFFEID
			}
			list = append(list, entry)
		}
		fed["federatesWith"] = list
	}
	return fed
}

// specFromObject reads spec.federation of a SpireServer; ok is false when the
// object has none. Fields present on the object are set, absent ones unset.
func specFromObject(obj *unstructured.Unstructured) (federationSpec, bool) {
	fed, found, _ := unstructured.NestedMap(obj.Object, "spec", "federation")
	if !found || fed == nil {
		return federationSpec{}, false
	}
	str := func(m map[string]any, fields ...string) (string, bool) {
		v, found, err := unstructured.NestedString(m, fields...)
		return v, found && err == nil
	}
	num := func(m map[string]any, fields ...string) *int64 {
		v, found, err := unstructured.NestedInt64(m, fields...)
		if !found || err != nil {
			return nil
		}
		return &v
	}
	flag := func(m map[string]any, fields ...string) *bool {
		v, ok := str(m, fields...)
		if !ok {
			return nil
		}
		b := v == "true"
		return &b
	}
	plain := func(m map[string]any, fields ...string) string {
		v, _ := str(m, fields...)
		return v
	}
	s := federationSpec{
		Profile:      plain(fed, "bundleEndpoint", "profile"),
		RefreshHint:  num(fed, "bundleEndpoint", "refreshHint"),
		ManagedRoute: flag(fed, "managedRoute"),
	}
	if a, found, _ := unstructured.NestedMap(fed, "bundleEndpoint", "httpsWeb", "acme"); found {
		s.ACME = &federationACME{
			DirectoryURL: plain(a, "directoryUrl"), DomainName: plain(a, "domainName"), Email: plain(a, "email"),
			TOSAccepted: flag(a, "tosAccepted"),
		}
	}
	if c, found, _ := unstructured.NestedMap(fed, "bundleEndpoint", "httpsWeb", "servingCert"); found {
		s.ServingCert = &federationServingCert{FileSyncInterval: num(c, "fileSyncInterval"), ExternalSecretRef: plain(c, "externalSecretRef")}
	}
	list, _, _ := unstructured.NestedSlice(fed, "federatesWith")
	if len(list) > 0 {
		s.Peers = map[string]federationPeer{}
	}
	for _, item := range list {
		entry, ok := item.(map[string]any)
		if !ok {
			continue
		}
		s.Peers[plain(entry, "trustDomain")] = federationPeer{
			URL: plain(entry, "bundleEndpointUrl"), Profile: plain(entry, "bundleEndpointProfile"),
			EndpointSPIFFEID: plain(entry, "endpointSpiffeId"),
		}
	}
	return s, true
}

// setModel copies s into the model's input attributes, with the CRD's
// defaults for unset fields (what the API server stores for them).
// federates_with is managed only when the resource manages the list
// (managePeers): then it holds every entry of the (atomic) list, including
// entries someone else wrote, which the next apply replaces; otherwise it
// stays null and the list is left alone. asMap keeps an empty map instead of
// null, to match a configuration that wrote `federates_with = {}`.
func (s federationSpec) setModel(m *spireFederationResourceModel, managePeers, asMap bool) diag.Diagnostics {
	var diags diag.Diagnostics
	objTypes := federationTypes()
	web := types.ObjectNull(objTypes.httpsWeb)
	if s.ACME != nil || s.ServingCert != nil {
		acme := types.ObjectNull(objTypes.acme)
		if a := s.ACME; a != nil {
			v, d := types.ObjectValue(objTypes.acme, map[string]attr.Value{
				"directory_url": types.StringValue(a.DirectoryURL), "domain_name": types.StringValue(a.DomainName),
				"email": types.StringValue(a.Email), "tos_accepted": types.BoolValue(a.TOSAccepted != nil && *a.TOSAccepted),
			})
			diags.Append(d...)
			acme = v
		}
		cert := types.ObjectNull(objTypes.servingCert)
		if c := s.ServingCert; c != nil {
			interval := int64(defaultFileSyncInterval)
			if c.FileSyncInterval != nil {
				interval = *c.FileSyncInterval
			}
			v, d := types.ObjectValue(objTypes.servingCert, map[string]attr.Value{
				"file_sync_interval":  types.Int64Value(interval),
				"external_secret_ref": optionalString(c.ExternalSecretRef),
			})
			diags.Append(d...)
			cert = v
		}
		v, d := types.ObjectValue(objTypes.httpsWeb, map[string]attr.Value{"acme": acme, "serving_cert": cert})
		diags.Append(d...)
		web = v
	}
	be, d := types.ObjectValue(objTypes.bundleEndpoint, map[string]attr.Value{
		"profile": types.StringValue(s.profile()), "refresh_hint": types.Int64Value(s.refreshHint()), "https_web": web,
	})
	diags.Append(d...)
	m.BundleEndpoint = be
	m.ManagedRoute = types.BoolValue(s.managedRoute())

	peerType := types.ObjectType{AttrTypes: objTypes.peer}
	if !managePeers || (len(s.Peers) == 0 && !asMap) {
		m.FederatesWith = types.MapNull(peerType)
		return diags
	}
	peers := map[string]attr.Value{}
	for td, p := range s.Peers {
		v, d := types.ObjectValue(objTypes.peer, map[string]attr.Value{
			"bundle_endpoint_url": types.StringValue(p.URL), "bundle_endpoint_profile": types.StringValue(p.Profile),
			"endpoint_spiffe_id": optionalString(p.EndpointSPIFFEID),
		})
		diags.Append(d...)
		peers[td] = v
	}
	v, d := types.MapValue(peerType, peers)
	diags.Append(d...)
	m.FederatesWith = v
	return diags
}

// spireFederationStateFromObject is the state of a SpireServer `cluster` with
// spec.federation as Terraform first sees it: what ImportState stores and a
// list result carries, so that adopting by import and by list cannot differ.
// It manages the federatesWith list when there is one.
func spireFederationStateFromObject(ctx context.Context, client *kube.Client, cluster types.String, facts *spirefacts.Facts,
) (spireFederationResourceModel, diag.Diagnostics) {
	state := spireFederationResourceModel{Cluster: cluster, ForceConflicts: types.BoolValue(false), Timeouts: spireFederationTimeoutsNull()}
	spec, _ := specFromObject(facts.SpireServer)
	diags := spec.setModel(&state, true, false)
	setFederationComputed(ctx, client, &state, facts, &diags)
	return state, diags
}

// setFederationComputed fills the computed attributes from the cluster's
// facts; the bundle endpoint URL comes from the federation Route, which the
// operator keeps in its constant namespace (spirefacts.RouteNamespace).
func setFederationComputed(ctx context.Context, client *kube.Client, m *spireFederationResourceModel,
	facts *spirefacts.Facts, diags *diag.Diagnostics,
) {
	td, _ := facts.TrustDomain()
	m.ID = types.StringValue(resourceID(m.Cluster, spirefacts.ObjectName))
	m.TrustDomain = optionalString(td)
	m.EndpointSPIFFEID = optionalString(spirefacts.EndpointSPIFFEID(td))
	u, err := facts.BundleEndpointURL(ctx, client)
	if err != nil {
		diags.Append(kube.Diagnostic(err, "read the federation Route"))
		return
	}
	m.BundleEndpointURL = optionalString(u)
	if m.ForceConflicts.IsNull() || m.ForceConflicts.IsUnknown() {
		m.ForceConflicts = types.BoolValue(false)
	}
}

// spireFederationTimeoutsNull is the timeouts block of an imported or listed
// federation: not set.
func spireFederationTimeoutsNull() timeouts.Value {
	return timeouts.Value{Object: types.ObjectNull(federationTypes().timeouts)}
}
