package resources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

var (
	_ resource.ResourceWithConfigure      = (*meshTrustDomainResource)(nil)
	_ resource.ResourceWithImportState    = (*meshTrustDomainResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*meshTrustDomainResource)(nil)
	_ resource.ResourceWithValidateConfig = (*meshTrustDomainResource)(nil)
)

// meshLiveReadTimeout bounds the best-effort read of the mesh object while
// planning a new resource (for the trust-domain-change warning): planning
// must never depend on the cluster.
const meshLiveReadTimeout = 5 * time.Second

// NewMeshTrustDomainResource manages the trust domain of an Istio (Kyma or
// Sail) mesh, or a Kuma MeshTrust.
func NewMeshTrustDomainResource() resource.Resource {
	return &meshTrustDomainResource{}
}

type meshTrustDomainResource struct {
	providerdata.ResourceBase
}

type meshTrustDomainResourceModel struct {
	ID                          types.String `tfsdk:"id"`
	Cluster                     types.String `tfsdk:"cluster"`
	Mesh                        types.Object `tfsdk:"mesh"`
	TrustDomain                 types.String `tfsdk:"trust_domain"`
	TrustDomainAliases          types.List   `tfsdk:"trust_domain_aliases"`
	KeepPreviousAsAlias         types.Bool   `tfsdk:"keep_previous_as_alias"`
	CACertificates              types.List   `tfsdk:"ca_certificates"`
	CAAddress                   types.String `tfsdk:"ca_address"`
	CABundles                   types.List   `tfsdk:"ca_bundles"`
	ForceConflicts              types.Bool   `tfsdk:"force_conflicts"`
	SPIFFEIDPrefix              types.String `tfsdk:"spiffe_id_prefix"`
	PreviousTrustDomains        types.List   `tfsdk:"previous_trust_domains"`
	EffectiveTrustDomainAliases types.List   `tfsdk:"effective_trust_domain_aliases"`
}

type meshModel struct {
	Kind      types.String `tfsdk:"kind"`
	Name      types.String `tfsdk:"name"`
	Namespace types.String `tfsdk:"namespace"`
	KumaMesh  types.String `tfsdk:"kuma_mesh"`
}

func (m meshModel) object() types.Object {
	return types.ObjectValueMust(meshAttrTypes, map[string]attr.Value{
		"kind": m.Kind, "name": m.Name, "namespace": m.Namespace, "kuma_mesh": m.KumaMesh,
	})
}

// key names the object within its kind: "<name>" or "<namespace>:<name>".
func (m meshModel) key() string {
	if m.Namespace.ValueString() == "" {
		return m.Kind.ValueString() + ":" + m.Name.ValueString()
	}
	return m.Kind.ValueString() + ":" + m.Namespace.ValueString() + ":" + m.Name.ValueString()
}

// sameObject reports whether two mesh values name the same object.
func (m meshModel) sameObject(other meshModel) bool {
	return m.Kind.Equal(other.Kind) && m.Name.Equal(other.Name) && m.Namespace.Equal(other.Namespace)
}

func (m meshModel) describe(kind meshKind) string {
	name := m.Name.ValueString()
	if ns := m.Namespace.ValueString(); ns != "" {
		name = ns + "/" + name
	}
	return fmt.Sprintf("%s %s", kind.kube, name)
}

func (r *meshTrustDomainResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_mesh_trust_domain"
}

// ValidateConfig refuses settings the chosen kind of mesh object has no
// field for, and the kinds' own rules.
func (r *meshTrustDomainResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var config meshTrustDomainResourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() || config.Mesh.IsNull() || config.Mesh.IsUnknown() {
		return
	}
	var mesh meshModel
	resp.Diagnostics.Append(config.Mesh.As(ctx, &mesh, basetypes.ObjectAsOptions{})...)
	if resp.Diagnostics.HasError() || mesh.Kind.IsUnknown() {
		return
	}
	kind, ok := meshKinds[mesh.Kind.ValueString()]
	if !ok {
		return // the kind's own validator reports it
	}
	what := map[string]string{
		meshKindKyma: "the Kyma Istio module's Istio object has only spec.config.trustDomain",
		meshKindSail: "the Sail operator's Istio object has no such field",
		meshKindKuma: "a Kuma MeshTrust has only a trust domain and CA bundles",
	}[kind.name]
	refuse := func(p path.Path, set bool, fix string) {
		if set {
			errorAt(&resp.Diagnostics, p, "Not Supported by This Mesh Kind", fmt.Sprintf(
				"mesh.kind is %q, and %s. %s", kind.name, what, fix))
		}
	}
	isSet := func(v attr.Value) bool { return !v.IsNull() }
	switch kind.name {
	case meshKindSail:
		refuse(path.Root("mesh").AtName("namespace"), isSet(mesh.Namespace),
			"The Sail operator's Istio is cluster-scoped: remove mesh.namespace.")
	case meshKindKyma:
		fix := "The Kyma Istio module cannot keep a former trust domain as an alias; remove the attribute."
		refuse(path.Root("trust_domain_aliases"), isSet(config.TrustDomainAliases), fix)
		refuse(path.Root("keep_previous_as_alias"), config.KeepPreviousAsAlias.ValueBool(), fix)
	case meshKindKuma:
		fix := "Remove the attribute; each trusted trust domain gets its own MeshTrust (one resource each)."
		refuse(path.Root("trust_domain_aliases"), isSet(config.TrustDomainAliases), fix)
		refuse(path.Root("keep_previous_as_alias"), config.KeepPreviousAsAlias.ValueBool(), fix)
		if config.TrustDomain.IsNull() {
			errorAt(&resp.Diagnostics, path.Root("trust_domain"), "Missing Trust Domain",
				"A Kuma MeshTrust names the trust domain its CA bundles belong to: set trust_domain, e.g. to "+
					"data.zerotrust_trust_bundle.<peer>.trust_domain.")
		} else if n := len(config.TrustDomain.ValueString()); !config.TrustDomain.IsUnknown() && n > kumaMaxTrustDomainLen {
			errorAt(&resp.Diagnostics, path.Root("trust_domain"), "Trust Domain Too Long", fmt.Sprintf(
				"A Kuma MeshTrust's trustDomain has at most %d characters; this one has %d.", kumaMaxTrustDomainLen, n))
		}
		if config.CABundles.IsNull() {
			errorAt(&resp.Diagnostics, path.Root("ca_bundles"), "Missing CA Bundles",
				"A Kuma MeshTrust needs at least one CA bundle: set ca_bundles, e.g. to "+
					"[data.zerotrust_trust_bundle.<peer>.x509_authorities_pem].")
		}
	}
	if kind.name != meshKindKuma {
		refuse(path.Root("mesh").AtName("kuma_mesh"), isSet(mesh.KumaMesh), "kuma_mesh applies to mesh.kind = \"kuma\" only.")
		refuse(path.Root("ca_bundles"), isSet(config.CABundles),
			"ca_bundles applies to mesh.kind = \"kuma\"; for istio_sail use ca_certificates.")
	}
	if kind.name != meshKindSail {
		refuse(path.Root("ca_certificates"), isSet(config.CACertificates), "ca_certificates applies to mesh.kind = \"istio_sail\" only.")
		refuse(path.Root("ca_address"), isSet(config.CAAddress), "ca_address applies to mesh.kind = \"istio_sail\" only.")
	}
	if kind.name == meshKindSail && !config.TrustDomain.IsUnknown() && !config.TrustDomainAliases.IsUnknown() {
		td := config.TrustDomain.ValueString()
		if td == "" {
			td = kind.defaultTrustDomain
		}
		for i, alias := range config.TrustDomainAliases.Elements() {
			if s, ok := alias.(types.String); ok && !s.IsUnknown() && s.ValueString() == td {
				errorAt(&resp.Diagnostics, path.Root("trust_domain_aliases").AtListIndex(i), "Alias Equals Trust Domain", fmt.Sprintf(
					"%q is the trust domain itself, not an alias of it: remove it from trust_domain_aliases.", td))
			}
		}
	}
}

func (r *meshTrustDomainResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.Data == nil {
		return
	}
	var plan, config meshTrustDomainResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	var state *meshTrustDomainResourceModel
	if !req.State.Raw.IsNull() {
		state = &meshTrustDomainResourceModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	}
	if resp.Diagnostics.HasError() || !r.Data.CheckCluster(plan.Cluster, path.Root("cluster"), &resp.Diagnostics) {
		return
	}
	if plan.Mesh.IsUnknown() {
		return
	}
	var mesh, configMesh meshModel
	resp.Diagnostics.Append(plan.Mesh.As(ctx, &mesh, basetypes.ObjectAsOptions{})...)
	resp.Diagnostics.Append(config.Mesh.As(ctx, &configMesh, basetypes.ObjectAsOptions{})...)
	if resp.Diagnostics.HasError() || mesh.Kind.IsUnknown() {
		return
	}
	kind, ok := meshKinds[mesh.Kind.ValueString()]
	if !ok {
		return
	}

	if configMesh.Namespace.IsNull() {
		mesh.Namespace = optionalString(kind.defaultNamespace)
	}
	if configMesh.Name.IsNull() {
		switch {
		case kind.defaultName != "":
			mesh.Name = types.StringValue(kind.defaultName)
		case plan.TrustDomain.IsUnknown():
			mesh.Name = types.StringUnknown()
		default:
			name := kumaObjectName(plan.TrustDomain.ValueString())
			if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
				errorAt(&resp.Diagnostics, path.Root("mesh").AtName("name"), "Cannot Derive Object Name", fmt.Sprintf(
					"The MeshTrust name derived from trust_domain (%q) is not a valid object name: %s. Set mesh.name.",
					name, strings.Join(msgs, "; ")))
				return
			}
			mesh.Name = types.StringValue(name)
		}
	}
	// Another mesh object is another resource: the attribute's own plan
	// modifiers cannot tell, as the defaults are only known here. The Kuma
	// mesh label is a field of the same object, so it changes in place.
	newObject := state == nil
	var priorMesh meshModel
	if state != nil {
		resp.Diagnostics.Append(state.Mesh.As(ctx, &priorMesh, basetypes.ObjectAsOptions{})...)
		if resp.Diagnostics.HasError() {
			return
		}
		if !priorMesh.sameObject(mesh) {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("mesh"))
			newObject = true
		}
	}

	// An attribute left out of the configuration is not written: it shows
	// what the object holds (set by the operator or another field manager,
	// or absent). Read keeps it current, so an existing object's value
	// stands; a new object's is known once applied, and so is the value a
	// field takes when this resource stops setting it (the apply releases it).
	owned := readMeshOwnership(ctx, req.Private, &resp.Diagnostics)
	if config.TrustDomain.IsNull() {
		switch {
		case newObject || owned.TrustDomain:
			plan.TrustDomain = types.StringUnknown()
		default:
			plan.TrustDomain = state.TrustDomain
		}
	}
	if configMesh.KumaMesh.IsNull() {
		switch {
		case kind.name != meshKindKuma:
			mesh.KumaMesh = types.StringNull()
		case newObject || owned.KumaMesh:
			mesh.KumaMesh = types.StringUnknown()
		default:
			mesh.KumaMesh = priorMesh.KumaMesh
		}
	}
	plan.Mesh = mesh.object()
	if mesh.Name.IsUnknown() {
		plan.ID = types.StringUnknown()
	} else {
		plan.ID = types.StringValue(resourceID(plan.Cluster, mesh.key()))
	}
	planned := effectiveTrustDomain(kind, plan.TrustDomain)
	plan.SPIFFEIDPrefix = spiffeIDPrefix(planned)

	// The trust domain the mesh runs on now, "" when unknown or none.
	var current string
	currentKnown := true
	var priorPrevious []string
	switch {
	case !newObject:
		current = state.TrustDomain.ValueString()
		if current == "" {
			current = kind.defaultTrustDomain
		}
		priorPrevious = listStrings(state.PreviousTrustDomains)
	case !mesh.Name.IsUnknown():
		current, currentKnown = r.liveTrustDomain(ctx, plan.Cluster, kind, mesh)
	default:
		currentKnown = false
	}

	if kind.name == meshKindSail {
		r.planAliases(&plan, config, planned, current, currentKnown, priorPrevious)
	} else {
		plan.PreviousTrustDomains = types.ListNull(types.StringType)
		plan.EffectiveTrustDomainAliases = types.ListNull(types.StringType)
	}

	if currentKnown && current != "" && !planned.IsUnknown() && current != planned.ValueString() {
		kept := slices.Contains(listStrings(plan.EffectiveTrustDomainAliases), current)
		if !kept {
			resp.Diagnostics.Append(trustDomainChangeWarning(kind, mesh, current, planned.ValueString()))
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	checkPlannedApply(ctx, r.Data, req, resp, plannedApply{Kind: kind.kube, Outputs: []string{"spiffe_id_prefix"},
		Object: func() (*unstructured.Unstructured, bool) {
			// What Update sends; with every planned value known, settleAliases has nothing left to settle.
			var d diag.Diagnostics
			obj, od := meshObject(plan, configuredWrites(ctx, req.Config, &d), kind, mesh)
			return obj, !d.HasError() && !od.HasError()
		}})
}

// planAliases works out which former trust domains stay aliases, and what
// the Sail Istio's trustDomainAliases will hold.
func (r *meshTrustDomainResource) planAliases(plan *meshTrustDomainResourceModel, config meshTrustDomainResourceModel,
	planned types.String, current string, currentKnown bool, priorPrevious []string) {
	if planned.IsUnknown() || plan.KeepPreviousAsAlias.IsUnknown() {
		plan.PreviousTrustDomains = types.ListUnknown(types.StringType)
		plan.EffectiveTrustDomainAliases = types.ListUnknown(types.StringType)
		return
	}
	td := planned.ValueString()
	var previous []string
	if plan.KeepPreviousAsAlias.ValueBool() {
		if !currentKnown {
			// A new resource on a cluster that could not be asked: the apply reads it.
			plan.PreviousTrustDomains = types.ListUnknown(types.StringType)
			plan.EffectiveTrustDomainAliases = types.ListUnknown(types.StringType)
			return
		}
		previous = previousTrustDomains(priorPrevious, current, td)
	}
	plan.PreviousTrustDomains = stringList(previous)
	if config.TrustDomainAliases.IsUnknown() {
		plan.EffectiveTrustDomainAliases = types.ListUnknown(types.StringType)
		return
	}
	plan.EffectiveTrustDomainAliases = stringList(effectiveAliases(listStrings(config.TrustDomainAliases), previous, td))
}

// previousTrustDomains adds the trust domain being left to those already
// kept, and drops the one being returned to.
func previousTrustDomains(prior []string, current, next string) []string {
	out := make([]string, 0, len(prior)+1)
	for _, td := range append(slices.Clone(prior), current) {
		if td != "" && td != next && !slices.Contains(out, td) {
			out = append(out, td)
		}
	}
	return out
}

func effectiveAliases(configured, previous []string, td string) []string {
	out := make([]string, 0, len(configured)+len(previous))
	for _, alias := range append(slices.Clone(configured), previous...) {
		if alias != td && !slices.Contains(out, alias) {
			out = append(out, alias)
		}
	}
	return out
}

func trustDomainChangeWarning(kind meshKind, mesh meshModel, from, to string) diag.Diagnostic {
	var detail string
	switch kind.name {
	case meshKindKuma:
		detail = fmt.Sprintf("The MeshTrust %s will hold the CA bundles of %q instead of %q: once Kuma applies it, "+
			"the mesh stops accepting certificates of %q unless another MeshTrust still trusts them.",
			mesh.describe(kind), to, from, from)
	default:
		detail = fmt.Sprintf("The mesh of %s changes its trust domain from %q to %q. Every workload's SPIFFE ID changes "+
			"(spiffe://%s/... becomes spiffe://%s/...), and each workload gets its new identity only when its certificate "+
			"rotates: until all have, workloads may fail to authenticate each other, and authorization policies that "+
			"name the old trust domain stop matching.", mesh.describe(kind), from, to, from, to)
		if kind.name == meshKindSail {
			detail += fmt.Sprintf(" Keep the old trust domain valid during the migration: set keep_previous_as_alias = "+
				"true (or add %q to trust_domain_aliases), and drop it once every certificate has rotated.", from)
		} else {
			detail += " The Kyma Istio module has no trust domain aliases, so plan a maintenance window and restart " +
				"the workloads right after the change."
		}
	}
	return diag.NewAttributeWarningDiagnostic(path.Root("trust_domain"), "Trust Domain Change", detail)
}

// liveTrustDomain asks the cluster, if it can be reached quickly, which trust
// domain the mesh object holds now; an Istio object without one runs on
// cluster.local. ok is false when the cluster could not be asked.
func (r *meshTrustDomainResource) liveTrustDomain(ctx context.Context, cluster types.String, kind meshKind, mesh meshModel) (string, bool) {
	if cluster.IsUnknown() || r.Data.Clusters.IsUnknown(providerdata.ClusterKey(cluster)) {
		return "", false
	}
	client, err := r.Data.Clusters.Client(providerdata.ClusterKey(cluster))
	if err != nil {
		return "", false
	}
	ctx, cancel := context.WithTimeout(ctx, meshLiveReadTimeout)
	defer cancel()
	obj, err := client.Get(ctx, kind.kube, mesh.Namespace.ValueString(), mesh.Name.ValueString())
	switch {
	case kube.IsNotFound(err):
		return "", true
	case err != nil:
		return "", false
	}
	return liveTrustDomainOf(kind, obj), true
}

func liveTrustDomainOf(kind meshKind, obj *unstructured.Unstructured) string {
	td, _, _ := unstructured.NestedString(obj.Object, kind.trustDomainPath...)
	if td == "" {
		td = kind.defaultTrustDomain
	}
	return td
}

func (r *meshTrustDomainResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan meshTrustDomainResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	kind, mesh, client := r.target(ctx, plan, &resp.Diagnostics)
	if client == nil {
		return
	}
	writes := configuredWrites(ctx, req.Config, &resp.Diagnostics)
	existing, ok := r.existingObject(ctx, client, kind, mesh, "create", &resp.Diagnostics)
	if !ok {
		return
	}
	settleAliases(&plan, kind, existing, nil)
	if prev, ok := client.Claim(kind.kube, mesh.key(), plan.ID.ValueString()); !ok {
		resp.Diagnostics.AddAttributeError(path.Root("mesh"), "Mesh Object Already Managed", fmt.Sprintf(
			"Another zerotrust_mesh_trust_domain in this configuration (%s) manages %s on cluster %q: keep only one.",
			prev, mesh.describe(kind), client.DisplayName()))
		return
	}
	out, ok := r.apply(ctx, client, kind, mesh, plan, writes, existing, "create", &resp.Diagnostics)
	if !ok {
		client.Release(kind.kube, mesh.key())
		return
	}
	resp.Diagnostics.Append(setMeshFromObject(&plan, kind, out)...)
	recordMeshOwnership(ctx, resp.Private, kind, client.FieldManager, out, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *meshTrustDomainResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan meshTrustDomainResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	kind, mesh, client := r.target(ctx, plan, &resp.Diagnostics)
	if client == nil {
		return
	}
	var prior meshTrustDomainResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	writes := configuredWrites(ctx, req.Config, &resp.Diagnostics)
	existing, ok := r.existingObject(ctx, client, kind, mesh, "update", &resp.Diagnostics)
	if !ok {
		return
	}
	settleAliases(&plan, kind, existing, listStrings(prior.PreviousTrustDomains))
	out, ok := r.apply(ctx, client, kind, mesh, plan, writes, existing, "update", &resp.Diagnostics)
	if !ok {
		return
	}
	resp.Diagnostics.Append(setMeshFromObject(&plan, kind, out)...)
	recordMeshOwnership(ctx, resp.Private, kind, client.FieldManager, out, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// meshWrites says which of the fields written only on request the
// configuration sets.
type meshWrites struct {
	trustDomain bool
	kumaMesh    bool
}

func configuredWrites(ctx context.Context, config tfsdk.Config, diags *diag.Diagnostics) meshWrites {
	var m meshTrustDomainResourceModel
	diags.Append(config.Get(ctx, &m)...)
	var mesh meshModel
	if !m.Mesh.IsNull() && !m.Mesh.IsUnknown() {
		diags.Append(m.Mesh.As(ctx, &mesh, basetypes.ObjectAsOptions{})...)
	}
	return meshWrites{trustDomain: !m.TrustDomain.IsNull(), kumaMesh: !mesh.KumaMesh.IsNull()}
}

// settleAliases works out, from the object read before the apply, what a
// plan could not know (a new resource planned without the cluster, or a
// trust domain this resource stops setting): the trust domain being left is
// the one the object holds now.
func settleAliases(plan *meshTrustDomainResourceModel, kind meshKind, existing *unstructured.Unstructured, priorPrevious []string) {
	if kind.name != meshKindSail {
		return
	}
	current := kind.defaultTrustDomain
	if existing != nil {
		current = liveTrustDomainOf(kind, existing)
	}
	target := current
	if td := effectiveTrustDomain(kind, plan.TrustDomain); !td.IsUnknown() {
		target = td.ValueString()
	}
	if plan.PreviousTrustDomains.IsUnknown() {
		var previous []string
		if plan.KeepPreviousAsAlias.ValueBool() {
			previous = previousTrustDomains(priorPrevious, current, target)
		}
		plan.PreviousTrustDomains = stringList(previous)
	}
	if plan.EffectiveTrustDomainAliases.IsUnknown() {
		plan.EffectiveTrustDomainAliases = stringList(effectiveAliases(listStrings(plan.TrustDomainAliases),
			listStrings(plan.PreviousTrustDomains), target))
	}
}

// target resolves the mesh object and the cluster client of a model.
func (r *meshTrustDomainResource) target(ctx context.Context, m meshTrustDomainResourceModel, diags *diag.Diagnostics) (meshKind, meshModel, *kube.Client) {
	var mesh meshModel
	if diags.HasError() {
		return meshKind{}, mesh, nil
	}
	diags.Append(m.Mesh.As(ctx, &mesh, basetypes.ObjectAsOptions{})...)
	kind, ok := meshKinds[mesh.Kind.ValueString()]
	if !ok && !diags.HasError() {
		diags.AddAttributeError(path.Root("mesh").AtName("kind"), "Unknown Mesh Kind",
			fmt.Sprintf("%q is not one of %s.", mesh.Kind.ValueString(), strings.Join(meshKindNames(), ", ")))
	}
	if diags.HasError() {
		return kind, mesh, nil
	}
	return kind, mesh, r.Data.Client(m.Cluster, diags)
}

// existingObject reads the mesh object. An operator's object must exist (the
// provider never creates one: it would be an Istio installation the operator
// did not plan); a missing MeshTrust is nil and created by the apply.
func (r *meshTrustDomainResource) existingObject(ctx context.Context, client *kube.Client, kind meshKind, mesh meshModel,
	verb string, diags *diag.Diagnostics) (*unstructured.Unstructured, bool) {
	obj, err := client.Get(ctx, kind.kube, mesh.Namespace.ValueString(), mesh.Name.ValueString())
	switch {
	case err == nil:
		return obj, true
	case kube.IsNotFound(err) && kind.createsObject:
		return nil, true
	case kube.IsNotFound(err):
		diags.AddAttributeError(path.Root("mesh"), "Mesh Object Not Found", fmt.Sprintf(
			"Could not %s the trust domain: %s does not exist on cluster %q. This resource sets only the trust fields "+
				"of a mesh object that %s manages. %s", verb, mesh.describe(kind), client.DisplayName(), kind.kube.ProvidedBy, kind.missingHint))
	default:
		diags.Append(kube.Diagnostic(err, fmt.Sprintf("%s the trust domain of %s", verb, mesh.describe(kind))))
	}
	return nil, false
}

// apply server-side applies exactly this resource's fields. On an existing
// object the apply carries its UID, which the API server treats as a
// precondition: an object deleted meanwhile is not silently recreated.
func (r *meshTrustDomainResource) apply(ctx context.Context, client *kube.Client, kind meshKind, mesh meshModel,
	m meshTrustDomainResourceModel, writes meshWrites, existing *unstructured.Unstructured, verb string, diags *diag.Diagnostics) (*unstructured.Unstructured, bool) {
	obj, d := meshObject(m, writes, kind, mesh)
	diags.Append(d...)
	if diags.HasError() {
		return nil, false
	}
	if existing != nil {
		obj.SetUID(existing.GetUID())
	}
	out, err := client.Apply(ctx, kind.kube, obj, m.ForceConflicts.ValueBool())
	if err != nil {
		diags.Append(meshApplyDiagnostic(err, kind, verb+" the trust domain of "+mesh.describe(kind)))
		return nil, false
	}
	return out, true
}

func meshApplyDiagnostic(err error, kind meshKind, action string) diag.Diagnostic {
	if apierrors.IsConflict(err) && strings.Contains(err.Error(), "uid mismatch") {
		return diag.NewAttributeErrorDiagnostic(path.Root("mesh"), "Mesh Object Deleted", fmt.Sprintf(
			"Could not %s: the object was deleted while Terraform was working on it. %s\n\n%v", action, kind.missingHint, err))
	}
	return kube.Diagnostic(err, action)
}

// meshObject is the apply configuration holding only this resource's fields:
// never a field the CRD defaults or the operator sets, and an optional one
// only when it is configured.
func meshObject(m meshTrustDomainResourceModel, writes meshWrites, kind meshKind, mesh meshModel) (*unstructured.Unstructured, diag.Diagnostics) {
	var diags diag.Diagnostics
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetName(mesh.Name.ValueString())
	obj.SetNamespace(mesh.Namespace.ValueString())
	set := func(value any, fields ...string) {
		if err := unstructured.SetNestedField(obj.Object, value, fields...); err != nil {
			diags.AddError("Cannot Build Object", fmt.Sprintf("Setting %s: %v. This is a bug in the provider.", strings.Join(fields, "."), err))
		}
	}
	if writes.trustDomain {
		set(m.TrustDomain.ValueString(), kind.trustDomainPath...)
	}
	switch kind.name {
	case meshKindSail:
		if !m.TrustDomainAliases.IsNull() || len(listStrings(m.PreviousTrustDomains)) > 0 {
			set(anySlice(listStrings(m.EffectiveTrustDomainAliases)), sailAliasesPath...)
		}
		if !m.CACertificates.IsNull() {
			set(caCertificatesJSON(m.CACertificates), sailCACertsPath...)
		}
		if !m.CAAddress.IsNull() {
			set(m.CAAddress.ValueString(), sailCAAddressPath...)
		}
	case meshKindKuma:
		bundles := make([]any, 0, len(m.CABundles.Elements()))
		for _, pem := range listStrings(m.CABundles) {
			bundles = append(bundles, map[string]any{"type": "Pem", "pem": map[string]any{"value": pem}})
		}
		set(bundles, kumaCABundlesPath...)
		if writes.kumaMesh {
			obj.SetLabels(map[string]string{kumaMeshLabel: mesh.KumaMesh.ValueString()})
		}
	}
	return obj, diags
}

func caCertificatesJSON(list types.List) []any {
	out := make([]any, 0, len(list.Elements()))
	for _, item := range list.Elements() {
		o, ok := item.(types.Object)
		if !ok || o.IsNull() {
			continue
		}
		a := o.Attributes()
		entry := map[string]any{}
		if s, ok := a["pem"].(types.String); ok && !s.IsNull() {
			entry["pem"] = s.ValueString()
		}
		if s, ok := a["spiffe_bundle_url"].(types.String); ok && !s.IsNull() {
			entry["spiffeBundleUrl"] = s.ValueString()
		}
		if l, ok := a["trust_domains"].(types.List); ok && !l.IsNull() {
			entry["trustDomains"] = anySlice(listStrings(l))
		}
		if l, ok := a["cert_signers"].(types.List); ok && !l.IsNull() {
			entry["certSigners"] = anySlice(listStrings(l))
		}
		out = append(out, entry)
	}
	return out
}

// setMeshFromObject copies what the object holds into the model, so edits
// made outside Terraform plan back. previous_trust_domains is bookkeeping of
// this resource and is kept; the aliases read are split into it and the
// configured ones.
func setMeshFromObject(m *meshTrustDomainResourceModel, kind meshKind, obj *unstructured.Unstructured) diag.Diagnostics {
	var diags diag.Diagnostics
	mesh := meshModel{
		Kind: types.StringValue(kind.name), Name: types.StringValue(obj.GetName()),
		Namespace: optionalString(obj.GetNamespace()), KumaMesh: types.StringNull(),
	}
	if kind.name == meshKindKuma {
		mesh.KumaMesh = optionalString(obj.GetLabels()[kumaMeshLabel])
	}
	m.Mesh = mesh.object()
	m.ID = types.StringValue(resourceID(m.Cluster, mesh.key()))
	td, found, _ := unstructured.NestedString(obj.Object, kind.trustDomainPath...)
	m.TrustDomain = types.StringNull()
	if found {
		m.TrustDomain = types.StringValue(td)
	}
	m.SPIFFEIDPrefix = spiffeIDPrefix(effectiveTrustDomain(kind, m.TrustDomain))
	if m.KeepPreviousAsAlias.IsNull() || m.KeepPreviousAsAlias.IsUnknown() {
		m.KeepPreviousAsAlias = types.BoolValue(false)
	}
	if m.ForceConflicts.IsNull() || m.ForceConflicts.IsUnknown() {
		m.ForceConflicts = types.BoolValue(false)
	}

	switch kind.name {
	case meshKindSail:
		previous := listStrings(m.PreviousTrustDomains)
		m.PreviousTrustDomains = stringList(previous)
		aliases, present, _ := unstructured.NestedStringSlice(obj.Object, sailAliasesPath...)
		m.EffectiveTrustDomainAliases = stringList(aliases)
		// An alias both configured and kept as a former trust domain is on
		// the object once; it stays configured.
		priorConfigured := listStrings(m.TrustDomainAliases)
		var configured []string
		for _, alias := range aliases {
			if !slices.Contains(previous, alias) || slices.Contains(priorConfigured, alias) {
				configured = append(configured, alias)
			}
		}
		switch {
		case !present, len(configured) == 0 && len(previous) > 0 && m.TrustDomainAliases.IsNull():
			m.TrustDomainAliases = types.ListNull(types.StringType)
		default:
			m.TrustDomainAliases = stringList(configured)
		}
		m.CACertificates = types.ListNull(types.ObjectType{AttrTypes: caCertificateAttrTypes})
		if items, found, _ := unstructured.NestedSlice(obj.Object, sailCACertsPath...); found {
			list, d := caCertificatesValue(items)
			diags.Append(d...)
			m.CACertificates = list
		}
		address, found, _ := unstructured.NestedString(obj.Object, sailCAAddressPath...)
		m.CAAddress = types.StringNull()
		if found {
			m.CAAddress = types.StringValue(address)
		}
	default:
		m.PreviousTrustDomains = types.ListNull(types.StringType)
		m.EffectiveTrustDomainAliases = types.ListNull(types.StringType)
		m.TrustDomainAliases = types.ListNull(types.StringType)
		m.CACertificates = types.ListNull(types.ObjectType{AttrTypes: caCertificateAttrTypes})
		m.CAAddress = types.StringNull()
	}
	m.CABundles = types.ListNull(types.StringType)
	if kind.name == meshKindKuma {
		items, _, _ := unstructured.NestedSlice(obj.Object, kumaCABundlesPath...)
		pems := make([]string, 0, len(items))
		for _, item := range items {
			if b, ok := item.(map[string]any); ok {
				if pem, ok := objMap(b, "pem"); ok {
					pems = append(pems, objText(pem["value"]))
				}
			}
		}
		m.CABundles = stringList(pems)
	}
	return diags
}

func caCertificatesValue(items []any) (types.List, diag.Diagnostics) {
	var diags diag.Diagnostics
	elemType := types.ObjectType{AttrTypes: caCertificateAttrTypes}
	values := make([]attr.Value, 0, len(items))
	optionalList := func(m map[string]any, key string) types.List {
		if _, ok := m[key]; !ok {
			return types.ListNull(types.StringType)
		}
		return stringList(objStrings(m, key))
	}
	for _, item := range items {
		entry, _ := item.(map[string]any)
		v, d := types.ObjectValue(caCertificateAttrTypes, map[string]attr.Value{
			"pem":               objString(entry, "pem"),
			"spiffe_bundle_url": objString(entry, "spiffeBundleUrl"),
			"trust_domains":     optionalList(entry, "trustDomains"),
			"cert_signers":      optionalList(entry, "certSigners"),
		})
		diags.Append(d...)
		values = append(values, v)
	}
	list, d := types.ListValue(elemType, values)
	diags.Append(d...)
	return list, diags
}

func (r *meshTrustDomainResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state meshTrustDomainResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || r.Data.Clusters.IsUnknown(providerdata.ClusterKey(state.Cluster)) {
		return
	}
	kind, mesh, client := r.target(ctx, state, &resp.Diagnostics)
	if client == nil {
		return
	}
	obj, err := client.Get(ctx, kind.kube, mesh.Namespace.ValueString(), mesh.Name.ValueString())
	if kube.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "read the trust domain of "+mesh.describe(kind)))
		return
	}
	resp.Diagnostics.Append(setMeshFromObject(&state, kind, obj)...)
	recordMeshOwnership(ctx, resp.Private, kind, client.FieldManager, obj, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Delete gives the fields back: the operator's defaults return. A MeshTrust
// that only this resource describes is deleted instead, as it cannot exist
// without a trust domain and CA bundles.
func (r *meshTrustDomainResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state meshTrustDomainResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	kind, mesh, client := r.target(ctx, state, &resp.Diagnostics)
	if client == nil {
		return
	}
	defer client.Release(kind.kube, mesh.key())
	obj, err := client.Get(ctx, kind.kube, mesh.Namespace.ValueString(), mesh.Name.ValueString())
	if kube.IsNotFound(err) || kube.IsCRDNotInstalled(err) {
		return
	}
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "release the trust domain of "+mesh.describe(kind)))
		return
	}
	if kind.createsObject && !othersOwnAny(obj, client.FieldManager, []string{"spec", "trustDomain"}, kumaCABundlesPath) {
		if err := client.Delete(ctx, kind.kube, mesh.Namespace.ValueString(), mesh.Name.ValueString()); err != nil {
			resp.Diagnostics.Append(kube.Diagnostic(err, "delete "+mesh.describe(kind)))
		}
		return
	}
	if !managesAny(obj, client.FieldManager) {
		// Nothing to give back (an imported object the resource never
		// wrote). An empty apply is not a no-op on an object without
		// managed fields: the API server would record them all as
		// "before-first-apply".
		return
	}
	release := &unstructured.Unstructured{Object: map[string]any{}}
	release.SetName(obj.GetName())
	release.SetNamespace(obj.GetNamespace())
	release.SetUID(obj.GetUID())
	if _, err := client.Apply(ctx, kind.kube, release, false); err != nil {
		if apierrors.IsConflict(err) && strings.Contains(err.Error(), "uid mismatch") {
			return // deleted meanwhile: nothing left to release
		}
		resp.Diagnostics.Append(kube.Diagnostic(err, "release the trust domain fields of "+mesh.describe(kind)))
	}
}

func (r *meshTrustDomainResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	cluster, key := parseImportID(req.ID)
	mesh, err := parseMeshKey(key)
	if err != nil {
		resp.Diagnostics.AddError("Invalid Import ID", fmt.Sprintf(
			"Expected [<cluster>/]<kind>[:<namespace>]:<name> or [<cluster>/]<kind> for the kind's default object, "+
				"e.g. \"istio_sail:default\", \"east/istio_kyma:kyma-system:default\" or \"kuma:kuma-system:west-example-com\". "+
				"Got %q: %v.", req.ID, err))
		return
	}
	if !cluster.IsNull() && r.Data != nil && !r.Data.CheckCluster(cluster, path.Root("cluster"), &resp.Diagnostics) {
		return
	}
	state := meshTrustDomainResourceModel{
		Cluster: cluster, Mesh: mesh.object(),
		TrustDomainAliases: types.ListNull(types.StringType), KeepPreviousAsAlias: types.BoolValue(false),
		PreviousTrustDomains: types.ListNull(types.StringType),
	}
	kind, mesh, client := r.target(ctx, state, &resp.Diagnostics)
	if client == nil {
		return
	}
	if kind.name == meshKindSail {
		state.PreviousTrustDomains = stringList(nil)
	}
	obj, err := client.Get(ctx, kind.kube, mesh.Namespace.ValueString(), mesh.Name.ValueString())
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "import the trust domain of "+mesh.describe(kind)))
		return
	}
	resp.Diagnostics.Append(setMeshFromObject(&state, kind, obj)...)
	recordMeshOwnership(ctx, resp.Private, kind, client.FieldManager, obj, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// parseMeshKey reads "<kind>", "<kind>:<name>" or "<kind>:<namespace>:<name>".
func parseMeshKey(key string) (meshModel, error) {
	parts := strings.Split(key, ":")
	kind, ok := meshKinds[parts[0]]
	if !ok {
		return meshModel{}, fmt.Errorf("the kind %q is not one of %s", parts[0], strings.Join(meshKindNames(), ", "))
	}
	m := meshModel{Kind: types.StringValue(kind.name), Namespace: optionalString(kind.defaultNamespace), KumaMesh: types.StringNull()}
	switch {
	case len(parts) == 1 && kind.defaultName != "":
		m.Name = types.StringValue(kind.defaultName)
	case len(parts) == 2 && !kind.kube.Namespaced:
		m.Name = types.StringValue(parts[1])
	case len(parts) == 3 && kind.kube.Namespaced:
		m.Namespace, m.Name = types.StringValue(parts[1]), types.StringValue(parts[2])
	case kind.kube.Namespaced:
		return meshModel{}, errors.New("a namespaced kind needs <kind>:<namespace>:<name>")
	default:
		return meshModel{}, errors.New("the cluster-scoped istio_sail needs <kind>:<name>")
	}
	if m.Name.ValueString() == "" || (kind.kube.Namespaced && m.Namespace.ValueString() == "") {
		return meshModel{}, errors.New("the name and namespace must not be empty")
	}
	return m, nil
}

// othersOwnAny reports whether a field manager other than manager owns any
// of the fields at paths.
func othersOwnAny(obj *unstructured.Unstructured, manager string, paths ...[]string) bool {
	return fieldsOwned(obj, func(e metav1.ManagedFieldsEntry) bool { return e.Manager != manager }, paths...)
}

// managesAny reports whether manager holds any field of obj.
func managesAny(obj *unstructured.Unstructured, manager string) bool {
	for _, entry := range obj.GetManagedFields() {
		if entry.Manager == manager {
			return true
		}
	}
	return false
}

// effectiveTrustDomain is the trust domain the mesh runs on when the object
// holds td: an Istio object without one runs on cluster.local.
func effectiveTrustDomain(kind meshKind, td types.String) types.String {
	if td.IsNull() && kind.defaultTrustDomain != "" {
		return types.StringValue(kind.defaultTrustDomain)
	}
	return td
}

// meshOwnershipKey names the private state entry that records which optional
// fields this resource's field manager held at the last read or apply.
const meshOwnershipKey = "owned_fields"

// meshOwnership tells, for each field the resource writes only when its
// attribute is configured, whether the resource holds it. An attribute
// removed from the configuration releases a held field (its value after the
// apply is the operator's or absent), while a field never held only mirrors
// what another manager set and stays as it is.
type meshOwnership struct {
	TrustDomain bool `json:"trust_domain"`
	KumaMesh    bool `json:"kuma_mesh"`
}

type meshPrivateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

type meshPrivateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

func readMeshOwnership(ctx context.Context, private meshPrivateGetter, diags *diag.Diagnostics) meshOwnership {
	var owned meshOwnership
	if private == nil {
		return owned
	}
	raw, d := private.GetKey(ctx, meshOwnershipKey)
	diags.Append(d...)
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &owned); err != nil {
			diags.AddWarning("Unreadable Private State", fmt.Sprintf(
				"The record of which mesh fields this resource holds could not be read (%v); the next apply rewrites it.", err))
		}
	}
	return owned
}

// recordMeshOwnership stores which optional fields manager holds on obj.
func recordMeshOwnership(ctx context.Context, private meshPrivateSetter, kind meshKind, manager string,
	obj *unstructured.Unstructured, diags *diag.Diagnostics) {
	mine := func(e metav1.ManagedFieldsEntry) bool { return e.Manager == manager }
	owned := meshOwnership{TrustDomain: fieldsOwned(obj, mine, kind.trustDomainPath)}
	if kind.name == meshKindKuma {
		owned.KumaMesh = fieldsOwned(obj, mine, kumaMeshLabelPath)
	}
	raw, err := json.Marshal(owned)
	if err != nil {
		diags.AddError("Cannot Record Field Ownership", fmt.Sprintf("%v. This is a bug in the provider.", err))
		return
	}
	diags.Append(private.SetKey(ctx, meshOwnershipKey, raw)...)
}

func spiffeIDPrefix(td types.String) types.String {
	switch {
	case td.IsUnknown():
		return types.StringUnknown()
	case td.IsNull():
		return types.StringNull()
	}
	return types.StringValue("spiffe://" + td.ValueString() + "/")
}

func listStrings(l types.List) []string {
	if l.IsNull() || l.IsUnknown() {
		return nil
	}
	out := make([]string, 0, len(l.Elements()))
	for _, v := range l.Elements() {
		if s, ok := v.(types.String); ok && !s.IsNull() && !s.IsUnknown() {
			out = append(out, s.ValueString())
		}
	}
	return out
}

// stringList is a known list; nil gives an empty list, not null.
func stringList(values []string) types.List {
	elems := make([]attr.Value, len(values))
	for i, v := range values {
		elems[i] = types.StringValue(v)
	}
	return types.ListValueMust(types.StringType, elems)
}

func anySlice(values []string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}
