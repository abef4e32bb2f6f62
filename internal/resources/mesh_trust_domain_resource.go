package resources

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
)

var (
	_ resource.ResourceWithConfigure      = (*meshTrustDomainResource)(nil)
	_ resource.ResourceWithImportState    = (*meshTrustDomainResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*meshTrustDomainResource)(nil)
	_ resource.ResourceWithValidateConfig = (*meshTrustDomainResource)(nil)
	_ resource.ResourceWithIdentity       = (*meshTrustDomainResource)(nil)
)

// meshTrustDomainType: the identity is cluster, mesh kind, namespace ("" for
// the cluster-scoped istio_sail) and name; the import ID names the mesh
// object by its key (parseMeshKey).
var meshTrustDomainType = &typeInfo{
	name:  typename.MeshTrustDomain,
	kinds: meshKubeKinds(),
	shape: identityShape{kind: true, namespaced: true},
	importID: importIDForm{
		key: meshKeyIdentity,
		format: "[<cluster>/]<kind>[:<namespace>]:<name> or [<cluster>/]<kind> for the kind's default object, " +
			"e.g. \"istio_sail:default\", \"east/istio_kyma:kyma-system:default\" or \"kuma:kuma-system:west-example-com\"",
	},
	planChecks: []string{
		"which trust domain the mesh object holds now (the Trust Domain Change warning)",
	},
}

// meshTrustDomainObjectIdentity is the identity of the object a model's mesh names; the
// namespace is the one the object has, also when the configuration left it
// to the kind's default.
func meshTrustDomainObjectIdentity(cluster types.String, mesh meshModel) objectIdentity {
	return objectIdentity{
		Cluster: providerdata.ClusterKey(cluster), Kind: mesh.Kind.ValueString(),
		Namespace: mesh.Namespace.ValueString(), Name: mesh.Name.ValueString(),
	}
}

// NewMeshTrustDomainResource manages the trust domain of an Istio (Kyma or
// Sail) mesh, or a Kuma MeshTrust.
func NewMeshTrustDomainResource() resource.Resource {
	return &meshTrustDomainResource{typeInfo: meshTrustDomainType}
}

type meshTrustDomainResource struct {
	providerdata.ResourceBase
	*typeInfo
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
	storeMesh(ctx, &plan, kind, client.FieldManager, out, resp.Private, &resp.State, resp.Identity, &resp.Diagnostics)
}

func (r *meshTrustDomainResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state meshTrustDomainResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// The identity is known from state: the framework requires one from
	// every way out of Read (object gone, connection not known yet), also
	// when the prior state holds none (written by Terraform < 1.12).
	var m meshModel
	resp.Diagnostics.Append(state.Mesh.As(ctx, &m, basetypes.ObjectAsOptions{})...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(objectIdentity{Cluster: providerdata.ClusterKey(state.Cluster), Kind: m.Kind.ValueString(),
		Namespace: m.Namespace.ValueString(), Name: m.Name.ValueString()}.setIfMissing(ctx, meshTrustDomainType.shape, resp.Identity)...)
	if r.Data.Clusters.IsUnknown(providerdata.ClusterKey(state.Cluster)) {
		return
	}
	kind, mesh, client := r.target(ctx, state, &resp.Diagnostics)
	if client == nil || r.Data.KeepsState(ctx, client, r.object(state.ID), &resp.Diagnostics) {
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
	storeMesh(ctx, &state, kind, client.FieldManager, obj, resp.Private, &resp.State, resp.Identity, &resp.Diagnostics)
}

// storeMesh writes the state a read or an apply left on obj, with the
// resource identity (absent on clients without identities) and the record of
// the fields the resource holds.
func storeMesh(ctx context.Context, m *meshTrustDomainResourceModel, kind meshKind, manager string, obj *unstructured.Unstructured,
	private privateSetter, state *tfsdk.State, identity *tfsdk.ResourceIdentity, diags *diag.Diagnostics) {
	diags.Append(setMeshTrustDomainFromObject(ctx, m, kind, obj)...)
	recordMeshOwnership(ctx, private, kind, manager, obj, diags)
	diags.Append(state.Set(ctx, m)...)
	id := objectIdentity{Cluster: providerdata.ClusterKey(m.Cluster), Kind: kind.name, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	diags.Append(id.set(ctx, meshTrustDomainType.shape, identity)...)
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
	settleAliases(&plan, kind, existing, stringsOf(prior.PreviousTrustDomains))
	out, ok := r.apply(ctx, client, kind, mesh, plan, writes, existing, "update", &resp.Diagnostics)
	if !ok {
		return
	}
	storeMesh(ctx, &plan, kind, client.FieldManager, out, resp.Private, &resp.State, resp.Identity, &resp.Diagnostics)
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
	if state.KeepOnDestroy.ValueBool() {
		keepMeshFields(ctx, client, kind, mesh, obj, &resp.Diagnostics)
		return
	}
	keptManager := client.FieldManager + meshKeptManagerSuffix
	others := managerOf(client.FieldManager, keptManager).others()
	if kind.createsObject && !others.holds(obj, []string{"spec", "trustDomain"}, kumaCABundlesPath) {
		if err := client.Delete(ctx, kind.kube, mesh.Namespace.ValueString(), mesh.Name.ValueString()); err != nil {
			resp.Diagnostics.Append(kube.Diagnostic(err, "delete "+mesh.describe(kind)))
		}
		return
	}
	releaseMeshFields(ctx, client, kind, mesh, obj, &resp.Diagnostics)
	// Values an earlier destroy kept, which this resource took over (it
	// manages the same object), go back too: the destroy plan said so.
	if managerOf(keptManager).wrote(obj) && !resp.Diagnostics.HasError() {
		if keeper := keptMeshClient(client, &resp.Diagnostics); keeper != nil {
			releaseMeshFields(ctx, keeper, kind, mesh, obj, &resp.Diagnostics)
		}
	}
}

// releaseMeshFields gives back every field the client's field manager holds
// on obj: a field no other manager holds is removed.
func releaseMeshFields(ctx context.Context, client *kube.Client, kind meshKind, mesh meshModel, obj *unstructured.Unstructured, diags *diag.Diagnostics) {
	if err := releaseFields(ctx, client, kind.kube, obj); err != nil {
		diags.Append(kube.Diagnostic(err, "release the trust domain fields of "+mesh.describe(kind)))
	}
}

// meshKeptManagerSuffix makes, from the provider's field manager, the one
// that holds the values keep_on_destroy leaves behind.
const meshKeptManagerSuffix = "-kept"

// keepMeshFields is destroy with keep_on_destroy: the values stay, and so does
// a MeshTrust, but the provider's field manager lets go of them. Under
// server-side apply a field stays as long as any field manager holds it, so
// the kept manager first applies the values the object holds now (the same
// values: it becomes a co-owner, with no conflict), then the provider's
// manager releases its fields as a plain destroy does. Just skipping the
// release would keep the values as well, but leave them owned by the
// provider's field manager: a later resource of this provider on the same
// object, configured without them, would silently remove them. Fields the
// kept manager holds from an earlier destroy are applied again, or that
// apply would drop them.
func keepMeshFields(ctx context.Context, client *kube.Client, kind meshKind, mesh meshModel, obj *unstructured.Unstructured, diags *diag.Diagnostics) {
	keptManager := client.FieldManager + meshKeptManagerSuffix
	holds := managerOf(client.FieldManager, keptManager)
	kept := &unstructured.Unstructured{Object: map[string]any{}}
	kept.SetName(obj.GetName())
	kept.SetNamespace(obj.GetNamespace())
	kept.SetUID(obj.GetUID())
	keeps := false
	for _, p := range meshWrittenPaths(kind) {
		value, found, err := unstructured.NestedFieldCopy(obj.Object, p...)
		if err != nil || !found || !holds.holds(obj, p) {
			continue
		}
		if err := unstructured.SetNestedField(kept.Object, value, p...); err != nil {
			diags.AddError("Cannot Build Object", fmt.Sprintf("Setting %s: %v. This is a bug in the provider.", strings.Join(p, "."), err))
			return
		}
		keeps = true
	}
	if keeps {
		keeper := keptMeshClient(client, diags)
		if keeper == nil {
			return
		}
		if _, err := keeper.Apply(ctx, kind.kube, kept, false); err != nil {
			if kube.IsUIDMismatch(err) {
				return // deleted meanwhile: nothing left to keep
			}
			diags.Append(kube.Diagnostic(err, "hand the trust fields of "+mesh.describe(kind)+" to the field manager "+keptManager))
			return
		}
	}
	releaseMeshFields(ctx, client, kind, mesh, obj, diags)
}

// keptMeshClient is client with the field manager keep_on_destroy hands
// values to.
func keptMeshClient(client *kube.Client, diags *diag.Diagnostics) *kube.Client {
	manager := client.FieldManager + meshKeptManagerSuffix
	keeper, err := kube.NewClient(client.Name, client.RESTConfig(), manager)
	if err != nil {
		diags.AddError("Cannot Reach the Cluster", fmt.Sprintf("Building a client for the field manager %q: %v.", manager, err))
		return nil
	}
	return keeper
}

// meshWrittenPaths are the fields the resource may write on an object of kind.
func meshWrittenPaths(kind meshKind) [][]string {
	switch kind.name {
	case meshKindSail:
		return [][]string{kind.trustDomainPath, sailAliasesPath, sailCACertsPath, sailCAAddressPath}
	case meshKindKuma:
		return [][]string{kind.trustDomainPath, kumaCABundlesPath, kumaMeshLabelPath}
	}
	return [][]string{kind.trustDomainPath}
}

// meshKeyIdentity is the identity (without the cluster) of the mesh object an
// import ID's key, "<kind>[:<namespace>]:<name>" or "<kind>", names.
func meshKeyIdentity(key string) (objectIdentity, error) {
	mesh, err := parseMeshKey(key)
	if err != nil {
		return objectIdentity{}, err
	}
	return meshTrustDomainObjectIdentity(types.StringNull(), mesh), nil
}

// meshKubeKinds are the Kubernetes kinds of every mesh kind.
func meshKubeKinds() []kube.Kind {
	var out []kube.Kind
	for _, name := range meshKindNames() {
		out = append(out, meshKinds[name].kube)
	}
	return out
}

func (r *meshTrustDomainResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, ok := r.importTarget(ctx, r.Data, req, &resp.Diagnostics)
	if !ok {
		return
	}
	kind, mesh, err := meshFromIdentity(id)
	if err != nil {
		resp.Diagnostics.AddError("Invalid Import Identity", fmt.Sprintf("The identity does not name a mesh object: %v.", err))
		return
	}
	cluster := clusterValue(id.Cluster)
	client, obj := importedObject(ctx, r.Data, cluster, kind.kube, mesh.Namespace.ValueString(), mesh.Name.ValueString(),
		"the trust domain of "+mesh.describe(kind), &resp.Diagnostics)
	if obj == nil {
		return
	}
	state, diags := meshTrustDomainStateFromObject(ctx, cluster, kind, obj)
	resp.Diagnostics.Append(diags...)
	recordMeshOwnership(ctx, resp.Private, kind, client.FieldManager, obj, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	resp.Diagnostics.Append(meshTrustDomainObjectIdentity(cluster, mesh).set(ctx, meshTrustDomainType.shape, resp.Identity)...)
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
	obj, d := meshTrustDomainObjectFromModel(ctx, m, writes, kind, mesh)
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
	if kube.IsUIDMismatch(err) {
		return diag.NewAttributeErrorDiagnostic(path.Root("mesh"), "Mesh Object Deleted", fmt.Sprintf(
			"Could not %s: the object was deleted while Terraform was working on it. %s\n\n%v", action, kind.missingHint, err))
	}
	return kube.Diagnostic(err, action)
}

// readMeshOwnership reads the ownership record; one that does not decode
// reads as holding nothing, with a warning.
func readMeshOwnership(ctx context.Context, private privateGetter, diags *diag.Diagnostics) ownershipRecord {
	if private == nil {
		return ownershipRecord{}
	}
	owned, d, err := readOwnership(ctx, private)
	diags.Append(d...)
	if err != nil && !errors.Is(err, errNoOwnershipRecord) {
		diags.AddWarning("Unreadable Private State", fmt.Sprintf(
			"The record of which mesh fields this resource holds could not be read (%v); the next apply rewrites it.", err))
	}
	return owned
}

// recordMeshOwnership stores which optional fields manager holds on obj.
func recordMeshOwnership(ctx context.Context, private privateSetter, kind meshKind, manager string,
	obj *unstructured.Unstructured, diags *diag.Diagnostics) {
	names := []string{meshFieldTrustDomain}
	if kind.name == meshKindKuma {
		names = append(names, meshFieldKumaMesh)
	}
	owned := recordOwnership(obj, managerOf(manager), names,
		map[string][]string{meshFieldTrustDomain: kind.trustDomainPath, meshFieldKumaMesh: kumaMeshLabelPath})
	diags.Append(writeOwnership(ctx, private, owned)...)
}
