package resources

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/domainverification"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

var (
	_ resource.ResourceWithConfigure   = (*domainVerificationResource)(nil)
	_ resource.ResourceWithImportState = (*domainVerificationResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*domainVerificationResource)(nil)
	_ resource.ResourceWithIdentity    = (*domainVerificationResource)(nil)
)

// domainVerificationIdentity: DomainVerifications are cluster-scoped, so
// cluster and name identify one.
var domainVerificationIdentity = identityShape{}

const (
	defaultTokenTimeout = 5 * time.Minute
	tokenPollInterval   = 500 * time.Millisecond
)

// NewDomainVerificationResource manages a Kuadrant DomainVerification.
func NewDomainVerificationResource() resource.Resource {
	return &domainVerificationResource{}
}

type domainVerificationResource struct {
	providerdata.ResourceBase
}

func (r *domainVerificationResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_domain_verification"
}

func (r *domainVerificationResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = domainVerificationSchema(ctx)
}

func (r *domainVerificationResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	domainVerificationIdentity.respond(resp)
}

func (r *domainVerificationResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan domainVerificationResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	wait, diags := plan.Timeouts.Create(ctx, defaultTokenTimeout)
	resp.Diagnostics.Append(diags...)
	client := r.Data.Client(plan.Cluster, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || client == nil {
		return
	}
	kind := domainverification.Kind(plan.APIVersion.ValueString())
	name, domain := plan.Name.ValueString(), plan.Domain.ValueString()

	// Adopting an object someone else made would hand this configuration
	// their token and, on destroy, delete their verification.
	existing, err := client.Get(ctx, kind, "", name)
	switch {
	case err == nil && !adoptGuard(existing, client.FieldManager, path.Root("name"),
		fmt.Sprintf("A DomainVerification named %q (domain %q) already exists on cluster %q and was not created by "+
			"this provider. Import it (terraform import ... %s) or choose another name.",
			name, domainverification.Domain(existing), client.DisplayName(), resourceID(clusterValue(client.Name), name)),
		&resp.Diagnostics):
		return
	case err == nil && domainverification.Domain(existing) != domain:
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Object Already Exists",
			fmt.Sprintf("DomainVerification %q on cluster %q verifies %q, not %q, and its domain cannot change. "+
				"Choose another name, or delete that object first.", name, client.DisplayName(), domainverification.Domain(existing), domain))
		return
	case err != nil && !kube.IsNotFound(err):
		resp.Diagnostics.Append(kube.Diagnostic(err, "check for an existing DomainVerification "+name))
		return
	}

	out, err := client.Apply(ctx, kind, domainverification.Object(name, domain), plan.ForceConflicts.ValueBool())
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "create the DomainVerification "+name))
		return
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
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	resp.Diagnostics.Append(domainVerificationID(plan).set(ctx, domainVerificationIdentity, resp.Identity)...)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			resp.Diagnostics.AddError("Timed Out Waiting For Domain Verification Token",
				fmt.Sprintf("DomainVerification %q on cluster %q has no status.token after %s. The token is issued by "+
					"the controller: check that %s is installed and running and watches %s objects, or raise "+
					"timeouts.create. The object was created; the next apply replaces it.",
					name, client.DisplayName(), wait, kind.ProvidedBy, kind.APIVersion()))
			return
		}
		resp.Diagnostics.Append(kube.Diagnostic(err, "wait for the token of DomainVerification "+name))
	}
}

func (r *domainVerificationResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state domainVerificationResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client := r.Data.ReadClient(state.Cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	obj, err := client.Get(ctx, domainverification.Kind(state.APIVersion.ValueString()), "", state.Name.ValueString())
	if kube.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "read the DomainVerification "+state.Name.ValueString()))
		return
	}
	setDomainVerificationFromObject(&state, obj)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	resp.Diagnostics.Append(domainVerificationID(state).set(ctx, domainVerificationIdentity, resp.Identity)...)
}

func (r *domainVerificationResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan domainVerificationResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client := r.Data.Client(plan.Cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	name := plan.Name.ValueString()
	out, err := client.Apply(ctx, domainverification.Kind(plan.APIVersion.ValueString()),
		domainverification.Object(name, plan.Domain.ValueString()), plan.ForceConflicts.ValueBool())
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "update the DomainVerification "+name))
		return
	}
	setDomainVerificationFromObject(&plan, out)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	resp.Diagnostics.Append(domainVerificationID(plan).set(ctx, domainVerificationIdentity, resp.Identity)...)
}

func (r *domainVerificationResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state domainVerificationResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client := r.Data.Client(state.Cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	err := client.Delete(ctx, domainverification.Kind(state.APIVersion.ValueString()), "", state.Name.ValueString())
	if err != nil && !kube.IsCRDNotInstalled(err) {
		resp.Diagnostics.Append(kube.Diagnostic(err, "delete the DomainVerification "+state.Name.ValueString()))
	}
}

// ImportState takes `[<cluster>/]<name>` or an identity; Read then
// refreshes what the import stored.
func (r *domainVerificationResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, ok := importTarget(ctx, r.Data, domainVerificationIdentity, req, &resp.Diagnostics,
		`"<name>" (default connection) or "<cluster>/<name>"`, parseClusterScopedID)
	if !ok {
		return
	}
	cluster := clusterValue(id.Cluster)
	client := r.Data.Client(cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	obj, err := client.Get(ctx, kube.DomainVerificationV1, "", id.Name)
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "import the DomainVerification "+id.Name))
		return
	}
	state := domainVerificationStateFromObject(cluster, obj)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	resp.Diagnostics.Append(domainVerificationID(state).set(ctx, domainVerificationIdentity, resp.Identity)...)
}
