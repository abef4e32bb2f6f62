package resources

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/domainverification"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

var (
	_ resource.ResourceWithConfigure   = (*domainVerificationResource)(nil)
	_ resource.ResourceWithImportState = (*domainVerificationResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*domainVerificationResource)(nil)
)

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

type domainVerificationResourceModel struct {
	ID             types.String   `tfsdk:"id"`
	Cluster        types.String   `tfsdk:"cluster"`
	Name           types.String   `tfsdk:"name"`
	Domain         types.String   `tfsdk:"domain"`
	APIVersion     types.String   `tfsdk:"api_version"`
	ForceConflicts types.Bool     `tfsdk:"force_conflicts"`
	Token          types.String   `tfsdk:"token"`
	TXTRecordName  types.String   `tfsdk:"txt_record_name"`
	TXTRecordValue types.String   `tfsdk:"txt_record_value"`
	Verified       types.Bool     `tfsdk:"verified"`
	LastChecked    types.String   `tfsdk:"last_checked"`
	Message        types.String   `tfsdk:"message"`
	Timeouts       timeouts.Value `tfsdk:"timeouts"`
}

func (r *domainVerificationResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_domain_verification"
}

func (r *domainVerificationResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	timeoutsBlock := timeouts.Block(ctx, timeouts.Opts{
		Create:            true,
		CreateDescription: "How long to wait for the controller to issue the token (`status.token`). Default `5m`.",
	})
	if b, ok := timeoutsBlock.(schema.SingleNestedBlock); ok {
		b.MarkdownDescription = "How long to wait. Only creation waits: for the controller's token."
		timeoutsBlock = b
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A Kuadrant `DomainVerification` (`kuadrant.dev`, cluster-scoped): asks the Kuadrant " +
			"controller to verify that you control a domain's DNS zone. The controller issues a token; you publish it " +
			"as a TXT record at the domain itself (`txt_record_name`, `txt_record_value`, for example with a DNS " +
			"provider's TXT record resource); the controller then looks the record up and sets `verified`.\n\n" +
			"Creating the resource waits (see `timeouts`) until the token is issued, so the TXT record can be planned " +
			"from it in the same apply. It does not wait for verification, which needs the TXT record first: use the " +
			"`zerotrust_domain_verification` data source with `wait = true` after the record (or in a `check` block).\n\n" +
			"`api_version` selects the API shape: `v1` (status `token`, `verified`, `lastChecked`, `message`) or " +
			"`v1alpha1` (status `token` and a `Verified` condition).",
		Attributes: map[string]schema.Attribute{
			"id":      idAttribute("`<name>` on the default connection, `<cluster>/<name>` otherwise; also the import ID."),
			"cluster": clusterAttribute(),
			"name": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "Object name. Defaults to `domain` (a valid domain is a valid object name). " +
					"Changing it replaces the object.",
				Validators:    []validator.String{validate.K8sName()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIfConfigured(), stringplanmodifier.UseStateForUnknown()},
			},
			"domain": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The domain to verify, such as `apps.example.com`: " + validate.DomainNameRules +
					". The object's `spec.domain` is immutable, so changing it replaces the object (and a new token is issued).",
				Validators:    []validator.String{validate.DomainName()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"api_version": schema.StringAttribute{
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString(domainverification.V1),
				MarkdownDescription: "API version of `kuadrant.dev` DomainVerification to write and read: `v1` " +
					"(default) or `v1alpha1`, whichever the installed controller uses. Changing it updates in place " +
					"(the object is the same; only its representation differs).",
				Validators: []validator.String{stringvalidator.OneOf(domainverification.APIVersions...)},
			},
			"force_conflicts": forceConflictsAttribute(),
			"token": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The token the controller issued (`status.token`).",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"txt_record_name": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Where to publish the TXT record: the domain itself (without a trailing dot). " +
					"Some DNS providers want the name relative to the zone instead.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"txt_record_value": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The value the TXT record must hold: the token.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"verified": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "Whether the controller has verified the domain, as last read (v1 " +
					"`status.verified`, or the v1alpha1 `Verified` condition). Null while the controller has not " +
					"said. Refreshed on every plan; use the data source to wait for it.",
			},
			"last_checked": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "When the controller last looked up the TXT record (RFC 3339; v1 " +
					"`status.lastChecked`, or the v1alpha1 condition's `lastTransitionTime`).",
			},
			"message": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The controller's message about the last check.",
			},
		},
		Blocks: map[string]schema.Block{"timeouts": timeoutsBlock},
	}
}

func (r *domainVerificationResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.Data == nil {
		return
	}
	var plan, config domainVerificationResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !r.Data.CheckCluster(plan.Cluster, path.Root("cluster"), &resp.Diagnostics) {
		return
	}
	if !plan.Domain.IsUnknown() {
		if config.Name.IsNull() {
			plan.Name = types.StringValue(domainverification.DefaultName(plan.Domain.ValueString()))
		}
		plan.TXTRecordName = plan.Domain
	}
	if plan.Name.IsUnknown() {
		plan.ID = types.StringUnknown()
	} else {
		plan.ID = types.StringValue(resourceID(plan.Cluster, plan.Name.ValueString()))
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	checkPlannedApply(ctx, r.Data, req, resp, plannedApply{Kind: domainverification.Kind(plan.APIVersion.ValueString()),
		Outputs: []string{"token", "txt_record_value", "verified", "last_checked", "message"},
		Object: func() (*unstructured.Unstructured, bool) {
			return domainverification.Object(plan.Name.ValueString(), plan.Domain.ValueString()), true
		}})
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
	case err == nil && !ownedBy(existing, client.FieldManager):
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Object Already Exists",
			fmt.Sprintf("A DomainVerification named %q (domain %q) already exists on cluster %q and was not created by "+
				"this provider. Import it (terraform import ... %s) or choose another name.",
				name, domainverification.Domain(existing), client.DisplayName(), importHint(client.Name, name)))
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

// ImportState takes `[<cluster>/]<name>`. The API version is read from the
// object's managed fields (the version its spec was written in); Read then
// fills in the rest.
func (r *domainVerificationResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	cluster, name := parseImportID(req.ID)
	if name == "" {
		resp.Diagnostics.AddError("Invalid Import ID",
			fmt.Sprintf("Expected \"<name>\" (default connection) or \"<cluster>/<name>\", got %q.", req.ID))
		return
	}
	if !cluster.IsNull() && r.Data != nil && !r.Data.CheckCluster(cluster, path.Root("cluster"), &resp.Diagnostics) {
		return
	}
	client := r.Data.Client(cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	obj, err := client.Get(ctx, kube.DomainVerificationV1, "", name)
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "import the DomainVerification "+name))
		return
	}
	set := func(attr string, v any) {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attr), v)...)
	}
	set("id", types.StringValue(resourceID(cluster, name)))
	set("cluster", cluster)
	set("name", types.StringValue(name))
	set("domain", types.StringValue(domainverification.Domain(obj)))
	set("api_version", types.StringValue(domainverification.CreatedWith(obj)))
	set("force_conflicts", types.BoolValue(false))
}

// setDomainVerificationFromObject copies the object's spec and status into
// the model.
func setDomainVerificationFromObject(m *domainVerificationResourceModel, obj *unstructured.Unstructured) {
	m.Name = types.StringValue(obj.GetName())
	m.ID = types.StringValue(resourceID(m.Cluster, obj.GetName()))
	m.Domain = types.StringValue(domainverification.Domain(obj))
	m.TXTRecordName = m.Domain
	st := domainverification.StatusOf(obj)
	m.Token = optionalString(st.Token)
	m.TXTRecordValue = m.Token
	m.Verified = types.BoolPointerValue(st.Verified)
	m.LastChecked = optionalString(st.LastChecked)
	m.Message = optionalString(st.Message)
	if m.ForceConflicts.IsNull() || m.ForceConflicts.IsUnknown() {
		m.ForceConflicts = types.BoolValue(false)
	}
	if m.APIVersion.IsNull() || m.APIVersion.IsUnknown() {
		m.APIVersion = types.StringValue(domainverification.V1)
	}
}
