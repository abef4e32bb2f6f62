package resources

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// ValidateConfig applies the Kubernetes rules for the agent's pod settings.
// The CRD's cross-field rules on istiod_tls run in ModifyPlan, on planned
// values: an unset attribute takes the object's value or the CRD default,
// which only the plan knows.
func (r *istioCSRResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var tolerations types.List
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("tolerations"), &tolerations)...)
	if !resp.Diagnostics.HasError() && !tolerations.IsNull() && !tolerations.IsUnknown() {
		for i, item := range tolerations.Elements() {
			if obj, ok := item.(types.Object); ok && !obj.IsNull() && !obj.IsUnknown() {
				validateToleration(path.Root("tolerations").AtListIndex(i), obj.Attributes(), &resp.Diagnostics)
			}
		}
	}
	validateIstioCSRRequestsWithinLimits(ctx, req, resp)
	// resources.claims is a list map keyed by name in the CRD.
	var claims types.List
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("resources").AtName("claims"), &claims)...)
	if !resp.Diagnostics.HasError() && !claims.IsNull() && !claims.IsUnknown() {
		seen := map[string]bool{}
		for i, item := range claims.Elements() {
			obj, ok := item.(types.Object)
			if !ok || obj.IsNull() || obj.IsUnknown() {
				continue
			}
			name, _ := obj.Attributes()["name"].(types.String)
			if name.IsNull() || name.IsUnknown() {
				continue
			}
			if seen[name.ValueString()] {
				validate.AttributeError(&resp.Diagnostics, path.Root("resources").AtName("claims").AtListIndex(i).AtName("name"), "Duplicate Resource Claim",
					fmt.Sprintf("The claim %q is listed twice: the CRD keys resources.claims by name.", name.ValueString()))
			}
			seen[name.ValueString()] = true
		}
	}
}

// validateIstioCSRRequestsWithinLimits applies the Kubernetes rule that a
// container's request may not exceed its limit. The operator checks the
// agent's resources with the Kubernetes validators (common/validation.go)
// and, as that is a plain error, retries forever: the apply would wait out
// its timeout.
func validateIstioCSRRequestsWithinLimits(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var requests, limits types.Map
	resPath := path.Root("resources")
	if req.Config.GetAttribute(ctx, resPath.AtName("requests"), &requests).HasError() ||
		req.Config.GetAttribute(ctx, resPath.AtName("limits"), &limits).HasError() {
		return
	}
	wantLimits := stringMapOf(limits)
	for name, text := range stringMapOf(requests) {
		limitText, ok := wantLimits[name]
		if !ok {
			continue
		}
		request, errR := k8sresource.ParseQuantity(text)
		limit, errL := k8sresource.ParseQuantity(limitText)
		if errR != nil || errL != nil || request.Cmp(limit) <= 0 {
			continue // unparsable quantities are the validator's to report
		}
		validate.AttributeError(&resp.Diagnostics, resPath.AtName("requests").AtMapKey(name), "Request Above Limit", fmt.Sprintf(
			"The request %s of %q is above its limit %s. Kubernetes refuses such a container, and the cert-manager "+
				"Operator, which checks the agent's resources that way (common/validation.go), would retry forever.",
			text, name, limitText))
	}
}

// validateIstiodTLS applies the CRD's key size rule and the duration
// ordering the operator relies on but the CRD does not check, to the planned
// values (what the object will hold, defaults included); configured tells
// which of them the configuration sets.
func validateIstiodTLS(attrs, configured map[string]attr.Value, diags *diag.Diagnostics) {
	tlsPath := path.Root("istiod_tls")
	algorithm, algorithmKnown := stringOrDefault(attrs["private_key_algorithm"], istioCSRDefaultKeyAlgorithm)
	size, sizeKnown := int64OrDefault(attrs["private_key_size"], istioCSRDefaultKeySize)
	if algorithmKnown && sizeKnown {
		allowed := istioCSRRSAKeySizes
		if algorithm == istioCSRKeyAlgorithmECDSA {
			allowed = istioCSRECDSAKeySizes
		}
		if !slices.Contains(allowed, size) {
			detail := fmt.Sprintf("privateKeySize must match with configured privateKeyAlgorithm: %s keys are %s bits, not %d.",
				algorithm, joinInt64s(allowed), size)
			if v, ok := configured["private_key_size"].(types.Int64); (!ok || v.IsNull()) && size == istioCSRDefaultKeySize {
				detail += fmt.Sprintf(" The size defaults to %d (an RSA size, as in the CRD), so set private_key_size explicitly for %s.",
					istioCSRDefaultKeySize, algorithm)
			}
			validate.AttributeError(diags, tlsPath.AtName("private_key_size"), "Key Size Does Not Match Algorithm", detail)
		}
	}

	durations := map[string]time.Duration{}
	for name, def := range map[string]string{
		"certificate_duration":     istioCSRDefaultDuration,
		"certificate_renew_before": istioCSRDefaultRenewBefore,
		"max_certificate_duration": istioCSRDefaultMaxDuration,
	} {
		text, known := stringOrDefault(attrs[name], def)
		if !known {
			return
		}
		d, err := time.ParseDuration(text)
		if err != nil || d <= 0 {
			return // the attribute's own validator reports it
		}
		durations[name] = d
	}
	duration, renew, limit := durations["certificate_duration"], durations["certificate_renew_before"], durations["max_certificate_duration"]
	if renew >= duration {
		validate.AttributeError(diags, tlsPath.AtName("certificate_renew_before"), "Renewal Not Before Expiry", fmt.Sprintf(
			"certificate_renew_before (%s) must be shorter than certificate_duration (%s): otherwise istiod's "+
				"certificate is due for renewal as soon as it is issued. Unset values keep the object's values or take "+
				"the CRD defaults %s and %s.",
			renew, duration, istioCSRDefaultRenewBefore, istioCSRDefaultDuration))
	}
	if duration > limit {
		validate.AttributeError(diags, tlsPath.AtName("certificate_duration"), "Certificate Duration Above Maximum", fmt.Sprintf(
			"certificate_duration (%s) must not exceed max_certificate_duration (%s), the longest lifetime istio-csr "+
				"grants; raise max_certificate_duration too (its default is %s).", duration, limit, istioCSRDefaultMaxDuration))
	}
}

// validateToleration applies the Kubernetes API's toleration rules, which
// would otherwise fail only when the operator creates the agent's Deployment.
func validateToleration(p path.Path, attrs map[string]attr.Value, diags *diag.Diagnostics) {
	operator, _ := attrs["operator"].(types.String)
	value, _ := attrs["value"].(types.String)
	key, _ := attrs["key"].(types.String)
	effect, _ := attrs["effect"].(types.String)
	seconds, _ := attrs["toleration_seconds"].(types.Int64)
	if operator.ValueString() == "Exists" && value.ValueString() != "" {
		validate.AttributeError(diags, p.AtName("value"), "Toleration Value With Exists",
			"A toleration with operator Exists matches any value, so value must be unset.")
	}
	if key.IsNull() && !operator.IsUnknown() && operator.ValueString() != "Exists" {
		validate.AttributeError(diags, p.AtName("operator"), "Toleration Without Key",
			"A toleration without key tolerates every taint and needs operator = \"Exists\".")
	}
	if !seconds.IsNull() && !effect.IsUnknown() && effect.ValueString() != "NoExecute" {
		validate.AttributeError(diags, p.AtName("toleration_seconds"), "Toleration Seconds Without NoExecute",
			"toleration_seconds applies only to effect = \"NoExecute\".")
	}
}

func (r *istioCSRResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var tls, tlsConfig types.Object
	resp.Diagnostics.Append(resp.Plan.GetAttribute(ctx, path.Root("istiod_tls"), &tls)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("istiod_tls"), &tlsConfig)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !tls.IsNull() && !tls.IsUnknown() {
		validateIstiodTLS(tls.Attributes(), tlsConfig.Attributes(), &resp.Diagnostics)
	}
	keepUnchangedIstioCSR(ctx, req, resp)
	recordReplacedNamespace(ctx, req, resp)
	if r.Data == nil {
		return
	}
	var cluster, namespace types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("cluster"), &cluster)...)
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("namespace"), &namespace)...)
	if resp.Diagnostics.HasError() || !r.Data.CheckCluster(cluster, path.Root("cluster"), &resp.Diagnostics) {
		return
	}
	if !namespace.IsUnknown() {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("id"), resourceID(cluster, namespace.ValueString()))...)
	}
	r.checkIstioCSRCluster(ctx, req, resp, cluster)
	checkPlannedApply(ctx, r.Data, req, resp, plannedApply{Kind: kube.IstioCSR,
		Outputs: istioCSROutputs,
		Forced:  istioCSRConflictForced,
		Object: func() (*unstructured.Unstructured, bool) {
			// What apply sends: the configuration, with the planned issuer group.
			var plan, config istioCSRResourceModel
			if d := resp.Plan.Get(ctx, &plan); d.HasError() {
				return nil, false
			}
			if d := req.Config.Get(ctx, &config); d.HasError() {
				return nil, false
			}
			var diags diag.Diagnostics
			obj, d := istioCSRObjectFromModel(ctx, &config, plan.issuerGroup(ctx, &diags))
			// The dry run sends what the apply would, which looks at the
			// object: ask for it (this runs only for an in-place update).
			if obj != nil {
				if client := planClient(ctx, r.Data, cluster, &diags); client != nil {
					if live, err := client.Get(ctx, kube.IstioCSR, obj.GetNamespace(), istioCSRName); err == nil {
						keepLiveSpelling(obj, live)
						releaseIstioCSRResources(obj, live)
					}
				}
			}
			return obj, !diags.HasError() && !d.HasError()
		}})
}

// istioCSRIssuerReadTimeout bounds the plan-time lookups: planning must not
// wait on a slow cluster.
const istioCSRIssuerReadTimeout = 5 * time.Second

// istioCSRPlanned is what the plan-time cluster checks read from the plan;
// a value the plan does not know yet is null here.
type istioCSRPlanned struct {
	namespace, istioNS, issuerName, issuerKind string
	caCert                                     *istioCSRCACertificateModel
}

// replacesIstioCSR reports whether the plan creates the object or replaces
// it: the state is null, or a value that cannot change on the object
// changes (see the schema's RequiresReplace modifiers; the resource's
// ModifyPlan does not see their verdict).
func replacesIstioCSR(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) bool {
	if req.State.Raw.IsNull() {
		return true
	}
	tls, ref := path.Root("istiod_tls"), path.Root("cert_manager").AtName("issuer_ref")
	for _, p := range []path.Path{path.Root("namespace"), path.Root("istio").AtName("namespace"), ref.AtName("name"), ref.AtName("kind"), ref.AtName("group")} {
		var before, after types.String
		if req.State.GetAttribute(ctx, p, &before).HasError() || resp.Plan.GetAttribute(ctx, p, &after).HasError() || !before.Equal(after) {
			return true
		}
	}
	var algBefore, algAfter types.String
	if req.State.GetAttribute(ctx, tls.AtName("private_key_algorithm"), &algBefore).HasError() ||
		resp.Plan.GetAttribute(ctx, tls.AtName("private_key_algorithm"), &algAfter).HasError() ||
		(algBefore.ValueString() != "" && !algBefore.Equal(algAfter)) {
		return true
	}
	for _, p := range []path.Path{tls.AtName("private_key_size"), path.Root("server").AtName("port")} {
		var before, after types.Int64
		if req.State.GetAttribute(ctx, p, &before).HasError() || resp.Plan.GetAttribute(ctx, p, &after).HasError() ||
			(before.ValueInt64() != 0 && !before.Equal(after)) {
			return true
		}
	}
	return false
}

// checkIstioCSRCluster asks the cluster, at plan time, about what the
// operator would refuse at reconcile time and never retry, or retry
// forever: another IstioCSR in the cluster, an ACME issuer, a missing or
// unusable istio_ca_certificate ConfigMap, a CA issuer whose secret is not
// where the operator reads it. Each is an error: the apply could only end
// Degraded, rejected, or at its timeout. A missing issuer stays a warning:
// the operator retries it, and cert-manager or the issuer may be created by
// the same apply. It asks only when the cluster's connection and the values
// are known, within istioCSRIssuerReadTimeout, and stays silent when the
// cluster cannot answer (unreachable, no permission, CRD not served): the
// apply and the operator then speak for themselves. The checks of a
// reference that cannot change run only when the plan creates or replaces
// the object.
func (r *istioCSRResource) checkIstioCSRCluster(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, cluster types.String) {
	if cluster.IsUnknown() || r.Data.Clusters == nil || r.Data.Clusters.IsUnknown(providerdata.ClusterKey(cluster)) {
		return
	}
	refPath, istioNSPath := path.Root("cert_manager").AtName("issuer_ref"), path.Root("istio").AtName("namespace")
	caPath := path.Root("cert_manager").AtName("istio_ca_certificate")
	var planned istioCSRPlanned
	for _, a := range []struct {
		p path.Path
		v *string
	}{{path.Root("namespace"), &planned.namespace}, {refPath.AtName("name"), &planned.issuerName},
		{refPath.AtName("kind"), &planned.issuerKind}, {istioNSPath, &planned.istioNS}} {
		var v types.String
		if resp.Plan.GetAttribute(ctx, a.p, &v).HasError() || v.IsNull() || v.IsUnknown() {
			return
		}
		*a.v = v.ValueString()
	}
	var ca types.Object
	if resp.Plan.GetAttribute(ctx, caPath, &ca).HasError() || ca.IsUnknown() {
		return
	}
	var caDiags diag.Diagnostics
	if model, ok := objectAs[istioCSRCACertificateModel](ctx, ca, &caDiags); ok {
		if model.Name.IsUnknown() || model.Key.IsUnknown() || model.Namespace.IsUnknown() {
			return
		}
		planned.caCert = &model
	}
	replacing := replacesIstioCSR(ctx, req, resp)
	caChanged := replacing
	if !replacing {
		var prior types.Object
		caChanged = req.State.GetAttribute(ctx, caPath, &prior).HasError() || !prior.Equal(ca)
	}
	if !replacing && !caChanged {
		return
	}
	client := planClient(ctx, r.Data, cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, istioCSRIssuerReadTimeout)
	defer cancel()
	if served, err := client.Served(ctx, kube.IstioCSR); err != nil || !served {
		return // the apply reports the missing CRD
	}
	if replacing {
		refuseOtherIstioCSR(ctx, client, planned.namespace, replacedNamespace(ctx, req), &resp.Diagnostics)
		checkIstioCSRIssuer(ctx, client, planned, &resp.Diagnostics)
	}
	if caChanged && planned.caCert != nil {
		checkIstioCACertificate(ctx, client, planned, &resp.Diagnostics)
	}
}

// istioCSRPrivateReplaces is the private-state key, in a plan only, that
// carries the namespace of the object a replacement deletes first.
const istioCSRPrivateReplaces = "replaces_namespace"

// recordReplacedNamespace keeps, for the second plan Terraform asks for a
// replacement (with a null prior state, but the first plan's private
// state), which namespace's IstioCSR goes away first, so the check for
// another IstioCSR does not count it.
func recordReplacedNamespace(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() {
		return
	}
	var value []byte
	var ns types.String
	if replacesIstioCSR(ctx, req, resp) && !req.State.GetAttribute(ctx, path.Root("namespace"), &ns).HasError() {
		value, _ = json.Marshal(ns.ValueString())
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, istioCSRPrivateReplaces, value)...)
}

// replacedNamespace is the namespace recordReplacedNamespace kept ("" when
// none): from the prior state, or in the second plan of a replacement
// from the private state.
func replacedNamespace(ctx context.Context, req resource.ModifyPlanRequest) string {
	var ns types.String
	if !req.State.Raw.IsNull() {
		_ = req.State.GetAttribute(ctx, path.Root("namespace"), &ns)
		return ns.ValueString()
	}
	if req.Private == nil {
		return ""
	}
	data, _ := req.Private.GetKey(ctx, istioCSRPrivateReplaces)
	var out string
	if len(data) == 0 || json.Unmarshal(data, &out) != nil {
		return ""
	}
	return out
}

// refuseOtherIstioCSR mirrors utils.go disallowMultipleIstioCSRInstances:
// the operator serves only the oldest IstioCSR of the cluster and rejects
// every newer one for good. The object in ns (replaced in place) and the
// one in priorNS (deleted before the new one is created) do not count; one
// being deleted does not either (the operator lets it go at once).
func refuseOtherIstioCSR(ctx context.Context, client *kube.Client, ns, priorNS string, diags *diag.Diagnostics) {
	items, err := client.List(ctx, kube.IstioCSR, "")
	if err != nil {
		if d, ok := kube.NotCheckedWarning(err, "that no other IstioCSR exists on the cluster (the operator serves one)"); ok {
			diags.Append(d)
		}
		return
	}
	for _, item := range items {
		if item.GetNamespace() == ns || item.GetNamespace() == priorNS || item.GetDeletionTimestamp() != nil {
			continue
		}
		validate.AttributeError(diags, path.Root("namespace"), "Another IstioCSR Exists", fmt.Sprintf(
			"Cluster %q already has the IstioCSR %s/%s. The cert-manager Operator serves only the oldest IstioCSR of a "+
				"cluster (utils.go disallowMultipleIstioCSRInstances): it would reject this one for good (annotation %s, "+
				"never removed) and the apply would fail. Manage the existing IstioCSR (import it), or delete it before "+
				"creating this one.", client.DisplayName(), item.GetNamespace(), item.GetName(), istioCSRRejectAnnotation))
		return
	}
}

// checkIstioCSRIssuer looks the issuer up where the operator does
// (deployments.go getIssuer: an Issuer in istio.namespace, or a
// ClusterIssuer) and refuses what the operator would: an ACME issuer
// (assertIssuerRefExists, irrecoverable), and a CA issuer whose secret is
// not in istio.namespace with a non-empty ca.crt (createCAConfigMapFromIssuerSecret
// reads it there, for a ClusterIssuer too, and retries forever), unless
// istio_ca_certificate is set (the operator then skips the issuer's CA).
func checkIstioCSRIssuer(ctx context.Context, client *kube.Client, planned istioCSRPlanned, diags *diag.Diagnostics) {
	refPath := path.Root("cert_manager").AtName("issuer_ref")
	kind, issuerNS, what := kube.CertManagerIssuer, planned.istioNS, fmt.Sprintf("Issuer %s/%s", planned.istioNS, planned.issuerName)
	if planned.issuerKind == istioCSRIssuerKindClusterIssuer {
		kind, issuerNS, what = kube.CertManagerClusterIssuer, "", "ClusterIssuer "+planned.issuerName
	} else if planned.issuerKind != istioCSRIssuerKindIssuer {
		return // the kind's own validator reports it
	}
	issuer, err := client.Get(ctx, kind, issuerNS, planned.issuerName)
	switch {
	case kube.IsNotFound(err):
		detail := fmt.Sprintf("The cert-manager %s does not exist on cluster %q. ", what, client.DisplayName())
		if kind == kube.CertManagerIssuer {
			detail = fmt.Sprintf("The cert-manager Issuer %q does not exist in the namespace %q (istio.namespace) on cluster %q. "+
				"The cert-manager Operator looks an issuer of kind Issuer up in the Istio control plane's namespace, not "+
				"in the IstioCSR's. Until it exists there, the operator retries and the apply waits until its timeout. "+
				"Create it in %q (or let this resource depend on what creates it), or name a ClusterIssuer.",
				planned.issuerName, planned.istioNS, client.DisplayName(), planned.istioNS)
			if planned.namespace != planned.istioNS {
				if _, err := client.Get(ctx, kube.CertManagerIssuer, planned.namespace, planned.issuerName); err == nil {
					detail += fmt.Sprintf(" An Issuer %q exists in the IstioCSR's namespace %q: the operator does not use it.",
						planned.issuerName, planned.namespace)
				}
			}
		} else {
			detail += "Until it exists, the operator retries and the apply waits until its timeout. Create it (or let " +
				"this resource depend on what creates it)."
		}
		diags.AddAttributeWarning(refPath.AtName("name"), "Issuer Not Found", detail)
		return
	case err != nil:
		if d, ok := kube.NotCheckedWarning(err, "that the cert-manager "+what+" exists and is not an ACME issuer"); ok {
			diags.Append(d)
		}
		return
	}
	spec, _ := objMap(issuer.Object, "spec")
	if _, acme := spec["acme"]; acme {
		validate.AttributeError(diags, refPath.AtName("name"), "ACME Issuer Not Supported", fmt.Sprintf(
			"The cert-manager %s on cluster %q is an ACME issuer. The cert-manager Operator refuses ACME issuers for "+
				"istio-csr (deployments.go assertIssuerRefExists: \"uses unsupported ACME issuer\"), an error it does not "+
				"retry, and issuer_ref cannot change on the object. Name a CA, Vault or other non-ACME issuer.", what, client.DisplayName()))
		return
	}
	caSpec, _ := objMap(spec, "ca")
	secretName := objText(caSpec["secretName"])
	if secretName == "" || planned.caCert != nil {
		return
	}
	secret, err := client.Get(ctx, kube.Secret, planned.istioNS, secretName)
	problem := ""
	switch {
	case kube.IsNotFound(err):
		problem = "does not exist"
	case err != nil:
		if d, ok := kube.NotCheckedWarning(err, fmt.Sprintf("that the CA Secret %s/%s of the %s holds ca.crt", planned.istioNS, secretName, what)); ok {
			diags.Append(d)
		}
		return
	default:
		if data, _ := objMap(secret.Object, "data"); objText(data["ca.crt"]) == "" {
			problem = "has no ca.crt (a Secret holding only tls.crt and tls.key is not enough)"
		}
	}
	if problem == "" {
		return
	}
	detail := fmt.Sprintf("The %s is a CA issuer whose secret %q the cert-manager Operator reads in istio.namespace %q "+
		"(deployments.go createCAConfigMapFromIssuerSecret, also for a ClusterIssuer), and the Secret %s/%s %s there. "+
		"The operator would retry forever and the apply would wait until its timeout. ",
		what, secretName, planned.istioNS, planned.istioNS, secretName, problem)
	if kind == kube.CertManagerClusterIssuer {
		detail += "A ClusterIssuer's secret usually lives in cert-manager's cluster resource namespace: set " +
			"cert_manager.istio_ca_certificate to a ConfigMap holding the CA certificate instead, or copy the Secret " +
			"(with ca.crt) into istio.namespace."
	} else {
		detail += "Create the Secret with a ca.crt key, or set cert_manager.istio_ca_certificate."
	}
	validate.AttributeError(diags, refPath.AtName("name"), "CA Issuer Secret Not Usable", detail)
}

// checkIstioCACertificate mirrors deployments.go handleUserProvidedCA: the
// ConfigMap (in the IstioCSR's namespace unless namespace is set) must
// exist, hold key, and its first PEM block must be a CA certificate that
// may sign certificates. Each failure is irrecoverable for the operator,
// and a ConfigMap created later does not even wake it.
func checkIstioCACertificate(ctx context.Context, client *kube.Client, planned istioCSRPlanned, diags *diag.Diagnostics) {
	caPath := path.Root("cert_manager").AtName("istio_ca_certificate")
	ns := planned.caCert.Namespace.ValueString()
	if ns == "" {
		ns = planned.namespace
	}
	name, key := planned.caCert.Name.ValueString(), planned.caCert.Key.ValueString()
	cm, err := client.Get(ctx, kube.ConfigMap, ns, name)
	switch {
	case kube.IsNotFound(err):
		validate.AttributeError(diags, caPath.AtName("name"), "CA Certificate ConfigMap Not Found", fmt.Sprintf(
			"The ConfigMap %s/%s does not exist on cluster %q (unset, namespace means the IstioCSR's namespace %q). The "+
				"cert-manager Operator reads it once, before it watches it (deployments.go handleUserProvidedCA): a "+
				"missing ConfigMap is an error it does not retry, even after the ConfigMap appears. Create it first, and "+
				"reference its attributes so Terraform creates it before this resource.",
			ns, name, client.DisplayName(), planned.namespace))
		return
	case err != nil:
		if d, ok := kube.NotCheckedWarning(err, fmt.Sprintf("that the ConfigMap %s/%s holds a CA certificate", ns, name)); ok {
			diags.Append(d)
		}
		return
	}
	data, _ := objMap(cm.Object, "data")
	pemText, ok := data[key].(string)
	if !ok {
		validate.AttributeError(diags, caPath.AtName("key"), "CA Certificate Key Not Found", fmt.Sprintf(
			"The ConfigMap %s/%s on cluster %q has no key %q. The cert-manager Operator reports this as an error it does "+
				"not retry until the ConfigMap changes (deployments.go handleUserProvidedCA).", ns, name, client.DisplayName(), key))
		return
	}
	if problem := caCertificateProblem(pemText); problem != "" {
		validate.AttributeError(diags, caPath.AtName("key"), "Not A CA Certificate", fmt.Sprintf(
			"The key %q of the ConfigMap %s/%s on cluster %q must start with a PEM CA certificate that may sign "+
				"certificates, as the cert-manager Operator checks (deployments.go handleUserProvidedCA, validatePEMData): "+
				"%s.", key, ns, name, client.DisplayName(), problem))
	}
}

// caCertificateProblem applies the operator's validatePEMData to the first
// PEM block: a CERTIFICATE that parses, with basic constraints, CA, and the
// cert-sign key usage. It returns "" when the block passes.
func caCertificateProblem(text string) string {
	block, _ := pem.Decode([]byte(text))
	switch {
	case strings.TrimSpace(text) == "":
		return "the value is empty"
	case block == nil:
		return "the value is not PEM"
	case block.Type != "CERTIFICATE":
		return fmt.Sprintf("the first PEM block is a %s, not a CERTIFICATE", block.Type)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	switch {
	case err != nil:
		return "the certificate does not parse: " + err.Error()
	case !cert.BasicConstraintsValid || !cert.IsCA:
		return "the certificate is not a CA certificate (basic constraints CA:TRUE)"
	case cert.KeyUsage&x509.KeyUsageCertSign == 0:
		return "the certificate's key usage lacks certificate signing"
	}
	return ""
}

// istioCSROutputs are the attributes only the cluster sets.
var istioCSROutputs = []string{"grpc_endpoint", "image", "service_account", "cluster_role", "cluster_role_binding", "conditions"}

// keepUnchangedIstioCSR plans the prior state when every attribute the
// provider sends is planned as it is. Terraform proposes null for an unset
// Optional+Computed attribute whose prior value holds fields that are not
// computed (an imported list of tolerations, say), inferring they came from
// the configuration; the framework then marks every computed value unknown,
// and although the attribute's plan modifier plans the prior value back,
// the unknown status values alone would show an update that changes nothing.
func keepUnchangedIstioCSR(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() || resp.Plan.Raw.Equal(req.State.Raw) {
		return
	}
	candidate := resp.Plan
	for _, name := range append([]string{"id"}, istioCSROutputs...) {
		p := path.Root(name)
		if name == "conditions" {
			var v types.Map
			if req.State.GetAttribute(ctx, p, &v).HasError() || candidate.SetAttribute(ctx, p, v).HasError() {
				return
			}
			continue
		}
		var v types.String
		if req.State.GetAttribute(ctx, p, &v).HasError() || candidate.SetAttribute(ctx, p, v).HasError() {
			return
		}
	}
	if candidate.Raw.Equal(req.State.Raw) {
		resp.Plan = candidate
	}
}

// stringOrDefault reads a string attribute, plain or of a custom string
// type (the durations).
func stringOrDefault(v attr.Value, def string) (string, bool) {
	var s types.String
	valuable, ok := v.(basetypes.StringValuable)
	if ok {
		var d diag.Diagnostics
		s, d = valuable.ToStringValue(context.Background())
		ok = !d.HasError()
	}
	switch {
	case !ok || s.IsNull():
		return def, true
	case s.IsUnknown():
		return "", false
	}
	return s.ValueString(), true
}

func int64OrDefault(v attr.Value, def int64) (int64, bool) {
	i, ok := v.(types.Int64)
	switch {
	case !ok || i.IsNull():
		return def, true
	case i.IsUnknown():
		return 0, false
	}
	return i.ValueInt64(), true
}

func joinInt64s(values []int64) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = fmt.Sprint(v)
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// The CRD's rule for these fields is `oldSelf == 0 || self == oldSelf` (or
// `oldSelf == ”`): a value may be set where there was none (an object made
// without the field, then imported), but never changed once set.
const replaceOnceSetDescription = "Changing the value once it is set replaces the object."

func replaceOnceSetInt64() planmodifier.Int64 {
	return int64planmodifier.RequiresReplaceIf(func(_ context.Context, req planmodifier.Int64Request, resp *int64planmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = !req.StateValue.IsNull() && !req.StateValue.IsUnknown() && req.StateValue.ValueInt64() != 0
	}, replaceOnceSetDescription, replaceOnceSetDescription)
}

func replaceOnceSetString() planmodifier.String {
	return stringplanmodifier.RequiresReplaceIf(func(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = !req.StateValue.IsNull() && !req.StateValue.IsUnknown() && req.StateValue.ValueString() != ""
	}, replaceOnceSetDescription, replaceOnceSetDescription)
}
