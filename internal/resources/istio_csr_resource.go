package resources

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

var (
	_ resource.ResourceWithConfigure      = (*istioCSRResource)(nil)
	_ resource.ResourceWithImportState    = (*istioCSRResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*istioCSRResource)(nil)
	_ resource.ResourceWithValidateConfig = (*istioCSRResource)(nil)
)

const (
	istioCSRDefaultTimeout = 10 * time.Minute
	// istioCSRPollInterval paces the wait for the operator's conditions.
	istioCSRPollInterval = 500 * time.Millisecond
)

// NewIstioCSRResource manages the IstioCSR of the cert-manager Operator.
func NewIstioCSRResource() resource.Resource {
	return &istioCSRResource{}
}

type istioCSRResource struct {
	providerdata.ResourceBase
}

func (r *istioCSRResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_istio_csr"
}

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
				errorAt(&resp.Diagnostics, path.Root("resources").AtName("claims").AtListIndex(i).AtName("name"), "Duplicate Resource Claim",
					fmt.Sprintf("The claim %q is listed twice: the CRD keys resources.claims by name.", name.ValueString()))
			}
			seen[name.ValueString()] = true
		}
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
		if !containsInt64(allowed, size) {
			detail := fmt.Sprintf("privateKeySize must match with configured privateKeyAlgorithm: %s keys are %s bits, not %d.",
				algorithm, joinInt64s(allowed), size)
			if v, ok := configured["private_key_size"].(types.Int64); (!ok || v.IsNull()) && size == istioCSRDefaultKeySize {
				detail += fmt.Sprintf(" The size defaults to %d (an RSA size, as in the CRD), so set private_key_size explicitly for %s.",
					istioCSRDefaultKeySize, algorithm)
			}
			errorAt(diags, tlsPath.AtName("private_key_size"), "Key Size Does Not Match Algorithm", detail)
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
		errorAt(diags, tlsPath.AtName("certificate_renew_before"), "Renewal Not Before Expiry", fmt.Sprintf(
			"certificate_renew_before (%s) must be shorter than certificate_duration (%s): otherwise istiod's "+
				"certificate is due for renewal as soon as it is issued. Unset values keep the object's values or take "+
				"the CRD defaults %s and %s.",
			renew, duration, istioCSRDefaultRenewBefore, istioCSRDefaultDuration))
	}
	if duration > limit {
		errorAt(diags, tlsPath.AtName("certificate_duration"), "Certificate Duration Above Maximum", fmt.Sprintf(
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
		errorAt(diags, p.AtName("value"), "Toleration Value With Exists",
			"A toleration with operator Exists matches any value, so value must be unset.")
	}
	if key.IsNull() && !operator.IsUnknown() && operator.ValueString() != "Exists" {
		errorAt(diags, p.AtName("operator"), "Toleration Without Key",
			"A toleration without key tolerates every taint and needs operator = \"Exists\".")
	}
	if !seconds.IsNull() && !effect.IsUnknown() && effect.ValueString() != "NoExecute" {
		errorAt(diags, p.AtName("toleration_seconds"), "Toleration Seconds Without NoExecute",
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
	checkPlannedApply(ctx, r.Data, req, resp, plannedApply{Kind: kube.IstioCSR,
		Outputs: istioCSROutputs,
		Object: func() (*unstructured.Unstructured, bool) {
			// What apply sends: the configuration, with the planned issuer group.
			var plan, config istioCSRResourceModel
			if d := resp.Plan.Get(ctx, &plan); d.HasError() {
				return nil, false
			}
			if d := req.Config.Get(ctx, &config); d.HasError() {
				return nil, false
			}
			group := types.StringValue(istioCSRDefaultIssuerGroup)
			if plan.CertManager != nil && plan.CertManager.IssuerRef != nil {
				group = plan.CertManager.IssuerRef.Group
			}
			obj, err := istioCSRObject(&config, group)
			return obj, err == nil
		}})
}

func (r *istioCSRResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan, config istioCSRResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, istioCSRDefaultTimeout)
	resp.Diagnostics.Append(d...)
	client := r.Data.Client(plan.Cluster, &resp.Diagnostics)
	if client == nil || resp.Diagnostics.HasError() {
		return
	}
	ns := plan.Namespace.ValueString()

	// Taking over an IstioCSR someone else created would silently rewrite its
	// configuration; it has to be imported instead.
	existing, err := client.Get(ctx, kube.IstioCSR, ns, istioCSRName)
	switch {
	case err == nil && !ownedBy(existing, client.FieldManager):
		resp.Diagnostics.AddAttributeError(path.Root("namespace"), "Object Already Exists", fmt.Sprintf(
			"Namespace %q of cluster %q already has the IstioCSR %q, not created by this provider. Import it "+
				"(terraform import ... %s) to manage it, or delete it first.", ns, client.DisplayName(), istioCSRName, importHint(client.Name, ns)))
		return
	case err != nil && !kube.IsNotFound(err):
		resp.Diagnostics.Append(istioCSRDiagnostic(err, "create the IstioCSR "+ns+"/"+istioCSRName, ns))
		return
	}

	r.apply(ctx, client, &plan, &config, timeout, "create", &resp.State, resp.Private, &resp.Diagnostics)
}

func (r *istioCSRResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, config istioCSRResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Update(ctx, istioCSRDefaultTimeout)
	resp.Diagnostics.Append(d...)
	client := r.Data.Client(plan.Cluster, &resp.Diagnostics)
	if client == nil || resp.Diagnostics.HasError() {
		return
	}
	r.apply(ctx, client, &plan, &config, timeout, "update", &resp.State, resp.Private, &resp.Diagnostics)
}

// apply sends the configuration, then waits for the operator to report
// Ready. Once the object is written the state is saved even if the wait
// fails, so Terraform knows the object exists (a failed create is tainted
// and replaced by the next apply).
func (r *istioCSRResource) apply(ctx context.Context, client *kube.Client, plan, config *istioCSRResourceModel, timeout time.Duration,
	verb string, state *tfsdk.State, private istioCSRPrivateSetter, diags *diag.Diagnostics) {
	ns := plan.Namespace.ValueString()
	group := types.StringValue(istioCSRDefaultIssuerGroup)
	if plan.CertManager != nil && plan.CertManager.IssuerRef != nil {
		group = plan.CertManager.IssuerRef.Group
	}
	obj, err := istioCSRObject(config, group)
	if err != nil {
		diags.AddAttributeError(path.Root("affinity"), "Invalid Affinity", err.Error())
		return
	}
	out, err := client.Apply(ctx, kube.IstioCSR, obj, plan.ForceConflicts.ValueBool())
	if err != nil {
		diags.Append(istioCSRDiagnostic(err, verb+" the IstioCSR "+ns+"/"+istioCSRName, ns))
		return
	}

	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	final, werr := client.WaitFor(waitCtx, kube.IstioCSR, ns, istioCSRName, istioCSRPollInterval, istioCSRReady)
	if final == nil {
		final = out
	}
	diags.Append(setIstioCSRFromObject(plan, final)...)
	diags.Append(state.Set(ctx, plan)...)
	diags.Append(setIstioCSRPrivate(ctx, private, final, client.FieldManager)...)

	var degraded *istioCSRDegradedError
	switch {
	case werr == nil:
	case errors.As(werr, &degraded):
		diags.AddError("IstioCSR Degraded", fmt.Sprintf(
			"The cert-manager Operator reports the IstioCSR %s/%s on cluster %q as Degraded, so the istio-csr agent "+
				"is not serving. Its conditions:%s\n\nFix the cause (for example create the issuer that issuer_ref "+
				"names, or correct the configuration) and apply again.",
			ns, istioCSRName, client.DisplayName(), describeConditions(final)))
	case waitCtx.Err() != nil && ctx.Err() == nil:
		diags.AddError("IstioCSR Not Ready", fmt.Sprintf(
			"The IstioCSR %s/%s on cluster %q did not become Ready within %s. Its conditions:%s\n\n"+
				"Check the cert-manager Operator (istio-csr support must be enabled) and the issuer, or give the "+
				"operator more time with a timeouts block.",
			ns, istioCSRName, client.DisplayName(), timeout, describeConditions(final)))
	default:
		diags.Append(istioCSRDiagnostic(werr, "wait for the IstioCSR "+ns+"/"+istioCSRName+" to become Ready", ns))
	}
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

// istioCSRDegradedError stops the wait: the operator gave up on this
// generation of the object.
type istioCSRDegradedError struct{}

func (*istioCSRDegradedError) Error() string { return "the IstioCSR is Degraded" }

// istioCSRReady reports Ready=True for the object's current generation, and
// fails on Degraded=True. Conditions of an older generation (the operator
// has not seen the last change yet) are ignored.
func istioCSRReady(obj *unstructured.Unstructured) (bool, error) {
	generation := obj.GetGeneration()
	items, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	ready := false
	for _, item := range items {
		c, ok := item.(map[string]any)
		if !ok {
			continue
		}
		if observed := objInt64(c, "observedGeneration"); !observed.IsNull() && observed.ValueInt64() != 0 && observed.ValueInt64() < generation {
			continue
		}
		switch {
		case c["type"] == "Degraded" && c["status"] == "True":
			return false, &istioCSRDegradedError{}
		case c["type"] == "Ready" && c["status"] == "True":
			ready = true
		}
	}
	return ready, nil
}

func (r *istioCSRResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state istioCSRResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client := r.Data.ReadClient(state.Cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	ns := state.Namespace.ValueString()
	obj, err := client.Get(ctx, kube.IstioCSR, ns, istioCSRName)
	if kube.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "read the IstioCSR "+ns+"/"+istioCSRName))
		return
	}
	resp.Diagnostics.Append(setIstioCSRFromObject(&state, obj)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	resp.Diagnostics.Append(setIstioCSRPrivate(ctx, resp.Private, obj, client.FieldManager)...)
}

// Delete removes the object and waits until it is gone: the operator tears
// the agent down first (finalizer), and a replacement must not find the old
// object still terminating.
func (r *istioCSRResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state istioCSRResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, istioCSRDefaultTimeout)
	resp.Diagnostics.Append(d...)
	client := r.Data.Client(state.Cluster, &resp.Diagnostics)
	if client == nil || resp.Diagnostics.HasError() {
		return
	}
	ns := state.Namespace.ValueString()
	err := client.Delete(ctx, kube.IstioCSR, ns, istioCSRName)
	if kube.IsCRDNotInstalled(err) {
		return
	}
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "delete the IstioCSR "+ns+"/"+istioCSRName))
		return
	}
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		_, err := client.Get(waitCtx, kube.IstioCSR, ns, istioCSRName)
		if kube.IsNotFound(err) {
			return
		}
		if err != nil && waitCtx.Err() == nil {
			resp.Diagnostics.Append(kube.Diagnostic(err, "wait for the IstioCSR "+ns+"/"+istioCSRName+" to be deleted"))
			return
		}
		select {
		case <-waitCtx.Done():
			resp.Diagnostics.AddError("IstioCSR Not Deleted", fmt.Sprintf(
				"The IstioCSR %s/%s on cluster %q still exists %s after it was deleted: a finalizer of the cert-manager "+
					"Operator is holding it. Check that the operator is running.", ns, istioCSRName, client.DisplayName(), timeout))
			return
		case <-time.After(istioCSRPollInterval):
		}
	}
}

func (r *istioCSRResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	cluster, ns := parseImportID(req.ID)
	if ns == "" {
		resp.Diagnostics.AddError("Invalid Import ID", fmt.Sprintf(
			"Expected \"<namespace>\" (default connection) or \"<cluster>/<namespace>\": the namespace of the IstioCSR "+
				"%q. Got %q.", istioCSRName, req.ID))
		return
	}
	if !cluster.IsNull() && r.Data != nil && !r.Data.CheckCluster(cluster, path.Root("cluster"), &resp.Diagnostics) {
		return
	}
	client := r.Data.Client(cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	obj, err := client.Get(ctx, kube.IstioCSR, ns, istioCSRName)
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "import the IstioCSR "+ns+"/"+istioCSRName))
		return
	}
	state := istioCSRResourceModel{Cluster: cluster, Timeouts: istioCSRTimeoutsNull()}
	resp.Diagnostics.Append(setIstioCSRFromObject(&state, obj)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	resp.Diagnostics.Append(setIstioCSRPrivate(ctx, resp.Private, obj, client.FieldManager)...)
}

// istioCSRDiagnostic explains a missing namespace, which the API server
// reports as a plain 404, before the generic explanations.
func istioCSRDiagnostic(err error, action, namespace string) diag.Diagnostic {
	var status apierrors.APIStatus
	if apierrors.IsNotFound(err) && errors.As(err, &status) && status.Status().Details != nil &&
		status.Status().Details.Kind == "namespaces" {
		return diag.NewAttributeErrorDiagnostic(path.Root("namespace"), "Namespace Not Found", fmt.Sprintf(
			"Could not %s: namespace %q does not exist. Create it first (for example with a kubernetes_namespace "+
				"resource this one depends on).\n\n%v", action, namespace, err))
	}
	return kube.Diagnostic(err, action)
}

func stringOrDefault(v attr.Value, def string) (string, bool) {
	s, ok := v.(types.String)
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

func containsInt64(values []int64, v int64) bool {
	for _, x := range values {
		if x == v {
			return true
		}
	}
	return false
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

// errorAt adds an error for one attribute, naming it in the detail too:
// inside a nested object Terraform can only point at the enclosing block.
func errorAt(diags *diag.Diagnostics, p path.Path, summary, detail string) {
	diags.AddAttributeError(p, summary, "Attribute "+p.String()+": "+detail)
}
