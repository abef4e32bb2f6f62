package resources

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
)

var (
	_ resource.ResourceWithConfigure      = (*istioCSRResource)(nil)
	_ resource.ResourceWithIdentity       = (*istioCSRResource)(nil)
	_ resource.ResourceWithImportState    = (*istioCSRResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*istioCSRResource)(nil)
	_ resource.ResourceWithValidateConfig = (*istioCSRResource)(nil)
)

const (
	istioCSRDefaultTimeout = 10 * time.Minute
	// istioCSRPollInterval paces the wait for the operator's conditions.
	istioCSRPollInterval = 500 * time.Millisecond
)

// istioCSRType: the IstioCSR is namespaced, and always named "default", so
// its import ID is the namespace.
var istioCSRType = &kubeType[istioCSRResourceModel]{
	typeInfo: &typeInfo{
		name:  typename.IstioCSR,
		kinds: []kube.Kind{kube.IstioCSR},
		shape: identityShape{namespaced: true},
		importID: importIDForm{namespaced: true, fixedName: istioCSRName, note: ": the namespace of the IstioCSR \"" + istioCSRName + "\"",
			wrongName: "An IstioCSR is always named \"" + istioCSRName + "\" (the CRD accepts no other name); the identity names %q."},
		planChecks: []string{
			"that no other IstioCSR exists on the cluster (the operator serves one)",
			"that the cert-manager issuer exists and is not an ACME issuer",
			"that the CA Secret of the issuer holds ca.crt",
			"that the CA ConfigMap of ca_certificate holds a CA certificate",
		},
	},
	ref: func(m *istioCSRResourceModel) modelRef {
		return modelRef{id: &m.ID, cluster: m.Cluster, namespace: m.Namespace, name: types.StringNull()}
	},
	fromObject: func(ctx context.Context, cluster types.String, obj *unstructured.Unstructured, _ *kube.Client) (istioCSRResourceModel, diag.Diagnostics) {
		return istioCSRStateFromObject(ctx, cluster, obj)
	},
	refresh: setIstioCSRFromObject,
	readWhat: func(m istioCSRResourceModel, _ string) string {
		return "the IstioCSR " + m.Namespace.ValueString() + "/" + istioCSRName
	},
	afterRead:   recordIstioCSROwnership,
	afterImport: recordIstioCSROwnership,
	deleting:    deleteIstioCSR,
}

// recordIstioCSROwnership keeps in private state which fields of obj this
// provider's field manager holds (istio_csr_unset.go plans from it).
func recordIstioCSROwnership(ctx context.Context, _ *providerdata.Data, client *kube.Client, _ *istioCSRResourceModel,
	obj *unstructured.Unstructured, private privateSetter,
) diag.Diagnostics {
	return setIstioCSRPrivate(ctx, private, obj, client.FieldManager)
}

// NewIstioCSRResource manages the IstioCSR of the cert-manager Operator.
func NewIstioCSRResource() resource.Resource {
	return &istioCSRResource{kubeResource[istioCSRResourceModel]{kubeType: istioCSRType}}
}

type istioCSRResource struct {
	kubeResource[istioCSRResourceModel]
}

func (r *istioCSRResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	plan, client := r.applying(ctx, req.Plan, &resp.Diagnostics)
	if client == nil {
		return
	}
	var config istioCSRResourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	timeout, d := plan.Timeouts.Create(ctx, istioCSRDefaultTimeout)
	if resp.Diagnostics.Append(d...); resp.Diagnostics.HasError() {
		return
	}
	// Taking over an IstioCSR someone else created would silently rewrite its
	// configuration; it has to be imported instead.
	existing, ok := r.refuseForeign(ctx, client, &plan, path.Root("namespace"), "or delete it first", &resp.Diagnostics)
	if !ok {
		return
	}
	// What the plan could only warn about (an earlier resource of this
	// apply may have created it) is refused now, before anything is written.
	if refuseUnusableIstioCA(ctx, client, &plan, true, &resp.Diagnostics); resp.Diagnostics.HasError() {
		return
	}

	r.apply(ctx, client, &plan, &config, timeout, "create", existing, &resp.State, resp.Identity, resp.Private, &resp.Diagnostics)
}

func (r *istioCSRResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	plan, client := r.applying(ctx, req.Plan, &resp.Diagnostics)
	if client == nil {
		return
	}
	var config istioCSRResourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	timeout, d := plan.Timeouts.Update(ctx, istioCSRDefaultTimeout)
	if resp.Diagnostics.Append(d...); resp.Diagnostics.HasError() {
		return
	}
	ns := plan.Namespace.ValueString()
	live, err := client.Get(ctx, kube.IstioCSR, ns, istioCSRName)
	switch {
	case kube.IsNotFound(err):
		live = nil
	case err != nil:
		resp.Diagnostics.Append(istioCSRDiagnostic(err, "update the IstioCSR "+ns+"/"+istioCSRName, ns))
		return
	}
	var state istioCSRResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if !resp.Diagnostics.HasError() && istioCACertificateChanged(ctx, &state, &plan) {
		refuseUnusableIstioCA(ctx, client, &plan, false, &resp.Diagnostics)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	r.apply(ctx, client, &plan, &config, timeout, "update", live, &resp.State, resp.Identity, resp.Private, &resp.Diagnostics)
}

// apply sends the configuration, then waits for the operator's verdict
// (istioCSRWait). live is the object before the apply (nil when there is
// none). Once the object is written the state is saved even if the wait
// fails, so Terraform knows the object exists (a failed create is tainted
// and replaced by the next apply).
func (r *istioCSRResource) apply(ctx context.Context, client *kube.Client, plan, config *istioCSRResourceModel, timeout time.Duration,
	verb string, live *unstructured.Unstructured, state *tfsdk.State, identity *tfsdk.ResourceIdentity, private privateSetter, diags *diag.Diagnostics) {
	ns := plan.Namespace.ValueString()
	obj, d := istioCSRObjectFromModel(ctx, config, plan.issuerGroup(ctx, diags))
	diags.Append(d...)
	if diags.HasError() {
		return
	}
	keepLiveSpelling(obj, live)
	releaseIstioCSRResources(obj, live)
	out, err := client.Apply(ctx, kube.IstioCSR, obj, plan.ForceConflicts.ValueBool())
	if kube.IsFieldConflict(err) && istioCSRConflictForced(err) {
		out, err = client.Apply(ctx, kube.IstioCSR, obj, true)
	}
	if err != nil {
		diags.Append(istioCSRDiagnostic(err, verb+" the IstioCSR "+ns+"/"+istioCSRName, ns))
		return
	}

	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	w := &istioCSRWait{client: client, ns: ns, before: live}
	final, werr := w.run(waitCtx)
	if final == nil {
		final = out
	}
	diags.Append(setIstioCSRFromObject(ctx, plan, final)...)
	r.store(ctx, plan, state, identity, diags)
	diags.Append(setIstioCSRPrivate(ctx, private, final, client.FieldManager)...)

	var degraded *istioCSRDegradedError
	var rejected *istioCSRRejectedError
	switch {
	case werr == nil:
	case errors.As(werr, &rejected):
		diags.AddError("IstioCSR Rejected", fmt.Sprintf(
			"The cert-manager Operator rejected the IstioCSR %s/%s on cluster %q: %s\n\nThe operator serves only the "+
				"oldest IstioCSR of a cluster (utils.go disallowMultipleIstioCSRInstances) and marks the others with the "+
				"annotation %s, which it checks first and never removes: this object will not be served even after the "+
				"other IstioCSR is gone. Delete the other IstioCSR (or manage that one instead), then let Terraform delete "+
				"and recreate this one (a failed create is tainted, so the next apply recreates it; otherwise use "+
				"terraform apply -replace).",
			ns, istioCSRName, client.DisplayName(), rejected.message, istioCSRRejectAnnotation))
	case errors.As(werr, &degraded):
		diags.AddError("IstioCSR Degraded", fmt.Sprintf(
			"The cert-manager Operator reports the IstioCSR %s/%s on cluster %q as Degraded: an error it does not retry "+
				"until the object changes, so it has not rolled out this change. Its conditions:%s\n\n%s The operator "+
				"tries again only when the IstioCSR changes: correct this resource's configuration (for example point "+
				"istio_ca_certificate at a ConfigMap that holds the CA) and apply again; when the cause lies outside it "+
				"(the issuer, the ConfigMap's content), fix that and then apply a change of this resource. A fixed "+
				"issuer_ref replaces the object.",
			ns, istioCSRName, client.DisplayName(), describeConditions(final), istioCSRKept(verb)))
	case waitCtx.Err() != nil && ctx.Err() == nil:
		diags.AddError("IstioCSR Not Ready", fmt.Sprintf(
			"The IstioCSR %s/%s on cluster %q was not ready within %s: still waiting for %s. Its conditions:%s\n\n"+
				"Ready here means the operator reports Ready=True, the agent's Deployment is available and cert-manager "+
				"has issued istiod's Certificate with the configured values. Check the cert-manager Operator (istio-csr "+
				"support must be enabled), cert-manager and the issuer, or give them more time with a timeouts block.",
			ns, istioCSRName, client.DisplayName(), timeout, strings.Join(w.pending, "; "), describeConditions(final)))
	default:
		diags.Append(istioCSRDiagnostic(werr, "wait for the IstioCSR "+ns+"/"+istioCSRName+" to become ready", ns))
	}
}

// istioCSRKept says what a failed apply of verb leaves: Terraform taints a
// create that fails with a state (the next apply replaces it, which for an
// object that never served removes nothing that worked), never an update,
// whose state is what the cluster holds.
func istioCSRKept(verb string) string {
	if verb == "create" {
		return "Terraform saved what it wrote, marked tainted: the next apply replaces it."
	}
	return "Terraform saved what it wrote, which is what the cluster holds; a failed update is not tainted, so " +
		"nothing is replaced and the agent keeps serving with the configuration it had."
}

// deleteIstioCSR is the descriptor's deleting: it removes the object,
// waits until it is gone (a replacement must not find the old object still
// terminating: the operator would count it and reject the new one for
// good), then deletes what the operator created for it
// (cleanUpIstioCSROperands), which the operator leaves running.
func deleteIstioCSR(ctx context.Context, _ *kubeResource[istioCSRResourceModel], client *kube.Client, state istioCSRResourceModel,
	diags *diag.Diagnostics,
) {
	timeout, d := state.Timeouts.Delete(ctx, istioCSRDefaultTimeout)
	if diags.Append(d...); diags.HasError() {
		return
	}
	ns := state.Namespace.ValueString()
	istioNS := ""
	if istio, ok := objectAs[istioCSRIstioModel](ctx, state.Istio, diags); ok {
		istioNS = istio.Namespace.ValueString()
	}
	obj, err := client.Get(ctx, kube.IstioCSR, ns, istioCSRName)
	switch {
	case kube.IsCRDNotInstalled(err):
		return
	case kube.IsNotFound(err):
		obj = nil
	case err != nil:
		diags.Append(kube.Diagnostic(err, "read the IstioCSR "+ns+"/"+istioCSRName+" before deleting it"))
		return
	default:
		if v, _, _ := unstructured.NestedString(obj.Object, "spec", "istioCSRConfig", "istio", "namespace"); v != "" {
			istioNS = v
		}
	}
	if obj != nil {
		if err := client.Delete(ctx, kube.IstioCSR, ns, istioCSRName); err != nil {
			diags.Append(kube.Diagnostic(err, "delete the IstioCSR "+ns+"/"+istioCSRName))
			return
		}
	}
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var getErr error
	werr := wait.PollUntilContextCancel(waitCtx, istioCSRPollInterval, true, func(ctx context.Context) (bool, error) {
		_, getErr = client.Get(ctx, kube.IstioCSR, ns, istioCSRName)
		switch {
		case kube.IsNotFound(getErr):
			return true, nil
		case getErr != nil && ctx.Err() == nil:
			return false, getErr
		}
		return false, nil
	})
	switch {
	case werr == nil:
	case getErr != nil && waitCtx.Err() == nil:
		diags.Append(kube.Diagnostic(getErr, "wait for the IstioCSR "+ns+"/"+istioCSRName+" to be deleted"))
		return
	default:
		diags.AddError("IstioCSR Not Deleted", fmt.Sprintf(
			"The IstioCSR %s/%s on cluster %q still exists %s after it was deleted: a finalizer of the cert-manager "+
				"Operator is holding it. Check that the operator is running.", ns, istioCSRName, client.DisplayName(), timeout))
		return
	}
	// A rejected IstioCSR created nothing: what carries its labels in
	// istio.namespace is none of its business (the selectors would not
	// match the winner's objects either, but nothing is the safest answer).
	if isIstioCSRRejected(obj) {
		return
	}
	diags.Append(cleanUpIstioCSROperands(ctx, client, ns, istioNS)...)
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
