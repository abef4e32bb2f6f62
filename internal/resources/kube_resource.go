package resources

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// This file is the skeleton of every resource that manages one Kubernetes
// object of one kind: the descriptor (kubeType) names the type and says how
// its model maps to the object, and kubeResource serves from it what such
// resources do alike (Read, ImportState, the id and cluster check of a
// plan, the plan and client an apply starts from, the refusal of an object
// it did not create, the state and identity it stores). A resource then writes its
// mapping and its behaviour (Create, Update, Delete, the rest of ModifyPlan)
// and nothing else.

// kubeType is the descriptor of a single-kind Kubernetes resource: its
// typeInfo and its model's mapping. M is the resource's model.
type kubeType[M any] struct {
	*typeInfo
	// ref points into a model: its id attribute and the values that name
	// its object.
	ref func(m *M) modelRef
	// kindOf is the kind of a model's object when it depends on the model
	// (domain_verification's API version); kinds[0] when nil.
	kindOf func(m M) kube.Kind
	// fromObject is the state import and list store for obj, read on
	// cluster with client.
	fromObject func(ctx context.Context, cluster types.String, obj *unstructured.Unstructured, client *kube.Client) (M, diag.Diagnostics)
	// refresh sets an existing model from its object (Read).
	refresh func(ctx context.Context, m *M, obj *unstructured.Unstructured) diag.Diagnostics
	// readWhat names a model's object on the cluster clusterName in the
	// error of a failed read ("read " + readWhat).
	readWhat func(m M, clusterName string) string
	// importWhat names the object an import reads, in its error;
	// "the <Kind> [<namespace>/]<name>" when nil.
	importWhat func(id objectIdentity) string
	// snapshot reads the object through the client's refresh snapshot
	// (kube.Client.GetForRefresh), for types a configuration holds by the
	// hundred.
	snapshot bool
	// afterRead is what a Read does beyond the mapping, after refresh and
	// before the state is stored; afterImport the same for ImportState.
	afterRead, afterImport func(ctx context.Context, data *providerdata.Data, client *kube.Client, m *M,
		obj *unstructured.Unstructured, private privateSetter) diag.Diagnostics
}

// modelRef is where a model holds its id and the values that name its
// object. namespace is null for cluster-scoped kinds; name is null when
// the kind allows one name only (importIDForm.fixedName).
type modelRef struct {
	id                       *types.String
	cluster, namespace, name types.String
}

// kubeResource is what a single-kind Kubernetes resource embeds.
type kubeResource[M any] struct {
	providerdata.ResourceBase
	*kubeType[M]
}

// identity is the identity of a model's object; known is false while a
// value naming it is unknown (a plan).
func (k *kubeType[M]) identity(m *M) (id objectIdentity, known bool) {
	r := k.ref(m)
	id = objectIdentity{Cluster: r.cluster.ValueString(), Namespace: r.namespace.ValueString(), Name: r.name.ValueString()}
	if r.name.IsNull() {
		id.Name = k.importID.fixedName
	}
	return id, !r.cluster.IsUnknown() && !r.namespace.IsUnknown() && !r.name.IsUnknown()
}

// identityOf is the identity of a model's object (list results, a Create's
// error path).
func (k *kubeType[M]) identityOf(m M) objectIdentity {
	id, _ := k.identity(&m)
	return id
}

// setID sets a model's id attribute from the values that name its object,
// unknown while one of them is.
func (k *kubeType[M]) setID(m *M) {
	id, known := k.identity(m)
	if !known {
		*k.ref(m).id = types.StringUnknown()
		return
	}
	*k.ref(m).id = types.StringValue(k.resourceIDOf(id))
}

// resourceIDOf is the id attribute of the object id names: resourceID of
// its cluster and the import ID's fields.
func (t *typeInfo) resourceIDOf(id objectIdentity) string {
	var key []string
	for _, f := range t.importID.fields() {
		if f == "namespace" {
			key = append(key, id.Namespace)
		} else {
			key = append(key, id.Name)
		}
	}
	return resourceID(clusterValue(id.Cluster), strings.Join(key, "/"))
}

// listed is the list result of obj on t's cluster: its identity and id,
// and the state fromObject builds when the request includes resources.
func (k *kubeType[M]) listed(ctx context.Context, t listTarget, obj *unstructured.Unstructured, includeResource bool,
) (listedObject, bool, diag.Diagnostics) {
	id := objectIdentity{Cluster: t.key, Name: obj.GetName()}
	if k.importID.fixedName != "" {
		id.Name = k.importID.fixedName
	}
	if k.shape.namespaced {
		id.Namespace = obj.GetNamespace()
	}
	lo := listedObject{id: id, display: k.resourceIDOf(id)}
	if !includeResource {
		return lo, false, nil
	}
	state, diags := k.fromObject(ctx, clusterValue(t.key), obj, t.client)
	lo.state = &state
	return lo, false, diags
}

// listedWhere is the list converter of the objects keep lets through (the
// list's filters); the others are left out silently.
func (k *kubeType[M]) listedWhere(keep func(obj *unstructured.Unstructured) bool) listConverter {
	return func(ctx context.Context, t listTarget, obj *unstructured.Unstructured, includeResource bool) (listedObject, bool, diag.Diagnostics) {
		if !keep(obj) {
			return listedObject{}, true, nil
		}
		return k.listed(ctx, t, obj, includeResource)
	}
}

func (k *kubeType[M]) kind(m M) kube.Kind {
	if k.kindOf != nil {
		return k.kindOf(m)
	}
	return k.kinds[0]
}

// store sets m's id, stores m as the state and sets the identity: how
// Create, Update and Read end.
func (k *kubeType[M]) store(ctx context.Context, m *M, state *tfsdk.State, identity *tfsdk.ResourceIdentity, diags *diag.Diagnostics) {
	k.setID(m)
	diags.Append(state.Set(ctx, m)...)
	id, _ := k.identity(m)
	diags.Append(id.set(ctx, k.shape, identity)...)
}

// planned is the prologue of a ModifyPlan: it reads the plan into m,
// completes it (plannedModel) and stores it. ok is false on a destroy,
// before the provider is configured, or once a diagnostic was added; a
// caller that changes m further sets the plan again.
func (k *kubeType[M]) planned(ctx context.Context, data *providerdata.Data, req resource.ModifyPlanRequest,
	resp *resource.ModifyPlanResponse,
) (m M, ok bool) {
	if req.Plan.Raw.IsNull() || data == nil {
		return m, false
	}
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || !k.plannedModel(ctx, data, &m, req.State.Raw.IsNull(), &resp.Diagnostics) {
		return m, false
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &m)...)
	return m, !resp.Diagnostics.HasError()
}

// plannedModel is planned's work on the model, for a Plan hook
// (fastpath.Hooks) too: it checks m's cluster key, sets its id and refuses
// a create of an object a Helm release owns (unless the type shares
// objects). ok is false once a diagnostic was added.
func (k *kubeType[M]) plannedModel(ctx context.Context, data *providerdata.Data, m *M, creating bool, diags *diag.Diagnostics) bool {
	if !data.CheckCluster(k.ref(m).cluster, path.Root("cluster"), diags) {
		return false
	}
	k.setID(m)
	if id, known := k.identity(m); known && creating && !k.sharesObject {
		planRefuseHelmOwned(ctx, data, k.ref(m).cluster, k.kind(*m), id.Namespace, id.Name, path.Root("name"), diags)
	}
	return !diags.HasError()
}

// applying is the prologue of a Create or Update: it reads the plan into m
// and connects to its cluster. client is nil once a diagnostic was added.
func (r *kubeResource[M]) applying(ctx context.Context, plan tfsdk.Plan, diags *diag.Diagnostics) (m M, client *kube.Client) {
	if diags.Append(plan.Get(ctx, &m)...); diags.HasError() {
		return m, nil
	}
	return m, r.Data.Client(r.ref(&m).cluster, diags)
}

// refuseForeign is the first step of a Create whose object may exist
// already: one this configuration's field manager did not write is refused
// (adoptGuard) at attribute at, with how to import it and otherwise, the
// other way out. existing is the object found, nil when there is none; ok is
// false once a diagnostic was added.
func (k *kubeType[M]) refuseForeign(ctx context.Context, client *kube.Client, m *M, at path.Path, otherwise string,
	diags *diag.Diagnostics,
) (existing *unstructured.Unstructured, ok bool) {
	id, _ := k.identity(m)
	existing, err := client.Get(ctx, k.kind(*m), id.Namespace, id.Name)
	if kube.IsNotFound(err) {
		return nil, true
	}
	if err != nil {
		diags.Append(kube.Diagnostic(err, "create "+k.readWhat(*m, client.DisplayName())))
		return nil, false
	}
	name := strings.TrimPrefix(id.Namespace+"/"+id.Name, "/")
	return existing, adoptGuard(existing, client, at, fmt.Sprintf(
		"The %s %q on cluster %q exists already and this configuration did not create it. Import it "+
			"(`terraform import` with ID %q, or an `import` block) to manage it, %s.",
		k.kind(*m).Kind, name, client.DisplayName(), k.resourceIDOf(id), otherwise), diags)
}

// Read implements resource.Resource: the object gone removes the resource,
// else the model is refreshed from it (refreshObject). A type with a fast
// path serves Read through fastpath.For with Refresh instead.
func (r *kubeResource[M]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state M
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// The identity is known from state: the framework requires one from
	// every way out of Read (object gone, connection not known yet), also
	// when the prior state holds none (written by Terraform < 1.12).
	id, _ := r.identity(&state)
	resp.Diagnostics.Append(id.setIfMissing(ctx, r.shape, resp.Identity)...)
	found, gone, diags := r.refreshObject(ctx, &state, resp.Private)
	resp.Diagnostics.Append(diags...)
	switch {
	case gone:
		resp.State.RemoveResource(ctx)
	case found:
		r.store(ctx, &state, &resp.State, resp.Identity, &resp.Diagnostics)
	}
}

// refreshObject is Read's work, whichever way Read goes: it reads the
// object state names and updates state from it (refresh, then afterRead,
// which keeps what it records in private). found is false when the object
// was not read (its cluster's connection is not known yet, the read
// failed), gone when it no longer exists.
func (r *kubeResource[M]) refreshObject(ctx context.Context, state *M, private privateSetter) (found, gone bool, diags diag.Diagnostics) {
	id, _ := r.identity(state)
	ref := r.ref(state)
	client := r.Data.ReadClient(ctx, ref.cluster, r.object(*ref.id), &diags)
	if client == nil {
		return false, false, diags
	}
	get := client.Get
	if r.snapshot {
		// What refresh and afterRead read of the object is theirs to say:
		// they get all of it.
		get = func(ctx context.Context, kind kube.Kind, namespace, name string) (*unstructured.Unstructured, error) {
			obj, err := client.GetForRefresh(ctx, kind, namespace, name)
			if err != nil {
				return nil, err
			}
			return obj.Full(), nil
		}
	}
	obj, err := get(ctx, r.kind(*state), id.Namespace, id.Name)
	if kube.IsNotFound(err) {
		return false, true, diags
	}
	if err != nil {
		diags.Append(kube.Diagnostic(err, "read "+r.readWhat(*state, client.DisplayName())))
		return false, false, diags
	}
	diags.Append(r.refresh(ctx, state, obj)...)
	if r.afterRead != nil {
		diags.Append(r.afterRead(ctx, r.Data, client, state, obj, private)...)
	}
	r.setID(state)
	return true, false, diags
}

// Identity and Refresh are the skeleton's part of fastpath.Hooks: a type
// with a fast path adds its Plan (ModifyPlan's work) and serves Read and
// ModifyPlan through its fastpath.For, so that both ways run refreshObject.
func (r *kubeResource[M]) Identity(ctx context.Context, m M, typ tftypes.Type) (tftypes.Value, error) {
	id, _ := r.identity(&m)
	return id.terraformValue(ctx, r.shape, typ)
}

// Refresh is refreshObject as a fastpath.Hooks refresh. What afterRead
// keeps in private state must be one key (fastpath.Refresh holds one).
// Nothing in the skeleton says something once per walk, so fast changes
// nothing; a type whose afterRead does cannot take this Refresh.
func (r *kubeResource[M]) Refresh(ctx context.Context, state *M, _ bool) (fastpath.Refresh, diag.Diagnostics) {
	var private onePrivateKey
	found, gone, diags := r.refreshObject(ctx, state, &private)
	return fastpath.Refresh{Found: found, Gone: gone, PrivateKey: private.key, Private: private.value}, diags
}

// onePrivateKey records what a refresh keeps in private state, for
// fastpath.Refresh: one key, a second one is an error.
type onePrivateKey struct {
	key   string
	value []byte
}

func (p *onePrivateKey) SetKey(_ context.Context, key string, value []byte) diag.Diagnostics {
	var diags diag.Diagnostics
	if p.key != "" && p.key != key {
		diags.AddError("Provider Error", fmt.Sprintf("A refresh kept private state under %q and %q, and the fast path "+
			"holds one key; please report this to the provider developers.", p.key, key))
		return diags
	}
	p.key, p.value = key, value
	return diags
}

// Delete implements resource.Resource for a resource whose object is its
// own: it deletes it, and an object or CRD already gone is no error. A
// resource that manages part of someone else's object, or leaves its object
// behind, writes its own.
func (r *kubeResource[M]) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state M
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client := r.Data.Client(r.ref(&state).cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	id, _ := r.identity(&state)
	err := client.Delete(ctx, r.kind(state), id.Namespace, id.Name)
	if err != nil && !kube.IsNotFound(err) && !kube.IsCRDNotInstalled(err) {
		resp.Diagnostics.Append(kube.Diagnostic(err, "delete "+r.readWhat(state, client.DisplayName())))
	}
}

// ImportState implements resource.ResourceWithImportState: the identity or
// import ID names the object, whose state fromObject builds.
func (r *kubeResource[M]) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, ok := r.importTarget(ctx, r.Data, req, &resp.Diagnostics)
	if !ok {
		return
	}
	what := fmt.Sprintf("the %s %s", r.kinds[0].Kind, id.Name)
	if r.importID.namespaced {
		what = fmt.Sprintf("the %s %s/%s", r.kinds[0].Kind, id.Namespace, id.Name)
	}
	if r.importWhat != nil {
		what = r.importWhat(id)
	}
	cluster := clusterValue(id.Cluster)
	client, obj := importedObject(ctx, r.Data, cluster, r.kinds[0], id.Namespace, id.Name, what, &resp.Diagnostics)
	if obj == nil {
		return
	}
	if !r.sharesObject && refuseHelmOwned(obj, client.DisplayName(), path.Empty(), &resp.Diagnostics) {
		return
	}
	state, d := r.fromObject(ctx, cluster, obj, client)
	resp.Diagnostics.Append(d...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	resp.Diagnostics.Append(id.set(ctx, r.shape, resp.Identity)...)
	if r.afterImport != nil {
		resp.Diagnostics.Append(r.afterImport(ctx, r.Data, client, &state, obj, resp.Private)...)
	}
}
