package resources

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/durationtype"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/quantitytype"
)

// istioCSRName is the only name the CRD accepts: the IstioCSR is a
// singleton per namespace.
const istioCSRName = "default"

type istioCSRResourceModel struct {
	ID                              types.String         `tfsdk:"id"`
	Cluster                         types.String         `tfsdk:"cluster"`
	Namespace                       types.String         `tfsdk:"namespace"`
	ForceConflicts                  types.Bool           `tfsdk:"force_conflicts"`
	LogLevel                        types.Int64          `tfsdk:"log_level"`
	LogFormat                       types.String         `tfsdk:"log_format"`
	IstioDataPlaneNamespaceSelector types.String         `tfsdk:"istio_data_plane_namespace_selector"`
	CertManager                     types.Object         `tfsdk:"cert_manager"` // istioCSRCertManagerModel
	IstiodTLS                       types.Object         `tfsdk:"istiod_tls"`   // istioCSRIstiodTLSModel
	Server                          types.Object         `tfsdk:"server"`       // istioCSRServerModel
	Istio                           types.Object         `tfsdk:"istio"`        // istioCSRIstioModel
	Resources                       types.Object         `tfsdk:"resources"`    // istioCSRResourcesModel
	Affinity                        jsontypes.Normalized `tfsdk:"affinity"`
	Tolerations                     types.List           `tfsdk:"tolerations"`       // of istioCSRTolerationModel
	NodeSelector                    types.Map            `tfsdk:"node_selector"`     // of string
	ControllerConfig                types.Object         `tfsdk:"controller_config"` // istioCSRControllerConfigModel
	GRPCEndpoint                    types.String         `tfsdk:"grpc_endpoint"`
	Image                           types.String         `tfsdk:"image"`
	ServiceAccount                  types.String         `tfsdk:"service_account"`
	ClusterRole                     types.String         `tfsdk:"cluster_role"`
	ClusterRoleBinding              types.String         `tfsdk:"cluster_role_binding"`
	Conditions                      types.Map            `tfsdk:"conditions"`
	Timeouts                        timeouts.Value       `tfsdk:"timeouts"`
}

type istioCSRCertManagerModel struct {
	IssuerRef          types.Object `tfsdk:"issuer_ref"`           // istioCSRIssuerRefModel
	IstioCACertificate types.Object `tfsdk:"istio_ca_certificate"` // istioCSRCACertificateModel
}

type istioCSRIssuerRefModel struct {
	Name  types.String `tfsdk:"name"`
	Kind  types.String `tfsdk:"kind"`
	Group types.String `tfsdk:"group"`
}

type istioCSRCACertificateModel struct {
	Name      types.String `tfsdk:"name"`
	Namespace types.String `tfsdk:"namespace"`
	Key       types.String `tfsdk:"key"`
}

type istioCSRIstiodTLSModel struct {
	CommonName          types.String `tfsdk:"common_name"`
	TrustDomain         types.String `tfsdk:"trust_domain"`
	CertificateDNSNames types.List   `tfsdk:"certificate_dns_names"`
	// The durations are a custom type with semantic equality (the operator
	// writes them back as 1h0m0s); the model keeps no text of its own.
	CertificateDuration    durationtype.Value `tfsdk:"certificate_duration"`
	CertificateRenewBefore durationtype.Value `tfsdk:"certificate_renew_before"`
	MaxCertificateDuration durationtype.Value `tfsdk:"max_certificate_duration"`
	PrivateKeyAlgorithm    types.String       `tfsdk:"private_key_algorithm"`
	PrivateKeySize         types.Int64        `tfsdk:"private_key_size"`
}

type istioCSRServerModel struct {
	ClusterID types.String `tfsdk:"cluster_id"`
	Port      types.Int64  `tfsdk:"port"`
}

type istioCSRIstioModel struct {
	Namespace types.String `tfsdk:"namespace"`
	Revisions types.List   `tfsdk:"revisions"`
}

type istioCSRResourcesModel struct {
	Limits   types.Map  `tfsdk:"limits"`
	Requests types.Map  `tfsdk:"requests"`
	Claims   types.List `tfsdk:"claims"` // of istioCSRClaimModel
}

type istioCSRClaimModel struct {
	Name    types.String `tfsdk:"name"`
	Request types.String `tfsdk:"request"`
}

type istioCSRTolerationModel struct {
	Key               types.String `tfsdk:"key"`
	Operator          types.String `tfsdk:"operator"`
	Value             types.String `tfsdk:"value"`
	Effect            types.String `tfsdk:"effect"`
	TolerationSeconds types.Int64  `tfsdk:"toleration_seconds"`
}

type istioCSRControllerConfigModel struct {
	Labels types.Map `tfsdk:"labels"`
}

// istioCSRAttrTypes are the attribute types of the object at the attribute
// path names (through list and map elements: "tolerations" gives those of a
// toleration), from the schema.
var istioCSRAttrTypes = schemaTypesOf(func() attr.Type { return istioCSRSchema(context.Background()).Type() })

// issuerGroup is the planned issuer group, which apply always sends: the
// CRD's rules read the group and it has no default.
func (m *istioCSRResourceModel) issuerGroup(ctx context.Context, diags *diag.Diagnostics) types.String {
	if cm, ok := objectAs[istioCSRCertManagerModel](ctx, m.CertManager, diags); ok {
		if ref, ok := objectAs[istioCSRIssuerRefModel](ctx, cm.IssuerRef, diags); ok {
			return ref.Group
		}
	}
	return types.StringValue(istioCSRDefaultIssuerGroup)
}

// istioCSRObjectFromModel is the apply configuration: exactly the fields m, the
// resource's configuration, sets, so fields dropped from it are released.
// It is built from the configuration, not from the plan: for an unset
// attribute the plan holds the object's current value (perhaps another
// manager's) or the CRD default, and the provider claims neither. The
// exception is issuerGroup (planned): the CRD's rules read the group and it
// has no default, so it is always sent.
func istioCSRObjectFromModel(ctx context.Context, m *istioCSRResourceModel, issuerGroup types.String) (*unstructured.Unstructured, diag.Diagnostics) {
	var diags diag.Diagnostics
	cfg := map[string]any{}
	objSetInt64(cfg, "logLevel", m.LogLevel)
	objSetString(cfg, "logFormat", m.LogFormat)
	objSetString(cfg, "istioDataPlaneNamespaceSelector", m.IstioDataPlaneNamespaceSelector)

	if cm, ok := objectAs[istioCSRCertManagerModel](ctx, m.CertManager, &diags); ok {
		certManager := map[string]any{}
		if ref, ok := objectAs[istioCSRIssuerRefModel](ctx, cm.IssuerRef, &diags); ok {
			issuer := map[string]any{}
			objSetString(issuer, "name", ref.Name)
			objSetString(issuer, "kind", ref.Kind)
			objSetString(issuer, "group", issuerGroup)
			certManager["issuerRef"] = issuer
		}
		if ca, ok := objectAs[istioCSRCACertificateModel](ctx, cm.IstioCACertificate, &diags); ok {
			ref := map[string]any{}
			objSetString(ref, "name", ca.Name)
			objSetString(ref, "namespace", ca.Namespace)
			objSetString(ref, "key", ca.Key)
			certManager["istioCACertificate"] = ref
		}
		cfg["certManager"] = certManager
	}
	if tls, ok := objectAs[istioCSRIstiodTLSModel](ctx, m.IstiodTLS, &diags); ok {
		out := map[string]any{}
		objSetString(out, "commonName", tls.CommonName)
		objSetString(out, "trustDomain", tls.TrustDomain)
		objSetStrings(out, "certificateDNSNames", stringsOf(tls.CertificateDNSNames))
		objSetString(out, "certificateDuration", tls.CertificateDuration.StringValue)
		objSetString(out, "certificateRenewBefore", tls.CertificateRenewBefore.StringValue)
		objSetString(out, "maxCertificateDuration", tls.MaxCertificateDuration.StringValue)
		objSetString(out, "privateKeyAlgorithm", tls.PrivateKeyAlgorithm)
		objSetInt64(out, "privateKeySize", tls.PrivateKeySize)
		cfg["istiodTLSConfig"] = out
	}
	if s, ok := objectAs[istioCSRServerModel](ctx, m.Server, &diags); ok {
		out := map[string]any{}
		objSetString(out, "clusterID", s.ClusterID)
		objSetInt64(out, "port", s.Port)
		cfg["server"] = out
	}
	if i, ok := objectAs[istioCSRIstioModel](ctx, m.Istio, &diags); ok {
		out := map[string]any{}
		objSetString(out, "namespace", i.Namespace)
		objSetStrings(out, "revisions", stringsOf(i.Revisions))
		cfg["istio"] = out
	}
	if res, ok := objectAs[istioCSRResourcesModel](ctx, m.Resources, &diags); ok {
		out := map[string]any{}
		objSetStringMap(out, "limits", stringMapOf(res.Limits))
		objSetStringMap(out, "requests", stringMapOf(res.Requests))
		if !res.Claims.IsNull() && !res.Claims.IsUnknown() {
			var claims []istioCSRClaimModel
			diags.Append(res.Claims.ElementsAs(ctx, &claims, false)...)
			items := make([]any, 0, len(claims))
			for _, c := range claims {
				claim := map[string]any{}
				objSetString(claim, "name", c.Name)
				objSetString(claim, "request", c.Request)
				items = append(items, claim)
			}
			out["claims"] = items
		}
		cfg["resources"] = out
	}
	if !m.Affinity.IsNull() && !m.Affinity.IsUnknown() {
		var affinity map[string]any
		if err := json.Unmarshal([]byte(m.Affinity.ValueString()), &affinity); err != nil {
			diags.AddAttributeError(path.Root("affinity"), "Invalid Affinity", "affinity is not a JSON object: "+err.Error())
		} else {
			cfg["affinity"] = affinity
		}
	}
	if !m.Tolerations.IsNull() && !m.Tolerations.IsUnknown() {
		var tolerations []istioCSRTolerationModel
		diags.Append(m.Tolerations.ElementsAs(ctx, &tolerations, false)...)
		items := make([]any, 0, len(tolerations))
		for _, t := range tolerations {
			out := map[string]any{}
			objSetString(out, "key", t.Key)
			objSetString(out, "operator", t.Operator)
			objSetString(out, "value", t.Value)
			objSetString(out, "effect", t.Effect)
			objSetInt64(out, "tolerationSeconds", t.TolerationSeconds)
			items = append(items, out)
		}
		cfg["tolerations"] = items
	}
	objSetStringMap(cfg, "nodeSelector", stringMapOf(m.NodeSelector))

	spec := map[string]any{"istioCSRConfig": cfg}
	if cc, ok := objectAs[istioCSRControllerConfigModel](ctx, m.ControllerConfig, &diags); ok {
		out := map[string]any{}
		objSetStringMap(out, "labels", stringMapOf(cc.Labels))
		spec["controllerConfig"] = out
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	obj.SetName(istioCSRName)
	obj.SetNamespace(m.Namespace.ValueString())
	return obj, diags
}

// istioCSRStateFromObject is the state of an object the resource does not
// hold yet: what ImportState stores and what the list resource returns, so
// the two cannot differ.
func istioCSRStateFromObject(ctx context.Context, cluster types.String, obj *unstructured.Unstructured) (istioCSRResourceModel, diag.Diagnostics) {
	state := istioCSRResourceModel{Cluster: cluster, Timeouts: istioCSRTimeoutsNull()}
	diags := setIstioCSRFromObject(ctx, &state, obj)
	return state, diags
}

// setIstioCSRFromObject copies the object into the model, so changes made
// outside Terraform show up as a plan. A field the object lacks becomes null.
func setIstioCSRFromObject(ctx context.Context, m *istioCSRResourceModel, obj *unstructured.Unstructured) diag.Diagnostics {
	var diags diag.Diagnostics
	cfg, _, _ := unstructured.NestedMap(obj.Object, "spec", "istioCSRConfig")
	m.Namespace = types.StringValue(obj.GetNamespace())
	m.ID = types.StringValue(resourceID(m.Cluster, obj.GetNamespace()))
	m.LogLevel = objInt64(cfg, "logLevel")
	m.LogFormat = objString(cfg, "logFormat")
	m.IstioDataPlaneNamespaceSelector = objString(cfg, "istioDataPlaneNamespaceSelector")

	m.CertManager = types.ObjectNull(istioCSRAttrTypes("cert_manager"))
	if cm, ok := objMap(cfg, "certManager"); ok {
		out := istioCSRCertManagerModel{
			IssuerRef:          types.ObjectNull(istioCSRAttrTypes("cert_manager", "issuer_ref")),
			IstioCACertificate: types.ObjectNull(istioCSRAttrTypes("cert_manager", "istio_ca_certificate")),
		}
		if ref, ok := objMap(cm, "issuerRef"); ok {
			out.IssuerRef = objectFrom(ctx, istioCSRAttrTypes("cert_manager", "issuer_ref"), istioCSRIssuerRefModel{
				Name: objString(ref, "name"), Kind: objString(ref, "kind"), Group: objString(ref, "group"),
			}, &diags)
		}
		if ca, ok := objMap(cm, "istioCACertificate"); ok {
			out.IstioCACertificate = objectFrom(ctx, istioCSRAttrTypes("cert_manager", "istio_ca_certificate"), istioCSRCACertificateModel{
				// The CRD allows "" for the IstioCSR's own namespace, as unset.
				Name: objString(ca, "name"), Namespace: optionalString(objText(ca["namespace"])), Key: objString(ca, "key"),
			}, &diags)
		}
		m.CertManager = objectFrom(ctx, istioCSRAttrTypes("cert_manager"), out, &diags)
	}
	m.IstiodTLS = types.ObjectNull(istioCSRAttrTypes("istiod_tls"))
	if tls, ok := objMap(cfg, "istiodTLSConfig"); ok {
		m.IstiodTLS = objectFrom(ctx, istioCSRAttrTypes("istiod_tls"), istioCSRIstiodTLSModel{
			CommonName:             objString(tls, "commonName"),
			TrustDomain:            objString(tls, "trustDomain"),
			CertificateDNSNames:    stringListOrNull(objStrings(tls, "certificateDNSNames")),
			CertificateDuration:    durationtype.Value{StringValue: objString(tls, "certificateDuration")},
			CertificateRenewBefore: durationtype.Value{StringValue: objString(tls, "certificateRenewBefore")},
			MaxCertificateDuration: durationtype.Value{StringValue: objString(tls, "maxCertificateDuration")},
			PrivateKeyAlgorithm:    objString(tls, "privateKeyAlgorithm"),
			PrivateKeySize:         objInt64(tls, "privateKeySize"),
		}, &diags)
	}
	m.Server = types.ObjectNull(istioCSRAttrTypes("server"))
	if s, ok := objMap(cfg, "server"); ok {
		m.Server = objectFrom(ctx, istioCSRAttrTypes("server"), istioCSRServerModel{ClusterID: objString(s, "clusterID"), Port: objInt64(s, "port")}, &diags)
	}
	m.Istio = types.ObjectNull(istioCSRAttrTypes("istio"))
	if i, ok := objMap(cfg, "istio"); ok {
		m.Istio = objectFrom(ctx, istioCSRAttrTypes("istio"), istioCSRIstioModel{
			Namespace: objString(i, "namespace"), Revisions: stringListOrNull(objStrings(i, "revisions")),
		}, &diags)
	}
	m.Resources = istioCSRResourcesValue(ctx, m.Resources, cfg, &diags)
	m.Affinity = jsontypes.NewNormalizedNull()
	if affinity, ok := cfg["affinity"]; ok && affinity != nil {
		data, err := json.Marshal(affinity)
		if err != nil {
			diags.AddError("Unreadable Affinity", fmt.Sprintf("The object's spec.istioCSRConfig.affinity cannot be encoded as JSON: %v", err))
		} else {
			m.Affinity = jsontypes.NewNormalizedValue(string(data))
		}
	}
	tolerationType := types.ObjectType{AttrTypes: istioCSRAttrTypes("tolerations")}
	m.Tolerations = types.ListNull(tolerationType)
	if items, ok := cfg["tolerations"].([]any); ok {
		tolerations := make([]istioCSRTolerationModel, 0, len(items))
		for _, item := range items {
			t, _ := item.(map[string]any)
			tolerations = append(tolerations, istioCSRTolerationModel{
				Key: objString(t, "key"), Operator: objString(t, "operator"), Value: objString(t, "value"),
				Effect: objString(t, "effect"), TolerationSeconds: objInt64(t, "tolerationSeconds"),
			})
		}
		var d diag.Diagnostics
		m.Tolerations, d = types.ListValueFrom(ctx, tolerationType, tolerations)
		diags.Append(d...)
	}
	m.NodeSelector = stringMapOrNull(objStringMap(cfg, "nodeSelector"))
	m.ControllerConfig = types.ObjectNull(istioCSRAttrTypes("controller_config"))
	if cc, ok := objMap(obj.Object["spec"], "controllerConfig"); ok {
		m.ControllerConfig = objectFrom(ctx, istioCSRAttrTypes("controller_config"), istioCSRControllerConfigModel{
			Labels: stringMapOrNull(objStringMap(cc, "labels")),
		}, &diags)
	}

	status, _ := objMap(obj.Object, "status")
	m.GRPCEndpoint = objString(status, "istioCSRGRPCEndpoint")
	m.Image = objString(status, "istioCSRImage")
	m.ServiceAccount = objString(status, "serviceAccount")
	m.ClusterRole = objString(status, "clusterRole")
	m.ClusterRoleBinding = objString(status, "clusterRoleBinding")
	conditions, d := conditionsValue(status)
	diags.Append(d...)
	m.Conditions = conditions
	if m.ForceConflicts.IsNull() || m.ForceConflicts.IsUnknown() {
		m.ForceConflicts = types.BoolValue(false)
	}
	return diags
}

// istioCSRResourcesValue reads spec.istioCSRConfig.resources by meaning,
// against prior, the model's value before the read (plan or state):
//   - the operator's Update writes the typed ResourceRequirements back, which
//     has no omitempty on the IstioCSR (a non-pointer struct), so an object
//     without resources comes back with `resources: {}`: an empty object reads
//     as null, unless prior is the empty object itself (configured that way);
//   - the same Update writes quantities in canonical form (0.5 -> 500m,
//     1024Mi -> 1Gi): the quantities are read as the object holds them, and
//     their type (quantitytype) makes the framework keep prior's text for a
//     quantity that means the same.
func istioCSRResourcesValue(ctx context.Context, prior types.Object, cfg map[string]any, diags *diag.Diagnostics) types.Object {
	res, ok := objMap(cfg, "resources")
	priorModel, havePrior := objectAs[istioCSRResourcesModel](ctx, prior, diags)
	// priorEmpty: the configuration itself said `resources = {}`.
	priorEmpty := havePrior && priorModel.Limits.IsNull() && priorModel.Requests.IsNull() && priorModel.Claims.IsNull()
	if !ok || (len(res) == 0 && !priorEmpty) {
		return types.ObjectNull(istioCSRAttrTypes("resources"))
	}
	limits, requests := nonEmpty(objStringMap(res, "limits")), nonEmpty(objStringMap(res, "requests"))
	if limits == nil && requests == nil && res["claims"] == nil && !priorEmpty {
		return types.ObjectNull(istioCSRAttrTypes("resources"))
	}
	out := istioCSRResourcesModel{
		Limits:   quantitytype.Map(limits),
		Requests: quantitytype.Map(requests),
		Claims:   types.ListNull(types.ObjectType{AttrTypes: istioCSRAttrTypes("resources", "claims")}),
	}
	if items, ok := res["claims"].([]any); ok {
		claims := make([]istioCSRClaimModel, 0, len(items))
		for _, c := range items {
			claim, _ := c.(map[string]any)
			claims = append(claims, istioCSRClaimModel{Name: objString(claim, "name"), Request: objString(claim, "request")})
		}
		var d diag.Diagnostics
		out.Claims, d = types.ListValueFrom(ctx, types.ObjectType{AttrTypes: istioCSRAttrTypes("resources", "claims")}, claims)
		diags.Append(d...)
	}
	return objectFrom(ctx, istioCSRAttrTypes("resources"), out, diags)
}

// nonEmpty is m, or nil when m is empty: an empty limits or requests map
// (see releaseIstioCSRResources) reads as unset.
func nonEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// releaseIstioCSRResources makes obj, an apply configuration without
// resources, still claim an empty part of resources when live, the object,
// holds quantities this provider may be releasing. The operator's Update
// owns `resources: {}` (see istioCSRResourcesValue); server-side apply turns
// an object into null once the last field under it is released, and the
// CRD refuses a null resources (seen on kube-apiserver v1.35). Claiming an
// empty part the object does not hold yet (nothing is released under it)
// keeps resources an object; an empty part reads as unset.
func releaseIstioCSRResources(obj, live *unstructured.Unstructured) {
	if live == nil {
		return
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "istioCSRConfig", "resources"); found {
		return
	}
	res, _, _ := unstructured.NestedMap(live.Object, "spec", "istioCSRConfig", "resources")
	if len(objStringMap(res, "limits")) == 0 && len(objStringMap(res, "requests")) == 0 && res["claims"] == nil {
		return
	}
	for _, part := range []struct {
		name  string
		empty any
	}{{"claims", []any{}}, {"limits", map[string]any{}}, {"requests", map[string]any{}}} {
		if _, held := res[part.name]; !held {
			_ = unstructured.SetNestedField(obj.Object, map[string]any{part.name: part.empty}, "spec", "istioCSRConfig", "resources")
			return
		}
	}
}

// keepLiveSpelling makes obj, an apply configuration, send the live
// object's text for each duration and quantity that means the same as the
// configured one. The operator's first Updates of the IstioCSR re-serialise
// those fields (see durationtype, quantitytype), which makes its
// field manager their owner; applying the other spelling of the same value
// would then be a field conflict with the operator, while applying the live
// text changes nothing and shares the ownership.
func keepLiveSpelling(obj, live *unstructured.Unstructured) {
	if live == nil {
		return
	}
	tlsPath := []string{"spec", "istioCSRConfig", "istiodTLSConfig"}
	for _, field := range []string{"certificateDuration", "certificateRenewBefore", "maxCertificateDuration"} {
		p := append(append([]string{}, tlsPath...), field)
		want, ok, _ := unstructured.NestedString(obj.Object, p...)
		have, found, _ := unstructured.NestedString(live.Object, p...)
		if ok && found && want != have && durationtype.Same(want, have) {
			_ = unstructured.SetNestedField(obj.Object, have, p...)
		}
	}
	for _, group := range []string{"limits", "requests"} {
		p := []string{"spec", "istioCSRConfig", "resources", group}
		want, ok, _ := unstructured.NestedStringMap(obj.Object, p...)
		have, found, _ := unstructured.NestedStringMap(live.Object, p...)
		if !ok || !found {
			continue
		}
		changed := false
		for name, text := range want {
			if h, ok := have[name]; ok && h != text && quantitytype.Same(text, h) {
				want[name], changed = h, true
			}
		}
		if changed {
			_ = unstructured.SetNestedStringMap(obj.Object, want, p...)
		}
	}
}

// conditionsValue maps status.conditions to a map keyed by condition type.
func conditionsValue(status map[string]any) (types.Map, diag.Diagnostics) {
	conditionAttrTypes := istioCSRAttrTypes("conditions")
	elemType := types.ObjectType{AttrTypes: conditionAttrTypes}
	items, _ := status["conditions"].([]any)
	values := make(map[string]attr.Value, len(items))
	var diags diag.Diagnostics
	for _, item := range items {
		c, ok := item.(map[string]any)
		if !ok {
			continue
		}
		conditionType, _ := c["type"].(string)
		if conditionType == "" {
			continue
		}
		observed := objInt64(c, "observedGeneration")
		if observed.IsNull() {
			observed = types.Int64Value(0)
		}
		v, d := types.ObjectValue(conditionAttrTypes, map[string]attr.Value{
			"status":               types.StringValue(objText(c["status"])),
			"reason":               types.StringValue(objText(c["reason"])),
			"message":              types.StringValue(objText(c["message"])),
			"last_transition_time": types.StringValue(objText(c["lastTransitionTime"])),
			"observed_generation":  observed,
		})
		diags.Append(d...)
		values[conditionType] = v
	}
	m, d := types.MapValue(elemType, values)
	diags.Append(d...)
	return m, diags
}

// istioCSRTimeoutsNull is the timeouts block of an imported object: not set.
func istioCSRTimeoutsNull() timeouts.Value {
	return timeouts.Value{Object: types.ObjectNull(istioCSRAttrTypes("timeouts"))}
}
