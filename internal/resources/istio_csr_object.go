package resources

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// istioCSRName is the only name the CRD accepts: the IstioCSR is a
// singleton per namespace.
const istioCSRName = "default"

type istioCSRResourceModel struct {
	ID                              types.String                   `tfsdk:"id"`
	Cluster                         types.String                   `tfsdk:"cluster"`
	Namespace                       types.String                   `tfsdk:"namespace"`
	ForceConflicts                  types.Bool                     `tfsdk:"force_conflicts"`
	LogLevel                        types.Int64                    `tfsdk:"log_level"`
	LogFormat                       types.String                   `tfsdk:"log_format"`
	IstioDataPlaneNamespaceSelector types.String                   `tfsdk:"istio_data_plane_namespace_selector"`
	CertManager                     *istioCSRCertManagerModel      `tfsdk:"cert_manager"`
	IstiodTLS                       *istioCSRIstiodTLSModel        `tfsdk:"istiod_tls"`
	Server                          *istioCSRServerModel           `tfsdk:"server"`
	Istio                           *istioCSRIstioModel            `tfsdk:"istio"`
	Resources                       *istioCSRResourcesModel        `tfsdk:"resources"`
	Affinity                        jsontypes.Normalized           `tfsdk:"affinity"`
	Tolerations                     []istioCSRTolerationModel      `tfsdk:"tolerations"`
	NodeSelector                    map[string]string              `tfsdk:"node_selector"`
	ControllerConfig                *istioCSRControllerConfigModel `tfsdk:"controller_config"`
	GRPCEndpoint                    types.String                   `tfsdk:"grpc_endpoint"`
	Image                           types.String                   `tfsdk:"image"`
	ServiceAccount                  types.String                   `tfsdk:"service_account"`
	ClusterRole                     types.String                   `tfsdk:"cluster_role"`
	ClusterRoleBinding              types.String                   `tfsdk:"cluster_role_binding"`
	Conditions                      types.Map                      `tfsdk:"conditions"`
	Timeouts                        timeouts.Value                 `tfsdk:"timeouts"`
}

type istioCSRCertManagerModel struct {
	IssuerRef          *istioCSRIssuerRefModel     `tfsdk:"issuer_ref"`
	IstioCACertificate *istioCSRCACertificateModel `tfsdk:"istio_ca_certificate"`
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
	CommonName             types.String `tfsdk:"common_name"`
	TrustDomain            types.String `tfsdk:"trust_domain"`
	CertificateDNSNames    []string     `tfsdk:"certificate_dns_names"`
	CertificateDuration    types.String `tfsdk:"certificate_duration"`
	CertificateRenewBefore types.String `tfsdk:"certificate_renew_before"`
	MaxCertificateDuration types.String `tfsdk:"max_certificate_duration"`
	PrivateKeyAlgorithm    types.String `tfsdk:"private_key_algorithm"`
	PrivateKeySize         types.Int64  `tfsdk:"private_key_size"`
}

type istioCSRServerModel struct {
	ClusterID types.String `tfsdk:"cluster_id"`
	Port      types.Int64  `tfsdk:"port"`
}

type istioCSRIstioModel struct {
	Namespace types.String `tfsdk:"namespace"`
	Revisions []string     `tfsdk:"revisions"`
}

type istioCSRResourcesModel struct {
	Limits   map[string]string    `tfsdk:"limits"`
	Requests map[string]string    `tfsdk:"requests"`
	Claims   []istioCSRClaimModel `tfsdk:"claims"`
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
	Labels map[string]string `tfsdk:"labels"`
}

// istioCSRObject is the apply configuration: exactly the fields m, the
// resource's configuration, sets, so fields dropped from it are released.
// It is built from the configuration, not from the plan: for an unset
// attribute the plan holds the object's current value (perhaps another
// manager's) or the CRD default, and the provider claims neither. The
// exception is issuerGroup (planned): the CRD's rules read the group and it
// has no default, so it is always sent.
func istioCSRObject(m *istioCSRResourceModel, issuerGroup types.String) (*unstructured.Unstructured, error) {
	cfg := map[string]any{}
	objSetInt64(cfg, "logLevel", m.LogLevel)
	objSetString(cfg, "logFormat", m.LogFormat)
	objSetString(cfg, "istioDataPlaneNamespaceSelector", m.IstioDataPlaneNamespaceSelector)

	if cm := m.CertManager; cm != nil {
		certManager := map[string]any{}
		if ref := cm.IssuerRef; ref != nil {
			issuer := map[string]any{}
			objSetString(issuer, "name", ref.Name)
			objSetString(issuer, "kind", ref.Kind)
			objSetString(issuer, "group", issuerGroup)
			certManager["issuerRef"] = issuer
		}
		if ca := cm.IstioCACertificate; ca != nil {
			ref := map[string]any{}
			objSetString(ref, "name", ca.Name)
			objSetString(ref, "namespace", ca.Namespace)
			objSetString(ref, "key", ca.Key)
			certManager["istioCACertificate"] = ref
		}
		cfg["certManager"] = certManager
	}
	if tls := m.IstiodTLS; tls != nil {
		out := map[string]any{}
		objSetString(out, "commonName", tls.CommonName)
		objSetString(out, "trustDomain", tls.TrustDomain)
		objSetStrings(out, "certificateDNSNames", tls.CertificateDNSNames)
		objSetString(out, "certificateDuration", tls.CertificateDuration)
		objSetString(out, "certificateRenewBefore", tls.CertificateRenewBefore)
		objSetString(out, "maxCertificateDuration", tls.MaxCertificateDuration)
		objSetString(out, "privateKeyAlgorithm", tls.PrivateKeyAlgorithm)
		objSetInt64(out, "privateKeySize", tls.PrivateKeySize)
		cfg["istiodTLSConfig"] = out
	}
	if s := m.Server; s != nil {
		out := map[string]any{}
		objSetString(out, "clusterID", s.ClusterID)
		objSetInt64(out, "port", s.Port)
		cfg["server"] = out
	}
	if i := m.Istio; i != nil {
		out := map[string]any{}
		objSetString(out, "namespace", i.Namespace)
		objSetStrings(out, "revisions", i.Revisions)
		cfg["istio"] = out
	}
	if res := m.Resources; res != nil {
		out := map[string]any{}
		objSetStringMap(out, "limits", res.Limits)
		objSetStringMap(out, "requests", res.Requests)
		if res.Claims != nil {
			claims := make([]any, 0, len(res.Claims))
			for _, c := range res.Claims {
				claim := map[string]any{}
				objSetString(claim, "name", c.Name)
				objSetString(claim, "request", c.Request)
				claims = append(claims, claim)
			}
			out["claims"] = claims
		}
		cfg["resources"] = out
	}
	if !m.Affinity.IsNull() && !m.Affinity.IsUnknown() {
		var affinity map[string]any
		if err := json.Unmarshal([]byte(m.Affinity.ValueString()), &affinity); err != nil {
			return nil, fmt.Errorf("affinity is not a JSON object: %w", err)
		}
		cfg["affinity"] = affinity
	}
	if m.Tolerations != nil {
		tolerations := make([]any, 0, len(m.Tolerations))
		for _, t := range m.Tolerations {
			out := map[string]any{}
			objSetString(out, "key", t.Key)
			objSetString(out, "operator", t.Operator)
			objSetString(out, "value", t.Value)
			objSetString(out, "effect", t.Effect)
			objSetInt64(out, "tolerationSeconds", t.TolerationSeconds)
			tolerations = append(tolerations, out)
		}
		cfg["tolerations"] = tolerations
	}
	objSetStringMap(cfg, "nodeSelector", m.NodeSelector)

	spec := map[string]any{"istioCSRConfig": cfg}
	if cc := m.ControllerConfig; cc != nil {
		out := map[string]any{}
		objSetStringMap(out, "labels", cc.Labels)
		spec["controllerConfig"] = out
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	obj.SetName(istioCSRName)
	obj.SetNamespace(m.Namespace.ValueString())
	return obj, nil
}

// setIstioCSRFromObject copies the object into the model, so changes made
// outside Terraform show up as a plan. A field the object lacks becomes null.
func setIstioCSRFromObject(m *istioCSRResourceModel, obj *unstructured.Unstructured) diag.Diagnostics {
	var diags diag.Diagnostics
	cfg, _, _ := unstructured.NestedMap(obj.Object, "spec", "istioCSRConfig")
	m.Namespace = types.StringValue(obj.GetNamespace())
	m.ID = types.StringValue(resourceID(m.Cluster, obj.GetNamespace()))
	m.LogLevel = objInt64(cfg, "logLevel")
	m.LogFormat = objString(cfg, "logFormat")
	m.IstioDataPlaneNamespaceSelector = objString(cfg, "istioDataPlaneNamespaceSelector")

	m.CertManager = nil
	if cm, ok := objMap(cfg, "certManager"); ok {
		m.CertManager = &istioCSRCertManagerModel{}
		if ref, ok := objMap(cm, "issuerRef"); ok {
			m.CertManager.IssuerRef = &istioCSRIssuerRefModel{
				Name: objString(ref, "name"), Kind: objString(ref, "kind"), Group: objString(ref, "group"),
			}
		}
		if ca, ok := objMap(cm, "istioCACertificate"); ok {
			m.CertManager.IstioCACertificate = &istioCSRCACertificateModel{
				// The CRD allows "" for the IstioCSR's own namespace, as unset.
				Name: objString(ca, "name"), Namespace: optionalString(objText(ca["namespace"])), Key: objString(ca, "key"),
			}
		}
	}
	m.IstiodTLS = nil
	if tls, ok := objMap(cfg, "istiodTLSConfig"); ok {
		m.IstiodTLS = &istioCSRIstiodTLSModel{
			CommonName:             objString(tls, "commonName"),
			TrustDomain:            objString(tls, "trustDomain"),
			CertificateDNSNames:    objStrings(tls, "certificateDNSNames"),
			CertificateDuration:    objString(tls, "certificateDuration"),
			CertificateRenewBefore: objString(tls, "certificateRenewBefore"),
			MaxCertificateDuration: objString(tls, "maxCertificateDuration"),
			PrivateKeyAlgorithm:    objString(tls, "privateKeyAlgorithm"),
			PrivateKeySize:         objInt64(tls, "privateKeySize"),
		}
	}
	m.Server = nil
	if s, ok := objMap(cfg, "server"); ok {
		m.Server = &istioCSRServerModel{ClusterID: objString(s, "clusterID"), Port: objInt64(s, "port")}
	}
	m.Istio = nil
	if i, ok := objMap(cfg, "istio"); ok {
		m.Istio = &istioCSRIstioModel{Namespace: objString(i, "namespace"), Revisions: objStrings(i, "revisions")}
	}
	m.Resources = nil
	if res, ok := objMap(cfg, "resources"); ok {
		m.Resources = &istioCSRResourcesModel{Limits: objStringMap(res, "limits"), Requests: objStringMap(res, "requests")}
		if claims, ok := res["claims"].([]any); ok {
			m.Resources.Claims = make([]istioCSRClaimModel, 0, len(claims))
			for _, c := range claims {
				claim, _ := c.(map[string]any)
				m.Resources.Claims = append(m.Resources.Claims, istioCSRClaimModel{Name: objString(claim, "name"), Request: objString(claim, "request")})
			}
		}
	}
	m.Affinity = jsontypes.NewNormalizedNull()
	if affinity, ok := cfg["affinity"]; ok && affinity != nil {
		data, err := json.Marshal(affinity)
		if err != nil {
			diags.AddError("Unreadable Affinity", fmt.Sprintf("The object's spec.istioCSRConfig.affinity cannot be encoded as JSON: %v", err))
		} else {
			m.Affinity = jsontypes.NewNormalizedValue(string(data))
		}
	}
	m.Tolerations = nil
	if tolerations, ok := cfg["tolerations"].([]any); ok {
		m.Tolerations = make([]istioCSRTolerationModel, 0, len(tolerations))
		for _, item := range tolerations {
			t, _ := item.(map[string]any)
			m.Tolerations = append(m.Tolerations, istioCSRTolerationModel{
				Key: objString(t, "key"), Operator: objString(t, "operator"), Value: objString(t, "value"),
				Effect: objString(t, "effect"), TolerationSeconds: objInt64(t, "tolerationSeconds"),
			})
		}
	}
	m.NodeSelector = objStringMap(cfg, "nodeSelector")
	m.ControllerConfig = nil
	if cc, ok := objMap(obj.Object["spec"], "controllerConfig"); ok {
		m.ControllerConfig = &istioCSRControllerConfigModel{Labels: objStringMap(cc, "labels")}
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

// conditionsValue maps status.conditions to a map keyed by condition type.
func conditionsValue(status map[string]any) (types.Map, diag.Diagnostics) {
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

// describeConditions renders status conditions for an error message, Ready
// and Degraded first: "Ready=False (InProgress): waiting for ...".
func describeConditions(obj *unstructured.Unstructured) string {
	if obj == nil {
		return "the object could not be read"
	}
	items, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	if len(items) == 0 {
		return "the operator has reported no conditions yet (is the cert-manager Operator running, with istio-csr support enabled?)"
	}
	rank := map[string]int{"Ready": 0, "Degraded": 1}
	lines := make([]string, 0, len(items))
	sort.SliceStable(items, func(i, j int) bool {
		a, _ := items[i].(map[string]any)
		b, _ := items[j].(map[string]any)
		ra, oka := rank[objText(a["type"])]
		rb, okb := rank[objText(b["type"])]
		if !oka {
			ra = 2
		}
		if !okb {
			rb = 2
		}
		return ra < rb
	})
	for _, item := range items {
		c, _ := item.(map[string]any)
		line := fmt.Sprintf("%s=%s", objText(c["type"]), objText(c["status"]))
		if reason := objText(c["reason"]); reason != "" {
			line += " (" + reason + ")"
		}
		if msg := objText(c["message"]); msg != "" {
			line += ": " + msg
		}
		lines = append(lines, "  - "+line)
	}
	return "\n" + strings.Join(lines, "\n")
}

// istioCSRTimeoutsNull is the timeouts block of an imported object: not set.
func istioCSRTimeoutsNull() timeouts.Value {
	return timeouts.Value{Object: types.ObjectNull(map[string]attr.Type{
		"create": types.StringType, "update": types.StringType, "delete": types.StringType,
	})}
}
