package resources

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

var (
	_ resource.ResourceWithConfigure      = (*federatedTrustDomainResource)(nil)
	_ resource.ResourceWithImportState    = (*federatedTrustDomainResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*federatedTrustDomainResource)(nil)
	_ resource.ResourceWithValidateConfig = (*federatedTrustDomainResource)(nil)
)

const (
	profileHTTPSSPIFFE = "https_spiffe"
	profileHTTPSWeb    = "https_web"

	// defaultFederationTimeout bounds wait_for_bundle and delete_bundle_on_destroy:
	// spire-controller-manager reconciles within seconds, a first fetch from a
	// peer's endpoint may take a refresh interval.
	defaultFederationTimeout = 5 * time.Minute
)

var (
	spireServerAttrTypes = map[string]attr.Type{"namespace": types.StringType, "pod": types.StringType, "container": types.StringType}
	timeoutAttrTypes     = map[string]attr.Type{"create": types.StringType, "update": types.StringType, "delete": types.StringType}
)

// NewFederatedTrustDomainResource manages a SPIRE ClusterFederatedTrustDomain.
func NewFederatedTrustDomainResource() resource.Resource {
	return &federatedTrustDomainResource{}
}

type federatedTrustDomainResource struct {
	providerdata.ResourceBase
}

type federatedTrustDomainResourceModel struct {
	ID                    types.String   `tfsdk:"id"`
	Cluster               types.String   `tfsdk:"cluster"`
	Name                  types.String   `tfsdk:"name"`
	TrustDomain           types.String   `tfsdk:"trust_domain"`
	BundleEndpointURL     types.String   `tfsdk:"bundle_endpoint_url"`
	BundleEndpointProfile types.Object   `tfsdk:"bundle_endpoint_profile"`
	TrustDomainBundle     types.String   `tfsdk:"trust_domain_bundle"`
	ClassName             types.String   `tfsdk:"class_name"`
	ForceConflicts        types.Bool     `tfsdk:"force_conflicts"`
	WaitForBundle         types.Bool     `tfsdk:"wait_for_bundle"`
	DeleteBundleOnDestroy types.Bool     `tfsdk:"delete_bundle_on_destroy"`
	SpireServer           types.Object   `tfsdk:"spire_server"`
	Timeouts              timeouts.Value `tfsdk:"timeouts"`
}

type bundleEndpointProfileModel struct {
	Type             types.String `tfsdk:"type"`
	EndpointSPIFFEID types.String `tfsdk:"endpoint_spiffe_id"`
}

var bundleEndpointProfileAttrTypes = map[string]attr.Type{
	"type":               types.StringType,
	"endpoint_spiffe_id": types.StringType,
}

func (r *federatedTrustDomainResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_federated_trust_domain"
}

func (r *federatedTrustDomainResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A SPIRE `ClusterFederatedTrustDomain` (`spire.spiffe.io/v1alpha1`, cluster-scoped): tells " +
			"spire-controller-manager to federate the cluster's SPIRE server with a peer trust domain, and hands it " +
			"the peer's bootstrap trust bundle.\n\n" +
			"`trust_domain_bundle` is a **bootstrap** value: spire-controller-manager reads it only when it first sees " +
			"the object; afterwards SPIRE refreshes the bundle from the peer's bundle endpoint. So after creation a " +
			"changed bundle (for example a rotated CA read by `zerotrust_trust_bundle`) plans no change; replace the " +
			"resource (`terraform apply -replace=...`) to bootstrap again. Updates never send the bundle, because a " +
			"stale bundle sent with an endpoint change would overwrite the fresher one SPIRE holds.\n\n" +
			"There is no webhook in many installations, and an invalid object is accepted by the API server and then " +
			"silently skipped by the controller, so every rule the controller applies is checked at plan time.",
		Attributes: map[string]schema.Attribute{
			"id":      idAttribute("`<name>` on the default connection, `<cluster>/<name>` otherwise; also the import ID."),
			"cluster": clusterAttribute(),
			"name": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "Object name. Defaults to the trust domain with `_` replaced by `-` (object names " +
					"are DNS subdomains). Changing it replaces the object.",
				Validators:    []validator.String{validate.K8sName()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIfConfigured(), stringplanmodifier.UseStateForUnknown()},
			},
			"trust_domain": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The peer trust domain to federate with, e.g. `west.example.org` (no `spiffe://`). " +
					"Changing it replaces the object.",
				Validators:    []validator.String{validate.TrustDomain()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"bundle_endpoint_url": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "The peer's SPIFFE bundle endpoint: an `https://` URL with a host and no user info.",
				Validators:          []validator.String{validate.HTTPSURL()},
			},
			"bundle_endpoint_profile": schema.SingleNestedAttribute{
				Required:            true,
				MarkdownDescription: "How the bundle endpoint authenticates itself.",
				Attributes: map[string]schema.Attribute{
					"type": schema.StringAttribute{
						Required: true,
						MarkdownDescription: "`https_spiffe` (the endpoint presents an SVID checked against the peer's " +
							"bundle; needs `endpoint_spiffe_id`) or `https_web` (a Web PKI certificate; no `endpoint_spiffe_id`).",
						Validators: []validator.String{stringvalidator.OneOf(profileHTTPSSPIFFE, profileHTTPSWeb)},
					},
					"endpoint_spiffe_id": schema.StringAttribute{
						Optional: true,
						MarkdownDescription: "SPIFFE ID of the bundle endpoint server, usually `spiffe://<trust_domain>/spire/server`. " +
							"Required for `https_spiffe`, refused for `https_web`.",
						Validators: []validator.String{validate.SPIFFEID()},
					},
				},
			},
			"trust_domain_bundle": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "The peer's SPIFFE trust bundle (JSON, as `zerotrust_trust_bundle.spiffe_bundle` or " +
					"`spire-server bundle show -format spiffe` print it), validated for `trust_domain` at plan time. " +
					"Bootstrap only: sent on create, ignored on later changes, removal from the configuration included " +
					"(see above). Needed for `https_spiffe` unless SPIRE already holds the peer's bundle. Import reads " +
					"the bundle the object still carries, if any; an object adopted without one whose configuration " +
					"sets one plans an in-place update that records the value in state and sends nothing.",
				Validators:    []validator.String{validate.SPIFFEBundleFor(path.MatchRoot("trust_domain"))},
				PlanModifiers: []planmodifier.String{bootstrapOnly{}},
			},
			"class_name": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "spire-controller-manager class that acts on the object (`spec.className`); `\"\"` " +
					"means no class. When unset, an object this resource creates gets the provider's `spire.class_name`, " +
					"and keeps following it while this provider owns the field. An adopted object (imported, or made by " +
					"someone else) keeps the class it has, none included, and the field is not written, so importing " +
					"plans no change: set `class_name` to give it one. On OpenShift an object without the operator's " +
					"class is ignored by its spire-controller-manager.",
			},
			"force_conflicts": forceConflictsAttribute(),
			"wait_for_bundle": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
				MarkdownDescription: "After create and update, wait (up to the `timeouts`) until the cluster's SPIRE server " +
					"holds the peer's bundle, asked through pod exec of `spire-server bundle list` (see `spire_server`). " +
					"The object has no status to wait on, and workloads that federate with the peer are refused until " +
					"SPIRE has its bundle. Defaults to `false`. A create whose wait times out leaves the object in place " +
					"and the resource tainted, so the next apply replaces it.",
			},
			"delete_bundle_on_destroy": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
				MarkdownDescription: "On destroy, also delete the peer's bundle from the SPIRE server (`spire-server bundle " +
					"delete`, after spire-controller-manager has removed the federation relationship). Without it SPIRE " +
					"keeps the bundle, as deleting a ClusterFederatedTrustDomain alone does. Defaults to `false`.",
			},
			"spire_server": spireServerAttribute(),
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

// ValidateConfig applies the controller's cross-field rules, which the CRD
// schema itself does not enforce.
func (r *federatedTrustDomainResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var profile types.Object
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("bundle_endpoint_profile"), &profile)...)
	if resp.Diagnostics.HasError() || profile.IsNull() || profile.IsUnknown() {
		return
	}
	var p bundleEndpointProfileModel
	resp.Diagnostics.Append(profile.As(ctx, &p, basetypes.ObjectAsOptions{})...)
	if resp.Diagnostics.HasError() || p.Type.IsUnknown() {
		return
	}
	idPath := path.Root("bundle_endpoint_profile").AtName("endpoint_spiffe_id")
	switch p.Type.ValueString() {
	case profileHTTPSSPIFFE:
		if p.EndpointSPIFFEID.IsNull() {
			resp.Diagnostics.AddAttributeError(idPath, "Missing Endpoint SPIFFE ID",
				"Attribute bundle_endpoint_profile.endpoint_spiffe_id: the https_spiffe profile authenticates the bundle endpoint by its SPIFFE ID, so endpoint_spiffe_id is "+
					"required, usually \"spiffe://<trust_domain>/spire/server\".")
		}
	case profileHTTPSWeb:
		if !p.EndpointSPIFFEID.IsNull() {
			resp.Diagnostics.AddAttributeError(idPath, "Endpoint SPIFFE ID Not Applicable",
				"Attribute bundle_endpoint_profile.endpoint_spiffe_id: the https_web profile authenticates the bundle endpoint with Web PKI, so endpoint_spiffe_id must not be "+
					"set; spire-controller-manager skips such objects. Remove it, or use type = \"https_spiffe\".")
		}
	}
}

func (r *federatedTrustDomainResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.Data == nil {
		return
	}
	var plan, config federatedTrustDomainResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !r.Data.CheckCluster(plan.Cluster, path.Root("cluster"), &resp.Diagnostics) {
		return
	}
	if config.Name.IsNull() && !plan.TrustDomain.IsUnknown() {
		name := defaultObjectName(plan.TrustDomain.ValueString())
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			resp.Diagnostics.AddAttributeError(path.Root("name"), "Cannot Derive Object Name",
				fmt.Sprintf("The name derived from trust_domain (%q) is not a valid object name: %s. Set name explicitly.",
					name, strings.Join(msgs, "; ")))
			return
		}
		plan.Name = types.StringValue(name)
	}
	creating := req.State.Raw.IsNull()
	if config.ClassName.IsNull() {
		var state federatedTrustDomainResourceModel
		if !creating {
			resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		}
		written, d := classNameWritten(ctx, req.Private)
		resp.Diagnostics.Append(d...)
		if creating || written {
			plan.ClassName = optionalString(r.Data.SpireClassName)
		} else {
			plan.ClassName = state.ClassName
		}
	}
	if plan.Name.IsUnknown() {
		plan.ID = types.StringUnknown()
	} else {
		plan.ID = types.StringValue(resourceID(plan.Cluster, plan.Name.ValueString()))
	}
	if creating {
		r.planCheckUnique(ctx, plan, &resp.Diagnostics)
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	checkPlannedApply(ctx, r.Data, req, resp, plannedApply{Kind: kube.ClusterFederatedTrustDomain,
		Object: func() (*unstructured.Unstructured, bool) {
			// What Update sends: no bundle, and className only when configured or written before.
			toApply := plan
			if written, d := classNameWritten(ctx, req.Private); config.ClassName.IsNull() && (d.HasError() || !written) {
				toApply.ClassName = types.StringNull()
			}
			obj, d := federatedTrustDomainObject(ctx, toApply, false)
			return obj, !d.HasError()
		}})
}

// classNameWrittenKey is the private state key recording whether this
// provider's field manager applied spec.className. An unset class_name means
// "the provider's spire.class_name" only on objects whose class the provider
// wrote (it created them, or class_name was set before); an object adopted
// with its own class, or with none, keeps it, so importing plans no change.
const classNameWrittenKey = "class_name_written"

// privateState is the part of the framework's private state data that
// Create, Read and Update set (its type is internal to the framework).
type privateState interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

type privateStateReader interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

func classNameWritten(ctx context.Context, private privateStateReader) (bool, diag.Diagnostics) {
	v, diags := private.GetKey(ctx, classNameWrittenKey)
	return string(v) == "true", diags
}

// recordClassNameWritten reads from the object's managed fields whether
// manager applied spec.className, and keeps the answer in private state.
func recordClassNameWritten(ctx context.Context, private privateState, obj *unstructured.Unstructured, manager string) diag.Diagnostics {
	return private.SetKey(ctx, classNameWrittenKey, []byte(strconv.FormatBool(appliesField(obj, manager, "spec", "className"))))
}

// appliesField reports whether manager's server-side apply owns the field at
// fieldPath of obj (managed fields, not values: a field another manager
// changed since then is theirs).
func appliesField(obj *unstructured.Unstructured, manager string, fieldPath ...string) bool {
	return fieldsOwned(obj, func(e metav1.ManagedFieldsEntry) bool {
		return e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == ""
	}, fieldPath)
}

// planCheckUnique runs the duplicate checks of Create at plan time, when the
// cluster's connection is known, it answers and it serves the CRD; otherwise
// (a cluster or CRD created in the same apply) Create checks before it writes.
// At plan only objects this provider did not apply count as duplicates: one
// it manages may be about to go in the same apply (a renamed resource is
// destroyed before its replacement is created), so Create judges those.
func (r *federatedTrustDomainResource) planCheckUnique(ctx context.Context, plan federatedTrustDomainResourceModel, diags *diag.Diagnostics) {
	key := providerdata.ClusterKey(plan.Cluster)
	if plan.Cluster.IsUnknown() || plan.Name.IsUnknown() || plan.TrustDomain.IsUnknown() || r.Data.Clusters.IsUnknown(key) {
		return
	}
	client, err := r.Data.Clusters.Client(key)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, planLookupTimeout)
	defer cancel()
	if served, err := client.Served(ctx, kube.ClusterFederatedTrustDomain); err != nil || !served {
		return
	}
	items, err := client.ListOnce(ctx, kube.ClusterFederatedTrustDomain)
	if err != nil {
		return
	}
	checkUniqueAmong(ctx, items, client, plan.Name.ValueString(), plan.TrustDomain.ValueString(), true, diags)
}

func (r *federatedTrustDomainResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan federatedTrustDomainResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client := r.Data.Client(plan.Cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	name, td := plan.Name.ValueString(), plan.TrustDomain.ValueString()

	if !r.checkUnique(ctx, client, name, td, &resp.Diagnostics) {
		return
	}
	obj, diags := federatedTrustDomainObject(ctx, plan, true)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	out, err := client.Apply(ctx, kube.ClusterFederatedTrustDomain, obj, plan.ForceConflicts.ValueBool())
	if err != nil {
		client.Release(kube.ClusterFederatedTrustDomain, td)
		resp.Diagnostics.Append(kube.Diagnostic(err, "create the ClusterFederatedTrustDomain "+name))
		return
	}
	resp.Diagnostics.Append(setFromObject(ctx, &plan, out)...)
	resp.Diagnostics.Append(recordClassNameWritten(ctx, resp.Private, out, client.FieldManager)...)
	// The object exists from here on: state records it even if the wait fails.
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	r.waitForBundle(ctx, client, plan, plan.Timeouts.Create, &resp.Diagnostics)
}

// waitForBundle implements wait_for_bundle.
func (r *federatedTrustDomainResource) waitForBundle(ctx context.Context, client *kube.Client, m federatedTrustDomainResourceModel,
	timeoutOf func(context.Context, time.Duration) (time.Duration, diag.Diagnostics), diags *diag.Diagnostics) {
	if !m.WaitForBundle.ValueBool() || diags.HasError() {
		return
	}
	timeout, d := timeoutOf(ctx, defaultFederationTimeout)
	diags.Append(d...)
	target, d := r.spireTarget(ctx, client, m)
	diags.Append(d...)
	if diags.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := target.waitForBundle(ctx, m.TrustDomain.ValueString()); err != nil {
		diags.AddError("SPIRE Does Not Hold the Peer Bundle",
			fmt.Sprintf("The ClusterFederatedTrustDomain %q was applied, but waiting for its bundle failed. Check that "+
				"spire-controller-manager runs with class %q, that trust_domain_bundle or the peer's bundle endpoint "+
				"%q is right, and the controller's and SPIRE server's logs.\n\n%v",
				m.Name.ValueString(), m.ClassName.ValueString(), m.BundleEndpointURL.ValueString(), err))
	}
}

func (r *federatedTrustDomainResource) spireTarget(ctx context.Context, client *kube.Client, m federatedTrustDomainResourceModel) (spireTarget, diag.Diagnostics) {
	t := spireTarget{client: client, namespace: r.Data.SpireNamespace, pod: defaultSpirePod, container: defaultSpireContainer}
	var diags diag.Diagnostics
	if m.SpireServer.IsNull() || m.SpireServer.IsUnknown() {
		return t, diags
	}
	var s spireServerModel
	diags.Append(m.SpireServer.As(ctx, &s, basetypes.ObjectAsOptions{})...)
	if v := s.Namespace.ValueString(); v != "" {
		t.namespace = v
	}
	if v := s.Pod.ValueString(); v != "" {
		t.pod = v
	}
	if v := s.Container.ValueString(); v != "" {
		t.container = v
	}
	return t, diags
}

// checkUnique refuses a second object for the same trust domain: the
// controller silently ignores all but one of them. It also refuses to take
// over an object of the same name that someone else created.
func (r *federatedTrustDomainResource) checkUnique(ctx context.Context, client *kube.Client, name, td string, diags *diag.Diagnostics) bool {
	items, err := client.ListOnce(ctx, kube.ClusterFederatedTrustDomain)
	if err != nil {
		diags.Append(kube.Diagnostic(err, "list ClusterFederatedTrustDomains to check for duplicates"))
		return false
	}
	return checkUniqueAmong(ctx, items, client, name, td, false, diags)
}

// checkUniqueAmong is checkUnique on listed objects; othersOnly skips
// duplicates this provider applied (see planCheckUnique). It claims the
// trust domain for name, so two new resources of one configuration for the
// same trust domain are refused too.
func checkUniqueAmong(ctx context.Context, items []unstructured.Unstructured, client *kube.Client, name, td string, othersOnly bool, diags *diag.Diagnostics) bool {
	for i := range items {
		item := &items[i]
		other, _, _ := unstructured.NestedString(item.Object, "spec", "trustDomain")
		switch {
		case othersOnly && item.GetName() != name && ownedBy(item, client.FieldManager):
			continue
		case item.GetName() == name && !ownedBy(item, client.FieldManager):
			diags.AddAttributeError(path.Root("name"), "Object Already Exists",
				fmt.Sprintf("A ClusterFederatedTrustDomain named %q already exists on cluster %q and was not created by "+
					"this provider. Import it (terraform import ... %s) or choose another name.",
					name, client.DisplayName(), importHint(client.Name, name)))
			return false
		case item.GetName() != name && other == td && stillFederates(ctx, client, item.GetName(), td):
			diags.AddAttributeError(path.Root("trust_domain"), "Duplicate Trust Domain",
				fmt.Sprintf("ClusterFederatedTrustDomain %q on cluster %q already federates with %q. "+
					"spire-controller-manager would silently ignore a second object for the same trust domain. "+
					"Manage that object instead (import it), or delete it first.", item.GetName(), client.DisplayName(), td))
			return false
		}
	}
	if prev, ok := client.Claim(kube.ClusterFederatedTrustDomain, td, name); !ok {
		diags.AddAttributeError(path.Root("trust_domain"), "Duplicate Trust Domain",
			fmt.Sprintf("Another resource in this configuration creates ClusterFederatedTrustDomain %q for trust domain "+
				"%q on cluster %q. spire-controller-manager would silently ignore one of them: keep only one.",
				prev, td, client.DisplayName()))
		return false
	}
	return true
}

// stillFederates asks again whether the object name still exists for td: the
// list is shared by every resource of one plan or apply, and an object an
// earlier step of the same apply deleted (a renamed resource) is no duplicate.
func stillFederates(ctx context.Context, client *kube.Client, name, td string) bool {
	obj, err := client.Get(ctx, kube.ClusterFederatedTrustDomain, "", name)
	if kube.IsNotFound(err) {
		return false
	}
	if err != nil {
		return true
	}
	other, _, _ := unstructured.NestedString(obj.Object, "spec", "trustDomain")
	return other == td && obj.GetDeletionTimestamp() == nil
}

func (r *federatedTrustDomainResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state federatedTrustDomainResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client := r.Data.ReadClient(state.Cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	obj, err := client.Get(ctx, kube.ClusterFederatedTrustDomain, "", state.Name.ValueString())
	if kube.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "read the ClusterFederatedTrustDomain "+state.Name.ValueString()))
		return
	}
	resp.Diagnostics.Append(setFromObject(ctx, &state, obj)...)
	resp.Diagnostics.Append(recordClassNameWritten(ctx, resp.Private, obj, client.FieldManager)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *federatedTrustDomainResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan federatedTrustDomainResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client := r.Data.Client(plan.Cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	// A className the provider neither wrote nor was given stays the object's
	// own: applying it would take co-ownership of another manager's field.
	toApply := plan
	var config federatedTrustDomainResourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	written, d := classNameWritten(ctx, req.Private)
	resp.Diagnostics.Append(d...)
	if config.ClassName.IsNull() && !written {
		toApply.ClassName = types.StringNull()
	}
	// The bundle is left out, which releases the field: if it were still on the
	// object while URL or profile change, spire-controller-manager would
	// rewrite the relationship with that stale bundle.
	obj, diags := federatedTrustDomainObject(ctx, toApply, false)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	out, err := client.Apply(ctx, kube.ClusterFederatedTrustDomain, obj, plan.ForceConflicts.ValueBool())
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "update the ClusterFederatedTrustDomain "+plan.Name.ValueString()))
		return
	}
	resp.Diagnostics.Append(setFromObject(ctx, &plan, out)...)
	resp.Diagnostics.Append(recordClassNameWritten(ctx, resp.Private, out, client.FieldManager)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	r.waitForBundle(ctx, client, plan, plan.Timeouts.Update, &resp.Diagnostics)
}

func (r *federatedTrustDomainResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state federatedTrustDomainResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client := r.Data.Client(state.Cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	err := client.Delete(ctx, kube.ClusterFederatedTrustDomain, "", state.Name.ValueString())
	if err != nil && !kube.IsCRDNotInstalled(err) {
		resp.Diagnostics.Append(kube.Diagnostic(err, "delete the ClusterFederatedTrustDomain "+state.Name.ValueString()))
		return
	}
	client.Release(kube.ClusterFederatedTrustDomain, state.TrustDomain.ValueString())
	if !state.DeleteBundleOnDestroy.ValueBool() {
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, defaultFederationTimeout)
	resp.Diagnostics.Append(d...)
	target, d := r.spireTarget(ctx, client, state)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := target.deleteBundle(ctx, state.TrustDomain.ValueString()); err != nil {
		// The object is gone: say so, but let Terraform forget it.
		resp.Diagnostics.AddWarning("Peer Bundle Not Deleted",
			fmt.Sprintf("The ClusterFederatedTrustDomain %q was deleted, but the SPIRE server still holds the bundle of %q. "+
				"Delete it with `spire-server bundle delete -id spiffe://%s` once the federation relationship is gone.\n\n%v",
				state.Name.ValueString(), state.TrustDomain.ValueString(), state.TrustDomain.ValueString(), err))
	}
}

func (r *federatedTrustDomainResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	cluster, name := parseImportID(req.ID)
	if name == "" {
		resp.Diagnostics.AddError("Invalid Import ID",
			fmt.Sprintf("Expected \"<name>\" (default connection) or \"<cluster>/<name>\", got %q.", req.ID))
		return
	}
	if !cluster.IsNull() && r.Data != nil && !r.Data.CheckCluster(cluster, path.Root("cluster"), &resp.Diagnostics) {
		return
	}
	state := federatedTrustDomainResourceModel{Cluster: cluster, TrustDomainBundle: types.StringNull(),
		SpireServer: types.ObjectNull(spireServerAttrTypes)}
	client := r.Data.Client(cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	obj, err := client.Get(ctx, kube.ClusterFederatedTrustDomain, "", name)
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "import the ClusterFederatedTrustDomain "+name))
		return
	}
	resp.Diagnostics.Append(setFromObject(ctx, &state, obj)...)
	// The bundle the object still carries, if any, is the best record of how
	// it was bootstrapped; Read never adopts it later.
	if v, _, _ := unstructured.NestedString(obj.Object, "spec", "trustDomainBundle"); v != "" {
		state.TrustDomainBundle = types.StringValue(v)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func federatedTrustDomainObject(ctx context.Context, m federatedTrustDomainResourceModel, withBundle bool) (*unstructured.Unstructured, diag.Diagnostics) {
	var p bundleEndpointProfileModel
	diags := m.BundleEndpointProfile.As(ctx, &p, basetypes.ObjectAsOptions{})
	profile := map[string]any{"type": p.Type.ValueString()}
	if v := p.EndpointSPIFFEID.ValueString(); v != "" {
		profile["endpointSPIFFEID"] = v
	}
	spec := map[string]any{
		"trustDomain":           m.TrustDomain.ValueString(),
		"bundleEndpointURL":     m.BundleEndpointURL.ValueString(),
		"bundleEndpointProfile": profile,
	}
	if v := m.ClassName.ValueString(); v != "" {
		spec["className"] = v
	}
	if v := m.TrustDomainBundle.ValueString(); withBundle && v != "" {
		spec["trustDomainBundle"] = v
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	obj.SetName(m.Name.ValueString())
	return obj, diags
}

// setFromObject copies what the cluster holds into the model, so edits made
// outside Terraform show up as a plan. trust_domain_bundle stays as it is:
// it is bootstrap input, not a description of the object.
func setFromObject(_ context.Context, m *federatedTrustDomainResourceModel, obj *unstructured.Unstructured) diag.Diagnostics {
	var diags diag.Diagnostics
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	str := func(fields ...string) string {
		v, _, _ := unstructured.NestedString(spec, fields...)
		return v
	}
	m.Name = types.StringValue(obj.GetName())
	m.ID = types.StringValue(resourceID(m.Cluster, obj.GetName()))
	m.TrustDomain = types.StringValue(str("trustDomain"))
	m.BundleEndpointURL = types.StringValue(str("bundleEndpointURL"))
	// "" in the configuration means "no class", which the API stores as absent.
	if className := str("className"); className != "" || !m.ClassName.Equal(types.StringValue("")) {
		m.ClassName = optionalString(className)
	}
	profile, d := types.ObjectValue(bundleEndpointProfileAttrTypes, map[string]attr.Value{
		"type":               types.StringValue(str("bundleEndpointProfile", "type")),
		"endpoint_spiffe_id": optionalString(str("bundleEndpointProfile", "endpointSPIFFEID")),
	})
	diags.Append(d...)
	m.BundleEndpointProfile = profile
	for _, b := range []*types.Bool{&m.ForceConflicts, &m.WaitForBundle, &m.DeleteBundleOnDestroy} {
		if b.IsNull() || b.IsUnknown() {
			*b = types.BoolValue(false)
		}
	}
	if m.Timeouts.IsNull() || m.Timeouts.IsUnknown() {
		m.Timeouts = timeouts.Value{Object: types.ObjectNull(timeoutAttrTypes)}
	}
	if m.SpireServer.IsUnknown() {
		m.SpireServer = types.ObjectNull(spireServerAttrTypes)
	}
	if m.TrustDomainBundle.IsUnknown() {
		m.TrustDomainBundle = types.StringNull()
	}
	return diags
}

// defaultObjectName derives an object name from a trust domain: trust domains
// may contain underscores, object names may not.
func defaultObjectName(td string) string {
	return strings.ReplaceAll(td, "_", "-")
}
