package resources

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// meshLiveReadTimeout bounds the best-effort read of the mesh object while
// planning a new resource (for the trust-domain-change warning): planning
// must never depend on the cluster.
const meshLiveReadTimeout = 5 * time.Second

// ValidateConfig refuses settings the chosen kind of mesh object has no
// field for, and the kinds' own rules: validateSail, validateKyma or
// validateKuma.
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
	v := meshConfigCheck{config: config, mesh: mesh, kind: kind, diags: &resp.Diagnostics}
	switch kind.name {
	case meshKindSail:
		v.validateSail()
	case meshKindKyma:
		v.validateKyma()
	case meshKindKuma:
		v.validateKuma()
	}
}

// meshConfigCheck is the configuration ValidateConfig checks against the
// rules of its mesh kind.
type meshConfigCheck struct {
	config meshTrustDomainResourceModel
	mesh   meshModel
	kind   meshKind
	diags  *diag.Diagnostics
}

// refuse reports the attribute at p, when set, as one the kind has no
// field for; fix says what to do instead.
func (v meshConfigCheck) refuse(p path.Path, set bool, fix string) {
	if !set {
		return
	}
	what := map[string]string{
		meshKindKyma: "the Kyma Istio module's Istio object has only spec.config.trustDomain",
		meshKindSail: "the Sail operator's Istio object has no such field",
		meshKindKuma: "a Kuma MeshTrust has only a trust domain and CA bundles",
	}[v.kind.name]
	validate.AttributeError(v.diags, p, "Not Supported by This Mesh Kind", fmt.Sprintf(
		"mesh.kind is %q, and %s. %s", v.kind.name, what, fix))
}

// refuseKumaOnly refuses what only a Kuma MeshTrust has.
func (v meshConfigCheck) refuseKumaOnly() {
	v.refuse(path.Root("mesh").AtName("kuma_mesh"), !v.mesh.KumaMesh.IsNull(), "kuma_mesh applies to mesh.kind = \"kuma\" only.")
	v.refuse(path.Root("ca_bundles"), !v.config.CABundles.IsNull(),
		"ca_bundles applies to mesh.kind = \"kuma\"; for istio_sail use ca_certificates.")
}

// refuseSailOnly refuses what only the Sail operator's Istio has.
func (v meshConfigCheck) refuseSailOnly() {
	v.refuse(path.Root("ca_certificates"), !v.config.CACertificates.IsNull(), "ca_certificates applies to mesh.kind = \"istio_sail\" only.")
	v.refuse(path.Root("ca_address"), !v.config.CAAddress.IsNull(), "ca_address applies to mesh.kind = \"istio_sail\" only.")
}

// refuseAliases refuses the alias attributes of a kind that has none.
func (v meshConfigCheck) refuseAliases(fix string) {
	v.refuse(path.Root("trust_domain_aliases"), !v.config.TrustDomainAliases.IsNull(), fix)
	v.refuse(path.Root("keep_previous_as_alias"), v.config.KeepPreviousAsAlias.ValueBool(), fix)
}

// validateSail: the Sail operator's Istio is cluster-scoped, and an alias
// must not be the trust domain itself.
func (v meshConfigCheck) validateSail() {
	v.refuse(path.Root("mesh").AtName("namespace"), !v.mesh.Namespace.IsNull(),
		"The Sail operator's Istio is cluster-scoped: remove mesh.namespace.")
	v.refuseKumaOnly()
	if v.config.TrustDomain.IsUnknown() || v.config.TrustDomainAliases.IsUnknown() {
		return
	}
	td := v.config.TrustDomain.ValueString()
	if td == "" {
		td = v.kind.defaultTrustDomain
	}
	for i, alias := range v.config.TrustDomainAliases.Elements() {
		if s, ok := alias.(types.String); ok && !s.IsUnknown() && s.ValueString() == td {
			validate.AttributeError(v.diags, path.Root("trust_domain_aliases").AtListIndex(i), "Alias Equals Trust Domain", fmt.Sprintf(
				"%q is the trust domain itself, not an alias of it: remove it from trust_domain_aliases.", td))
		}
	}
}

// validateKyma: the Kyma Istio module's Istio has a trust domain only.
func (v meshConfigCheck) validateKyma() {
	v.refuseAliases("The Kyma Istio module cannot keep a former trust domain as an alias; remove the attribute.")
	v.refuseKumaOnly()
	v.refuseSailOnly()
}

// validateKuma: a MeshTrust names the trust domain its CA bundles belong
// to, within Kuma's length limit, and holds at least one bundle.
func (v meshConfigCheck) validateKuma() {
	v.refuseAliases("Remove the attribute; each trusted trust domain gets its own MeshTrust (one resource each).")
	if v.config.TrustDomain.IsNull() {
		validate.AttributeError(v.diags, path.Root("trust_domain"), "Missing Trust Domain",
			"A Kuma MeshTrust names the trust domain its CA bundles belong to: set trust_domain, e.g. to "+
				"data.zerotrust_trust_bundle.<peer>.trust_domain.")
	} else if n := len(v.config.TrustDomain.ValueString()); !v.config.TrustDomain.IsUnknown() && n > kumaMaxTrustDomainLen {
		validate.AttributeError(v.diags, path.Root("trust_domain"), "Trust Domain Too Long", fmt.Sprintf(
			"A Kuma MeshTrust's trustDomain has at most %d characters; this one has %d.", kumaMaxTrustDomainLen, n))
	}
	if v.config.CABundles.IsNull() {
		validate.AttributeError(v.diags, path.Root("ca_bundles"), "Missing CA Bundles",
			"A Kuma MeshTrust needs at least one CA bundle: set ca_bundles, e.g. to "+
				"[data.zerotrust_trust_bundle.<peer>.x509_authorities_pem].")
	}
	v.refuseSailOnly()
}

// ModifyPlan plans what every kind of mesh shares (the object's name and
// namespace, replacement by another object, the trust domain left unset, id
// and spiffe_id_prefix), then what the kind adds: planSail, planKyma or
// planKuma.
func (r *meshTrustDomainResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		if !req.State.Raw.IsNull() {
			warnDestroyReverts(ctx, req, resp)
		}
		return
	}
	if r.Data == nil {
		return
	}
	p, ok := r.planMesh(ctx, req, resp)
	if !ok {
		return
	}
	switch p.kind.name {
	case meshKindSail:
		p.planSail(&resp.Diagnostics)
	case meshKindKyma:
		p.planKyma(&resp.Diagnostics)
	case meshKindKuma:
		p.planKuma(&resp.Diagnostics)
	}
	plan, kind, mesh := p.plan, p.kind, p.mesh
	plan.Mesh = mesh.object()
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	checkPlannedApply(ctx, r.Data, req, resp, plannedApply{Kind: kind.kube, Outputs: []string{"spiffe_id_prefix"},
		Object: func() (*unstructured.Unstructured, bool) {
			// What Update sends; with every planned value known, settleAliases has nothing left to settle.
			var d diag.Diagnostics
			obj, od := meshTrustDomainObjectFromModel(ctx, plan, configuredWrites(ctx, req.Config, &d), kind, mesh)
			return obj, !d.HasError() && !od.HasError()
		}})
}

// meshPlan is a mesh_trust_domain plan once the part every kind shares is
// done; the kind's own step (planSail, planKyma, planKuma) completes plan
// and mesh.
type meshPlan struct {
	plan, config meshTrustDomainResourceModel
	// state is nil for a resource not created yet.
	state                       *meshTrustDomainResourceModel
	kind                        meshKind
	mesh, configMesh, priorMesh meshModel
	// newObject: the apply creates the resource or replaces it (another
	// mesh object), so nothing of the prior state carries over.
	newObject bool
	owned     ownershipRecord
	// planned is the trust domain the mesh runs on after the apply (the
	// kind's default when unset); current the one it runs on now,
	// currentKnown false when that could not be found out.
	planned      types.String
	current      string
	currentKnown bool
}

// planMesh reads the request and plans what every kind of mesh shares. ok
// is false when there is nothing more to plan (an error, an unknown mesh).
func (r *meshTrustDomainResource) planMesh(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) (meshPlan, bool) {
	var p meshPlan
	resp.Diagnostics.Append(req.Plan.Get(ctx, &p.plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &p.config)...)
	if !req.State.Raw.IsNull() {
		p.state = &meshTrustDomainResourceModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, p.state)...)
	}
	if resp.Diagnostics.HasError() || !r.Data.CheckCluster(p.plan.Cluster, path.Root("cluster"), &resp.Diagnostics) {
		return p, false
	}
	if p.plan.Mesh.IsUnknown() {
		return p, false
	}
	resp.Diagnostics.Append(p.plan.Mesh.As(ctx, &p.mesh, basetypes.ObjectAsOptions{})...)
	resp.Diagnostics.Append(p.config.Mesh.As(ctx, &p.configMesh, basetypes.ObjectAsOptions{})...)
	if resp.Diagnostics.HasError() || p.mesh.Kind.IsUnknown() {
		return p, false
	}
	var ok bool
	if p.kind, ok = meshKinds[p.mesh.Kind.ValueString()]; !ok {
		return p, false
	}
	if !planMeshTarget(p.kind, p.configMesh, p.plan.TrustDomain, &p.mesh, &resp.Diagnostics) {
		return p, false
	}
	// Another mesh object is another resource: the attribute's own plan
	// modifiers cannot tell, as the defaults are only known here. The Kuma
	// mesh label is a field of the same object, so it changes in place.
	p.newObject = p.state == nil
	if p.state != nil {
		resp.Diagnostics.Append(p.state.Mesh.As(ctx, &p.priorMesh, basetypes.ObjectAsOptions{})...)
		if resp.Diagnostics.HasError() {
			return p, false
		}
		if !p.priorMesh.sameObject(p.mesh) {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("mesh"))
			p.newObject = true
		}
	}

	// An attribute left out of the configuration is not written: it shows
	// what the object holds (set by the operator or another field manager,
	// or absent). Read keeps it current, so an existing object's value
	// stands; a new object's is known once applied, and so is the value a
	// field takes when this resource stops setting it (the apply releases it).
	p.owned = readMeshOwnership(ctx, req.Private, &resp.Diagnostics)
	if p.config.TrustDomain.IsNull() {
		switch {
		case p.newObject || p.owned.held(meshFieldTrustDomain):
			p.plan.TrustDomain = types.StringUnknown()
		default:
			p.plan.TrustDomain = p.state.TrustDomain
		}
	}
	if p.configMesh.KumaMesh.IsNull() {
		p.mesh.KumaMesh = types.StringNull() // planKuma plans Kuma's own
	}
	if p.mesh.Name.IsUnknown() {
		p.plan.ID = types.StringUnknown()
	} else {
		p.plan.ID = types.StringValue(resourceID(p.plan.Cluster, p.mesh.key()))
	}
	p.planned = effectiveTrustDomain(p.kind, p.plan.TrustDomain)
	p.plan.SPIFFEIDPrefix = spiffeIDPrefix(p.planned)
	p.current, p.currentKnown = r.currentTrustDomain(ctx, p.plan.Cluster, p.kind, p.mesh, p.state, p.newObject, &resp.Diagnostics)
	return p, true
}

// planSail: the Sail operator's Istio keeps former trust domains valid as
// trustDomainAliases, so a change warns only when the trust domain being
// left is not kept as one.
func (p *meshPlan) planSail(diags *diag.Diagnostics) {
	var priorPrevious []string
	if !p.newObject {
		priorPrevious = stringsOf(p.state.PreviousTrustDomains)
	}
	planAliases(&p.plan, p.config, p.planned, p.current, p.currentKnown, priorPrevious)
	if !slices.Contains(stringsOf(p.plan.EffectiveTrustDomainAliases), p.current) {
		p.warnTrustDomainChange(diags)
	}
}

// planKyma: the Kyma Istio module's Istio has a trust domain and nothing
// else to plan: no aliases, so every change warns.
func (p *meshPlan) planKyma(diags *diag.Diagnostics) {
	p.planNoAliases()
	p.warnTrustDomainChange(diags)
}

// planKuma: a MeshTrust carries its mesh's `kuma.io/mesh` label, and no
// aliases (each trusted trust domain has a MeshTrust of its own); a change
// warns.
func (p *meshPlan) planKuma(diags *diag.Diagnostics) {
	if p.configMesh.KumaMesh.IsNull() {
		p.mesh.KumaMesh = planUnsetKumaMesh(p.newObject, p.owned, p.priorMesh)
	}
	p.planNoAliases()
	p.warnTrustDomainChange(diags)
}

// planNoAliases plans the alias attributes of a kind that has none.
func (p *meshPlan) planNoAliases() {
	p.plan.PreviousTrustDomains = types.ListNull(types.StringType)
	p.plan.EffectiveTrustDomainAliases = types.ListNull(types.StringType)
}

// warnTrustDomainChange warns of a known change of the trust domain the mesh
// runs on now.
func (p *meshPlan) warnTrustDomainChange(diags *diag.Diagnostics) {
	if p.currentKnown && p.current != "" && !p.planned.IsUnknown() && p.current != p.planned.ValueString() {
		diags.Append(trustDomainChangeWarning(p.kind, p.mesh, p.current, p.planned.ValueString()))
	}
}

// planMeshTarget fills in the mesh object the configuration leaves to the
// kind: its namespace, and its name, which for Kuma derives from the trust
// domain (kumaObjectName) and for the Istio kinds is the operator's
// singleton. false when the derived name is not a valid object name.
func planMeshTarget(kind meshKind, configMesh meshModel, trustDomain types.String, mesh *meshModel, diags *diag.Diagnostics) bool {
	if configMesh.Namespace.IsNull() {
		mesh.Namespace = optionalString(kind.defaultNamespace)
	}
	if !configMesh.Name.IsNull() {
		return true
	}
	switch {
	case kind.defaultName != "":
		mesh.Name = types.StringValue(kind.defaultName)
	case trustDomain.IsUnknown():
		mesh.Name = types.StringUnknown()
	default:
		name := kumaObjectName(trustDomain.ValueString())
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			validate.AttributeError(diags, path.Root("mesh").AtName("name"), "Cannot Derive Object Name", fmt.Sprintf(
				"The MeshTrust name derived from trust_domain (%q) is not a valid object name: %s. Set mesh.name.",
				name, strings.Join(msgs, "; ")))
			return false
		}
		mesh.Name = types.StringValue(name)
	}
	return true
}

// planUnsetKumaMesh plans a MeshTrust's `kuma.io/mesh` label when the
// configuration leaves it out: the object's value, known once applied for a
// new object or when this resource stops setting it.
func planUnsetKumaMesh(newObject bool, owned ownershipRecord, prior meshModel) types.String {
	if newObject || owned.held(meshFieldKumaMesh) {
		return types.StringUnknown()
	}
	return prior.KumaMesh
}

// currentTrustDomain is the trust domain the mesh runs on now, "" when it
// has none: from state for an existing resource (the kind's default when
// unset), else asked of the cluster when it answers quickly. known is false
// when it could not be found out.
func (r *meshTrustDomainResource) currentTrustDomain(ctx context.Context, cluster types.String, kind meshKind, mesh meshModel,
	state *meshTrustDomainResourceModel, newObject bool, diags *diag.Diagnostics) (current string, known bool) {
	switch {
	case !newObject:
		if current = state.TrustDomain.ValueString(); current == "" {
			current = kind.defaultTrustDomain
		}
		return current, true
	case !mesh.Name.IsUnknown():
		return r.liveTrustDomain(ctx, cluster, kind, mesh, diags)
	}
	return "", false
}

// planAliases works out which former trust domains stay aliases, and what
// the Sail Istio's trustDomainAliases will hold.
func planAliases(plan *meshTrustDomainResourceModel, config meshTrustDomainResourceModel,
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
	plan.EffectiveTrustDomainAliases = stringList(effectiveAliases(stringsOf(config.TrustDomainAliases), previous, td))
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
func (r *meshTrustDomainResource) liveTrustDomain(ctx context.Context, cluster types.String, kind meshKind, mesh meshModel,
	diags *diag.Diagnostics) (string, bool) {
	ctx, client, cancel := planLookup(ctx, r.Data, cluster, meshLiveReadTimeout, diags)
	defer cancel()
	if client == nil {
		return "", false
	}
	obj, err := client.Get(ctx, kind.kube, mesh.Namespace.ValueString(), mesh.Name.ValueString())
	switch {
	case kube.IsNotFound(err):
		return "", true
	case err != nil:
		return "", false
	}
	return liveTrustDomainOf(kind, obj), true
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
		plan.EffectiveTrustDomainAliases = stringList(effectiveAliases(stringsOf(plan.TrustDomainAliases),
			stringsOf(plan.PreviousTrustDomains), target))
	}
}

// warnDestroyReverts warns when destroying the resource hands an Istio
// mesh's trust domain back: the operator's default (cluster.local) returns,
// which changes every workload identity at once (Istio's trust domain design
// calls such a change downtime). Nothing to say when keep_on_destroy leaves
// the value, when the resource never held the field (an imported object it
// never wrote: destroy releases nothing), or when the mesh already runs on
// the default.
func warnDestroyReverts(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var state meshTrustDomainResourceModel
	var mesh meshModel
	if req.State.Get(ctx, &state).HasError() || state.Mesh.IsNull() || state.Mesh.As(ctx, &mesh, basetypes.ObjectAsOptions{}).HasError() {
		return
	}
	kind, ok := meshKinds[mesh.Kind.ValueString()]
	td := state.TrustDomain.ValueString()
	if !ok || kind.defaultTrustDomain == "" || state.KeepOnDestroy.ValueBool() || td == "" || td == kind.defaultTrustDomain {
		return
	}
	var diags diag.Diagnostics
	if !readMeshOwnership(ctx, req.Private, &diags).held(meshFieldTrustDomain) {
		return
	}
	resp.Diagnostics.AddWarning("Mesh Reverts to cluster.local", fmt.Sprintf(
		"Destroying this resource gives %s of %s back to the operator: the mesh returns to its default trust domain "+
			"%q (from %q), and with it every workload identity changes (spiffe://%s/... becomes spiffe://%s/...) as "+
			"certificates rotate. Until all have rotated, workloads may fail to authenticate each other, and "+
			"authorization policies and federated peers that name %q stop matching: a trust domain change is "+
			"downtime.\n\nTo keep the mesh on %q after Terraform forgets it, set keep_on_destroy = true and apply "+
			"before destroying: the values then stay on the object. To leave the trust domain on purpose, migrate as "+
			"for any trust domain change (for Sail, keep the old one as an alias until certificates have rotated).",
		strings.Join(kind.trustDomainPath, "."), mesh.describe(kind), kind.defaultTrustDomain, td, td,
		kind.defaultTrustDomain, td, td))
}
