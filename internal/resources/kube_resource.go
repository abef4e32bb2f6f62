package resources

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
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
// resources do alike (Read, ImportState, Delete, the prologue of a plan,
// the plan and client an apply starts from, the refusal of an object it did
// not create, the state and identity it stores). A resource then writes its
// mapping, Create and Update, the rest of its ModifyPlan, and the hooks of
// the steps it does its own way (completing, plan, refreshing, deleting);
// it declares none of the skeleton's methods (internal/conventions).

// kubeType is the descriptor of a single-kind Kubernetes resource: its
// typeInfo and its model's mapping. M is the resource's model.
type kubeType[M any] struct {
	*typeInfo
	// ref points into a model: its id attribute and the values that name
	// its object. Required, as fromObject and refresh are
	// (TestKubeTypesAreComplete); every other hook has a default.
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
	// error of a failed read or delete ("read " + readWhat); "the <Kind>
	// [<namespace>/]<name>" when nil.
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
	// completing is the type's part of the plan prologue (plannedModel),
	// after the cluster check and before the id is set: values derived from
	// others (a name from the trust domain) or decided by a lookup. state
	// is nil on a create.
	completing func(ctx context.Context, data *providerdata.Data, m *M, config M, state *M, diags *diag.Diagnostics)
	// helmSeenByPlan: the type's plan reads every object of its kind and
	// refuses one a Helm release owns itself (federated_trust_domain's
	// duplicate check), so the prologue does not read the object again.
	helmSeenByPlan bool
	// mayAdopt reports a create that may take the object as it is and
	// write nothing to it (domain_verification's adopt_existing): an
	// object a Helm release owns is then no reason to refuse the plan.
	mayAdopt func(m M) bool
	// fastSchema is the resource schema of a type a configuration holds by
	// the hundred: its Read, plan prologue (planned) and ValidateConfig
	// (validated) then go through a fastpath.For of it, with the
	// skeleton's Identity, Refresh and Plan as the hooks; plan is the rest
	// of Plan after the prologue.
	fastSchema func() schema.Schema
	plan       func(ctx context.Context, r *kubeResource[M], plan *M, config M, state *M, private fastpath.PrivateGetter) diag.Diagnostics
	// refreshing replaces refreshObject as the Refresh of a type whose
	// refresh says something once per walk (fast as in fastpath.Hooks).
	refreshing func(ctx context.Context, r *kubeResource[M], state *M, fast bool) (fastpath.Refresh, diag.Diagnostics)
	// deleting is what Delete does once it has read the state and built
	// the cluster's client, for a type that does more than delete its
	// object (it may call deleteObject) or manages part of someone else's
	// object; nil deletes the object.
	deleting func(ctx context.Context, r *kubeResource[M], client *kube.Client, m M, diags *diag.Diagnostics)

	fastOnce sync.Once
	fastFor  *fastpath.For[M]
}

// fast is the type's fastpath.For, built once from fastSchema; nil for a
// type without one.
func (k *kubeType[M]) fast() *fastpath.For[M] {
	if k.fastSchema == nil {
		return nil
	}
	k.fastOnce.Do(func() {
		k.fastFor = fastpath.New[M](context.Background(), k.fastSchema(), k.shape.schema())
	})
	return k.fastFor
}

// what names a model's object on cluster clusterName in an error: readWhat,
// or "the <Kind> [<namespace>/]<name>".
func (k *kubeType[M]) what(m M, clusterName string) string {
	if k.readWhat != nil {
		return k.readWhat(m, clusterName)
	}
	id, _ := k.identity(&m)
	return "the " + k.kind(m).Kind + " " + strings.TrimPrefix(id.Namespace+"/"+id.Name, "/")
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

// planned is the prologue of a ModifyPlan: it reads the plan into m (the
// response's, which plan modifiers of the resource may have changed),
// completes it (plannedModel) and stores it; a type with a fast path goes
// through its fastpath.For, whose Plan hook is the skeleton's Plan. config
// is the configuration. ok is false on a destroy, before the provider is
// configured, or once a diagnostic was added; a caller that changes m
// further sets the plan again.
func (r *kubeResource[M]) planned(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse,
) (m, config M, ok bool) {
	if f := r.fast(); f != nil {
		return f.ModifyPlan(ctx, r.hooks(), req, resp)
	}
	if req.Plan.Raw.IsNull() || r.Data == nil {
		return m, config, false
	}
	resp.Diagnostics.Append(resp.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	var state *M
	if !req.State.Raw.IsNull() {
		state = new(M)
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	}
	if resp.Diagnostics.HasError() || !r.plannedModel(ctx, r.Data, &m, config, state, &resp.Diagnostics) {
		return m, config, false
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &m)...)
	return m, config, !resp.Diagnostics.HasError()
}

// plannedModel is planned's work on the model, for the Plan hook too: it
// checks m's cluster key, completes m (completing), sets its id and
// refuses a create of an object a Helm release owns (unless the type
// shares objects or the create may adopt it). state is nil on a create; ok
// is false once a diagnostic was added.
func (k *kubeType[M]) plannedModel(ctx context.Context, data *providerdata.Data, m *M, config M, state *M, diags *diag.Diagnostics) bool {
	if !data.CheckCluster(k.ref(m).cluster, path.Root("cluster"), diags) {
		return false
	}
	if k.completing != nil {
		if k.completing(ctx, data, m, config, state, diags); diags.HasError() {
			return false
		}
	}
	k.setID(m)
	adopting := k.mayAdopt != nil && k.mayAdopt(*m)
	if id, known := k.identity(m); known && state == nil && !k.sharesObject && !adopting && !k.helmSeenByPlan {
		at := path.Root("name")
		if k.importID.fixedName != "" {
			at = path.Root("namespace") // the one name of its kind is no attribute
		}
		planRefuseHelmOwned(ctx, data, k.ref(m).cluster, k.kind(*m), id.Namespace, id.Name, at, diags)
	}
	return !diags.HasError()
}

// Plan is the skeleton's part of fastpath.Hooks for a type with a fast
// path: the prologue (plannedModel), then the type's plan.
func (r *kubeResource[M]) Plan(ctx context.Context, plan *M, config M, state *M, private fastpath.PrivateGetter) diag.Diagnostics {
	var diags diag.Diagnostics
	if !r.plannedModel(ctx, r.Data, plan, config, state, &diags) || r.plan == nil {
		return diags
	}
	diags.Append(r.plan(ctx, r, plan, config, state, private)...)
	return diags
}

// validated is a ValidateConfig's prologue: the configuration read (through
// the fast path's codec for a type with one), then check.
func (r *kubeResource[M]) validated(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse,
	check func(ctx context.Context, config M, diags *diag.Diagnostics),
) {
	if f := r.fast(); f != nil {
		f.ValidateConfig(ctx, req, resp, check)
		return
	}
	var config M
	if resp.Diagnostics.Append(req.Config.Get(ctx, &config)...); !resp.Diagnostics.HasError() {
		check(ctx, config, &resp.Diagnostics)
	}
}

// hooks is r as its fastpath.Hooks, nil until the provider is configured.
func (r *kubeResource[M]) hooks() fastpath.Hooks[M] {
	if r.Data == nil {
		return nil
	}
	return r
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
		diags.Append(kube.Diagnostic(err, "create "+k.what(*m, client.DisplayName())))
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
// path reads through its fastpath.For, with Refresh.
func (r *kubeResource[M]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if f := r.fast(); f != nil {
		f.Read(ctx, r, req, resp)
		return
	}
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
		diags.Append(kube.Diagnostic(err, "read "+r.what(*state, client.DisplayName())))
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

// Refresh is refreshObject as a fastpath.Hooks refresh, or the type's
// refreshing. What afterRead keeps in private state must be one key
// (fastpath.Refresh holds one). Nothing in the skeleton says something once
// per walk, so fast changes nothing; a type whose refresh does has
// refreshing.
func (r *kubeResource[M]) Refresh(ctx context.Context, state *M, fast bool) (fastpath.Refresh, diag.Diagnostics) {
	if r.refreshing != nil {
		return r.refreshing(ctx, r, state, fast)
	}
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

// Delete implements resource.Resource: it reads the state, builds its
// cluster's client and deletes the object (deleteObject), or does the
// type's deleting instead.
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
	if r.deleting != nil {
		r.deleting(ctx, r, client, state, &resp.Diagnostics)
		return
	}
	r.deleteObject(ctx, client, state, &resp.Diagnostics)
}

// deleteObject deletes m's object; one already gone, or whose CRD is, is no
// error. ok is false once a diagnostic was added.
func (k *kubeType[M]) deleteObject(ctx context.Context, client *kube.Client, m M, diags *diag.Diagnostics) bool {
	id, _ := k.identity(&m)
	err := client.Delete(ctx, k.kind(m), id.Namespace, id.Name)
	if err != nil && !kube.IsCRDNotInstalled(err) {
		diags.Append(kube.Diagnostic(err, "delete "+k.what(m, client.DisplayName())))
		return false
	}
	return true
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
