package resources

import (
	"context"
	"sort"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type spireFederationResourceModel struct {
	ID                types.String `tfsdk:"id"`
	Cluster           types.String `tfsdk:"cluster"`
	BundleEndpoint    types.Object `tfsdk:"bundle_endpoint"`
	ManagedRoute      types.Bool   `tfsdk:"managed_route"`
	FederatesWith     types.Map    `tfsdk:"federates_with"`
	ForceConflicts    types.Bool   `tfsdk:"force_conflicts"`
	TrustDomain       types.String `tfsdk:"trust_domain"`
	EndpointSPIFFEID  types.String `tfsdk:"endpoint_spiffe_id"`
	BundleEndpointURL types.String `tfsdk:"bundle_endpoint_url"`
}

type federationBundleEndpointModel struct {
	Profile     types.String `tfsdk:"profile"`
	RefreshHint types.Int64  `tfsdk:"refresh_hint"`
	Port        types.Int64  `tfsdk:"port"`
	Address     types.String `tfsdk:"address"`
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

var (
	federationACMEAttrTypes = map[string]attr.Type{
		"directory_url": types.StringType,
		"domain_name":   types.StringType,
		"email":         types.StringType,
		"tos_accepted":  types.BoolType,
	}
	federationServingCertAttrTypes = map[string]attr.Type{
		"file_sync_interval":  types.Int64Type,
		"external_secret_ref": types.StringType,
	}
	federationHTTPSWebAttrTypes = map[string]attr.Type{
		"acme":         types.ObjectType{AttrTypes: federationACMEAttrTypes},
		"serving_cert": types.ObjectType{AttrTypes: federationServingCertAttrTypes},
	}
	federationBundleEndpointAttrTypes = map[string]attr.Type{
		"profile":      types.StringType,
		"refresh_hint": types.Int64Type,
		"port":         types.Int64Type,
		"address":      types.StringType,
		"https_web":    types.ObjectType{AttrTypes: federationHTTPSWebAttrTypes},
	}
	federationPeerAttrTypes = map[string]attr.Type{
		"bundle_endpoint_url":     types.StringType,
		"bundle_endpoint_profile": types.StringType,
		"endpoint_spiffe_id":      types.StringType,
	}
)

// The operator's (and the CRD's) defaults. The provider always sends these
// fields, so the object never differs from the plan by a server-side default.
const (
	defaultRefreshHint      = 300
	defaultFileSyncInterval = 86400
)

// federationSpec is spec.federation of a SpireServer in plain Go values: the
// one place where the Terraform shape and the CRD shape meet.
type federationSpec struct {
	Profile      string
	RefreshHint  int64
	Port         int64  // 0: not set (the released CRD has no such field)
	Address      string // "": not set (idem)
	ACME         *federationACME
	ServingCert  *federationServingCert
	ManagedRoute bool
	Peers        map[string]federationPeer
}

type federationACME struct {
	DirectoryURL, DomainName, Email string
	TOSAccepted                     bool
}

type federationServingCert struct {
	FileSyncInterval  int64
	ExternalSecretRef string
}

type federationPeer struct {
	URL, Profile, EndpointSPIFFEID string
}

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

// specFromModel reads a fully known plan (apply time).
func specFromModel(ctx context.Context, m spireFederationResourceModel) (federationSpec, diag.Diagnostics) {
	var diags diag.Diagnostics
	opts := basetypes.ObjectAsOptions{}
	s := federationSpec{Profile: profileHTTPSSPIFFE, RefreshHint: defaultRefreshHint, ManagedRoute: true}
	if !m.BundleEndpoint.IsNull() {
		var be federationBundleEndpointModel
		diags.Append(m.BundleEndpoint.As(ctx, &be, opts)...)
		if v := be.Profile.ValueString(); v != "" {
			s.Profile = v
		}
		if !be.RefreshHint.IsNull() {
			s.RefreshHint = be.RefreshHint.ValueInt64()
		}
		s.Port = be.Port.ValueInt64()
		s.Address = be.Address.ValueString()
		if !be.HTTPSWeb.IsNull() {
			var web federationHTTPSWebModel
			diags.Append(be.HTTPSWeb.As(ctx, &web, opts)...)
			if !web.ACME.IsNull() {
				var a federationACMEModel
				diags.Append(web.ACME.As(ctx, &a, opts)...)
				s.ACME = &federationACME{
					DirectoryURL: a.DirectoryURL.ValueString(), DomainName: a.DomainName.ValueString(),
					Email: a.Email.ValueString(), TOSAccepted: a.TOSAccepted.ValueBool(),
				}
			}
			if !web.ServingCert.IsNull() {
				var c federationServingCertModel
				diags.Append(web.ServingCert.As(ctx, &c, opts)...)
				s.ServingCert = &federationServingCert{FileSyncInterval: defaultFileSyncInterval, ExternalSecretRef: c.ExternalSecretRef.ValueString()}
				if !c.FileSyncInterval.IsNull() {
					s.ServingCert.FileSyncInterval = c.FileSyncInterval.ValueInt64()
				}
			}
		}
	}
	if !m.ManagedRoute.IsNull() {
		s.ManagedRoute = m.ManagedRoute.ValueBool()
	}
	if !m.FederatesWith.IsNull() {
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

// object is spec.federation as sent: optional fields only when set, because
// the released CRD does not declare port/address (a server-side apply naming
// them fails there), and federatesWith only when it has entries (the CRD wants
// at least one). Peers are sorted by trust domain, so the list is stable.
func (s federationSpec) object() map[string]any {
	be := map[string]any{"profile": s.Profile, "refreshHint": s.RefreshHint}
	if s.Port != 0 {
		be["port"] = s.Port
	}
	if s.Address != "" {
		be["address"] = s.Address
	}
	if s.ACME != nil || s.ServingCert != nil {
		web := map[string]any{}
		if a := s.ACME; a != nil {
			web["acme"] = map[string]any{
				"directoryUrl": a.DirectoryURL, "domainName": a.DomainName, "email": a.Email,
				"tosAccepted": strconv.FormatBool(a.TOSAccepted),
			}
		}
		if c := s.ServingCert; c != nil {
			cert := map[string]any{"fileSyncInterval": c.FileSyncInterval}
			if c.ExternalSecretRef != "" {
				cert["externalSecretRef"] = c.ExternalSecretRef
			}
			web["servingCert"] = cert
		}
		be["httpsWeb"] = web
	}
	fed := map[string]any{"bundleEndpoint": be, "managedRoute": strconv.FormatBool(s.ManagedRoute)}
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
// object has none. Absent fields read as the CRD's defaults.
func specFromObject(obj *unstructured.Unstructured) (federationSpec, bool) {
	fed, found, _ := unstructured.NestedMap(obj.Object, "spec", "federation")
	if !found || fed == nil {
		return federationSpec{}, false
	}
	str := func(m map[string]any, fields ...string) string {
		v, _, _ := unstructured.NestedString(m, fields...)
		return v
	}
	num := func(m map[string]any, fields ...string) (int64, bool) {
		v, found, err := unstructured.NestedInt64(m, fields...)
		return v, found && err == nil
	}
	s := federationSpec{Profile: str(fed, "bundleEndpoint", "profile"), RefreshHint: defaultRefreshHint, ManagedRoute: str(fed, "managedRoute") != "false"}
	if s.Profile == "" {
		s.Profile = profileHTTPSSPIFFE
	}
	if v, ok := num(fed, "bundleEndpoint", "refreshHint"); ok {
		s.RefreshHint = v
	}
	s.Port, _ = num(fed, "bundleEndpoint", "port")
	s.Address = str(fed, "bundleEndpoint", "address")
	if a, found, _ := unstructured.NestedMap(fed, "bundleEndpoint", "httpsWeb", "acme"); found {
		s.ACME = &federationACME{
			DirectoryURL: str(a, "directoryUrl"), DomainName: str(a, "domainName"), Email: str(a, "email"),
			TOSAccepted: str(a, "tosAccepted") == "true",
		}
	}
	if c, found, _ := unstructured.NestedMap(fed, "bundleEndpoint", "httpsWeb", "servingCert"); found {
		s.ServingCert = &federationServingCert{FileSyncInterval: defaultFileSyncInterval, ExternalSecretRef: str(c, "externalSecretRef")}
		if v, ok := num(c, "fileSyncInterval"); ok {
			s.ServingCert.FileSyncInterval = v
		}
	}
	list, _, _ := unstructured.NestedSlice(fed, "federatesWith")
	s.Peers = map[string]federationPeer{}
	for _, item := range list {
		entry, ok := item.(map[string]any)
		if !ok {
			continue
		}
		s.Peers[str(entry, "trustDomain")] = federationPeer{
			URL: str(entry, "bundleEndpointUrl"), Profile: str(entry, "bundleEndpointProfile"),
			EndpointSPIFFEID: str(entry, "endpointSpiffeId"),
		}
	}
	return s, true
}

// setModel copies s into the model's input attributes. keepPeer decides which
// federatesWith entries belong to this resource (entries another tool added
// are not planned away); asMap keeps an empty map instead of null, to match a
// configuration that wrote `federates_with = {}`.
func (s federationSpec) setModel(m *spireFederationResourceModel, keepPeer func(string) bool, asMap bool) diag.Diagnostics {
	var diags diag.Diagnostics
	web := types.ObjectNull(federationHTTPSWebAttrTypes)
	if s.ACME != nil || s.ServingCert != nil {
		acme := types.ObjectNull(federationACMEAttrTypes)
		if a := s.ACME; a != nil {
			v, d := types.ObjectValue(federationACMEAttrTypes, map[string]attr.Value{
				"directory_url": types.StringValue(a.DirectoryURL), "domain_name": types.StringValue(a.DomainName),
				"email": types.StringValue(a.Email), "tos_accepted": types.BoolValue(a.TOSAccepted),
			})
			diags.Append(d...)
			acme = v
		}
		cert := types.ObjectNull(federationServingCertAttrTypes)
		if c := s.ServingCert; c != nil {
			v, d := types.ObjectValue(federationServingCertAttrTypes, map[string]attr.Value{
				"file_sync_interval":  types.Int64Value(c.FileSyncInterval),
				"external_secret_ref": optionalString(c.ExternalSecretRef),
			})
			diags.Append(d...)
			cert = v
		}
		v, d := types.ObjectValue(federationHTTPSWebAttrTypes, map[string]attr.Value{"acme": acme, "serving_cert": cert})
		diags.Append(d...)
		web = v
	}
	port := types.Int64Null()
	if s.Port != 0 {
		port = types.Int64Value(s.Port)
	}
	be, d := types.ObjectValue(federationBundleEndpointAttrTypes, map[string]attr.Value{
		"profile": types.StringValue(s.Profile), "refresh_hint": types.Int64Value(s.RefreshHint),
		"port": port, "address": optionalString(s.Address), "https_web": web,
	})
	diags.Append(d...)
	m.BundleEndpoint = be
	m.ManagedRoute = types.BoolValue(s.ManagedRoute)

	peers := map[string]attr.Value{}
	for td, p := range s.Peers {
		if !keepPeer(td) {
			continue
		}
		v, d := types.ObjectValue(federationPeerAttrTypes, map[string]attr.Value{
			"bundle_endpoint_url": types.StringValue(p.URL), "bundle_endpoint_profile": types.StringValue(p.Profile),
			"endpoint_spiffe_id": optionalString(p.EndpointSPIFFEID),
		})
		diags.Append(d...)
		peers[td] = v
	}
	if len(peers) == 0 && !asMap {
		m.FederatesWith = types.MapNull(types.ObjectType{AttrTypes: federationPeerAttrTypes})
	} else {
		v, d := types.MapValue(types.ObjectType{AttrTypes: federationPeerAttrTypes}, peers)
		diags.Append(d...)
		m.FederatesWith = v
	}
	return diags
}
