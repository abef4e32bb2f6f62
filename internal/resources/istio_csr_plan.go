package resources

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
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
	planned, _, ok := r.planned(ctx, req, resp)
	if !ok {
		return
	}
	cluster := planned.Cluster
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
				ctx, client, cancel := planLookup(ctx, r.Data, cluster, planApplyTimeout, &diags)
				defer cancel()
				if client != nil {
					if live, err := client.Get(ctx, kube.IstioCSR, obj.GetNamespace(), istioCSRName); err == nil {
						keepLiveSpelling(obj, live)
						releaseIstioCSRResources(obj, live)
					}
				}
			}
			return obj, !diags.HasError() && !d.HasError()
		}})
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
