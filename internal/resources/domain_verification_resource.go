package resources

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/domainverification"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
)

var (
	_ resource.ResourceWithConfigure   = (*domainVerificationResource)(nil)
	_ resource.ResourceWithImportState = (*domainVerificationResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*domainVerificationResource)(nil)
	_ resource.ResourceWithIdentity    = (*domainVerificationResource)(nil)
)

// domainVerificationType: DomainVerifications are cluster-scoped, so
// cluster and name identify one.
var domainVerificationType = &kubeType[domainVerificationResourceModel]{
	typeInfo: &typeInfo{
		name:  typename.DomainVerification,
		kinds: []kube.Kind{kube.DomainVerificationV1},
		planChecks: []string{
			"which existing DomainVerification adopt_existing adopts, and whether an object of the same name was written by another field manager",
		},
	},
	ref: func(m *domainVerificationResourceModel) modelRef {
		return modelRef{id: &m.ID, cluster: m.Cluster, name: m.Name}
	},
	kindOf: func(m domainVerificationResourceModel) kube.Kind {
		return domainverification.Kind(m.APIVersion.ValueString())
	},
	fromObject: func(_ context.Context, cluster types.String, obj *unstructured.Unstructured, client *kube.Client) (domainVerificationResourceModel, diag.Diagnostics) {
		return domainVerificationStateFromObject(cluster, obj, client.FieldManager), nil
	},
	refresh: func(_ context.Context, m *domainVerificationResourceModel, obj *unstructured.Unstructured) diag.Diagnostics {
		setDomainVerificationFromObject(m, obj)
		return nil
	},
	readWhat: func(m domainVerificationResourceModel, _ string) string {
		return "the DomainVerification " + m.Name.ValueString()
	},
	completing: completeDomainVerification,
	// An adopted object is Kuadrant's, as it is: the plan does not refuse
	// one a Helm release owns (checkExistingDV judges what it adopts).
	mayAdopt: func(m domainVerificationResourceModel) bool { return !m.Adopted.Equal(types.BoolValue(false)) },
	deleting: deleteDomainVerification,
}

const (
	defaultTokenTimeout = 5 * time.Minute
	tokenPollInterval   = 500 * time.Millisecond
)

// NewDomainVerificationResource manages a Kuadrant DomainVerification.
func NewDomainVerificationResource() resource.Resource {
	return &domainVerificationResource{kubeResource[domainVerificationResourceModel]{kubeType: domainVerificationType}}
}

type domainVerificationResource struct {
	kubeResource[domainVerificationResourceModel]
}

func (r *domainVerificationResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = domainVerificationSchema(ctx)
}

func (r *domainVerificationResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	plan, client := r.applying(ctx, req.Plan, &resp.Diagnostics)
	if client == nil {
		return
	}
	wait, diags := plan.Timeouts.Create(ctx, defaultTokenTimeout)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	kind := domainverification.Kind(plan.APIVersion.ValueString())
	name, domain := plan.Name.ValueString(), plan.Domain.ValueString()

	// An object that exists already is this provider's own (a create whose
	// response never reached the state), or another manager's: adopted with
	// adopt_existing, refused otherwise.
	out, err := client.Get(ctx, kind, "", name)
	switch {
	case err == nil:
		checkExistingDV(out, client, plan, &resp.Diagnostics)
		if resp.Diagnostics.HasError() {
			return
		}
	case !kube.IsNotFound(err):
		resp.Diagnostics.Append(kube.Diagnostic(err, "check for an existing DomainVerification "+name))
		return
	}
	adopted := err == nil && !applier(client.FieldManager).wrote(out)
	if !plan.Adopted.IsUnknown() && plan.Adopted.ValueBool() != adopted {
		planned, found := "creating", "exists, made by another manager"
		if plan.Adopted.ValueBool() {
			planned, found = "adopting", "no longer exists"
		}
		resp.Diagnostics.AddError("DomainVerification Changed Since Plan", fmt.Sprintf(
			"The plan was made for %s DomainVerification %q on cluster %q, but at apply it %s. Nothing was "+
				"written; run the plan again.", planned, name, client.DisplayName(), found))
		return
	}
	if !adopted {
		out, err = client.Apply(ctx, kind, domainverification.Object(name, domain), plan.ForceConflicts.ValueBool())
		if err != nil {
			resp.Diagnostics.Append(kube.Diagnostic(err, "create the DomainVerification "+name))
			return
		}
	}
	plan.Adopted = types.BoolValue(adopted)
	outcome := "created"
	if adopted {
		outcome = "adopted"
	}
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	obj, err := client.WaitFor(waitCtx, kind, "", name, tokenPollInterval, func(o *unstructured.Unstructured) (bool, error) {
		return domainverification.StatusOf(o).Token != "", nil
	})
	if obj != nil {
		out = obj
	}
	setDomainVerificationFromObject(&plan, out)
	// Saved even on failure: the object exists, and Terraform marks the
	// resource tainted so the next apply replaces it.
	r.store(ctx, &plan, &resp.State, resp.Identity, &resp.Diagnostics)
	if err != nil {
		// A request the client's rate limiter refused because it would end
		// after the deadline is the wait running out too.
		deadline, _ := waitCtx.Deadline()
		ranOut := errors.Is(err, context.DeadlineExceeded) || time.Until(deadline) < tokenPollInterval
		if ranOut && ctx.Err() == nil {
			resp.Diagnostics.AddError("Timed Out Waiting For Domain Verification Token",
				fmt.Sprintf("DomainVerification %q on cluster %q has no status.token after %s. The token is issued by "+
					"the controller: check that %s is installed and running and watches %s objects, or raise "+
					"timeouts.create. The object was %s; the next apply replaces the resource.",
					name, client.DisplayName(), wait, kind.ProvidedBy, kind.APIVersion(), outcome))
			return
		}
		resp.Diagnostics.Append(kube.Diagnostic(err, "wait for the token of DomainVerification "+name))
	}
}

func (r *domainVerificationResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	plan, client := r.applying(ctx, req.Plan, &resp.Diagnostics)
	if client == nil {
		return
	}
	name, kind := plan.Name.ValueString(), domainverification.Kind(plan.APIVersion.ValueString())
	var out *unstructured.Unstructured
	var err error
	if plan.Adopted.ValueBool() {
		// Nothing to write: an adopted object is read in its new API version.
		out, err = client.Get(ctx, kind, "", name)
	} else {
		out, err = client.Apply(ctx, kind, domainverification.Object(name, plan.Domain.ValueString()), plan.ForceConflicts.ValueBool())
	}
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "update the DomainVerification "+name))
		return
	}
	setDomainVerificationFromObject(&plan, out)
	r.store(ctx, &plan, &resp.State, resp.Identity, &resp.Diagnostics)
}

// deleteDomainVerification is the descriptor's deleting: an adopted object
// stays (releaseAdoptedDV), this provider's own is deleted.
func deleteDomainVerification(ctx context.Context, r *kubeResource[domainVerificationResourceModel], client *kube.Client,
	state domainVerificationResourceModel, diags *diag.Diagnostics,
) {
	if state.Adopted.ValueBool() {
		releaseAdoptedDV(ctx, client, domainverification.Kind(state.APIVersion.ValueString()), state.Name.ValueString(), diags)
		return
	}
	r.deleteObject(ctx, client, state, diags)
}

// releaseAdoptedDV is the destroy of an adopted object: it stays, for the
// webhook and controller that own it; only fields this provider's field
// manager may hold (it never writes an adopted object, but another version
// of it may have) are given back.
func releaseAdoptedDV(ctx context.Context, client *kube.Client, kind kube.Kind, name string, diags *diag.Diagnostics) {
	obj, err := client.Get(ctx, kind, "", name)
	if kube.IsNotFound(err) || kube.IsCRDNotInstalled(err) {
		return
	}
	if err != nil {
		diags.Append(kube.Diagnostic(err, "release the DomainVerification "+name))
		return
	}
	if !applier(client.FieldManager).wrote(obj) {
		return
	}
	release := &unstructured.Unstructured{Object: map[string]any{}}
	release.SetName(name)
	release.SetUID(obj.GetUID())
	if _, err := client.Apply(ctx, kind, release, false); err != nil && !kube.IsNotFound(err) {
		diags.Append(kube.Diagnostic(err, "release the fields of DomainVerification "+name))
	}
}
