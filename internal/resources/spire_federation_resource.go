package resources

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spirefacts"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
)

var (
	_ resource.ResourceWithConfigure      = (*spireFederationResource)(nil)
	_ resource.ResourceWithImportState    = (*spireFederationResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*spireFederationResource)(nil)
	_ resource.ResourceWithValidateConfig = (*spireFederationResource)(nil)
	_ resource.ResourceWithIdentity       = (*spireFederationResource)(nil)
)

// spireFederationType: the SpireServer is a cluster-scoped singleton, so its
// identity is the cluster and the name "cluster".
var spireFederationType = &typeInfo{
	name:  typename.SpireFederation,
	kinds: []kube.Kind{kube.SpireServer},
	importID: importIDForm{fixedName: spirefacts.ObjectName,
		wrongName: "The SpireServer is a singleton named \"cluster\"; the identity names %q. Set name = \"cluster\"."},
	planChecks: []string{
		"the cluster's trust domain (trust_domain and endpoint_spiffe_id stay unknown until the apply)",
		"that federates_with has no entry for the cluster's own trust domain",
		"that an existing federation's profile and https_web certificate source are not changed",
		"that an ACME domain_name is the host of the operator's Route (federation.<trust domain>)",
		"that no ClusterFederatedTrustDomain this configuration does not manage federates with a trust domain of federates_with (federates_with would override it)",
	},
}

// NewSpireFederationResource manages spec.federation of the SpireServer `cluster`.
func NewSpireFederationResource() resource.Resource {
	return &spireFederationResource{typeInfo: spireFederationType}
}

type spireFederationResource struct {
	providerdata.ResourceBase
	*typeInfo
}

// spireFederationObjectIdentity is the identity of the federation on cluster.
func spireFederationObjectIdentity(cluster types.String) objectIdentity {
	return objectIdentity{Cluster: cluster.ValueString(), Name: spirefacts.ObjectName}
}

func destroyDetail(cluster string) string {
	where := "the cluster"
	if cluster != "" {
		where = fmt.Sprintf("cluster %q", cluster)
	}
	return fmt.Sprintf("The Zero Trust Workload Identity Manager operator forbids removing spec.federation from the "+
		"SpireServer once set (\"Federation configuration cannot be removed once set.\"). Destroying zerotrust_spire_federation "+
		"therefore releases only its federates_with entries and leaves the bundle endpoint configuration on %s "+
		"running as it is; Terraform stops managing it. To disable federation entirely, uninstall and reinstall the "+
		"operator. To manage it again, import it (terraform import <address> [<cluster>/]cluster).", where)
}

func (r *spireFederationResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.write(ctx, req.Plan, req.Config, true, &resp.State, resp.Identity, &resp.Diagnostics)
}

func (r *spireFederationResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.write(ctx, req.Plan, req.Config, false, &resp.State, resp.Identity, &resp.Diagnostics)
}

// Once spec.federation is written, what Terraform keeps of a failed apply
// (a refusal, a timeout) decides what the next apply does:
//   - a failed update keeps the state it wrote, which is what the cluster
//     holds; Terraform does not taint an update, so the next apply changes
//     only what the configuration changes;
//   - a failed create keeps no state. Terraform taints a create that fails
//     with a state, and replaces a tainted resource on the next apply, whose
//     destroy half releases federates_with: the operator would render SPIRE's
//     server.conf without any peer and restart the server, an outage of every
//     federation of the cluster, until the create half writes the peers
//     again. Without a state the next apply is a create again, a server-side
//     apply of the same fields by the same field manager, which changes
//     nothing already on the cluster, so the peers stay throughout.
//
// federationKept says so in the errors of each.
const (
	federationKeptUpdate = "Terraform saved what it wrote, which is what the cluster holds."
	federationKeptCreate = "The cluster holds what this apply wrote, but Terraform does not record the resource: a " +
		"failed create would be tainted, and replacing it would release federates_with, so that the operator " +
		"rendered SPIRE's configuration without peers until the create wrote them again. The next apply creates " +
		"it again by writing the same fields, which changes nothing already on the cluster. To leave it " +
		"instead, import it (terraform import <address> [<cluster>/]cluster) and destroy it."
)

// federationKept is the sentence that ends an error after the write.
func federationKept(create bool) string {
	if create {
		return federationKeptCreate
	}
	return federationKeptUpdate
}

// write is Create and Update: apply the plan (sending what the configuration
// sets), wait for the operator's verdict, then store state and identity.
// Once the object is written the state of an update is stored even when
// the wait fails, so that it matches the cluster; a create that fails
// stores none (see federationKeptCreate).
func (r *spireFederationResource) write(ctx context.Context, planned tfsdk.Plan, config tfsdk.Config, create bool,
	state *tfsdk.State, identity *tfsdk.ResourceIdentity, diags *diag.Diagnostics,
) {
	var plan, cfg spireFederationResourceModel
	diags.Append(planned.Get(ctx, &plan)...)
	diags.Append(config.Get(ctx, &cfg)...)
	if diags.HasError() || refuseHelmFederation(r.Data, plan.Cluster, diags) {
		return
	}
	action, timeout, d := "update spec.federation of the SpireServer cluster", time.Duration(0), diag.Diagnostics(nil)
	if create {
		action = "set spec.federation of the SpireServer cluster"
		timeout, d = plan.Timeouts.Create(ctx, federationDefaultTimeout)
	} else {
		timeout, d = plan.Timeouts.Update(ctx, federationDefaultTimeout)
	}
	diags.Append(d...)
	if diags.HasError() {
		return
	}
	if !r.apply(ctx, &plan, cfg, action, timeout, federationKept(create), diags) || (create && diags.HasError()) {
		return
	}
	diags.Append(state.Set(ctx, &plan)...)
	diags.Append(spireFederationObjectIdentity(plan.Cluster).set(ctx, spireFederationType.shape, identity)...)
}

// apply checks what needs the cluster, then writes spec.federation, waits
// for the operator's verdict on it and fills the computed attributes of m.
// The checks use the plan m (the values in effect, defaults included); what
// is sent comes from the configuration cfg, so fields left to the CRD's
// defaults are not written by this provider. written says whether the
// object was written (then m is what the cluster holds, whatever diags say).
func (r *spireFederationResource) apply(ctx context.Context, m *spireFederationResourceModel, cfg spireFederationResourceModel,
	action string, timeout time.Duration, kept string, diags *diag.Diagnostics,
) (written bool) {
	client := r.Data.Client(m.Cluster, diags)
	if client == nil {
		return false
	}
	spec, d := specFromModel(ctx, *m)
	diags.Append(d...)
	send, d := specFromModel(ctx, cfg)
	diags.Append(d...)
	if diags.HasError() {
		return false
	}
	// Applying onto a missing SpireServer would create one, which the API
	// refuses for lack of the fields only the operator fills in.
	existing, err := client.Get(ctx, kube.SpireServer, "", spirefacts.ObjectName)
	if kube.IsNotFound(err) {
		diags.AddError("SpireServer Not Found", fmt.Sprintf(
			"Could not %s: cluster %q has no SpireServer named \"cluster\". The OpenShift Zero Trust Workload Identity "+
				"Manager operator creates it, with the SPIRE server settings this resource does not manage (jwtIssuer, "+
				"caSubject, persistence, datastore). Install the operator and create its SpireServer (and "+
				"ZeroTrustWorkloadIdentityManager) \"cluster\" first; when they are created in the same configuration, "+
				"make this resource depend on them.", action, client.DisplayName()))
		return false
	}
	if err != nil {
		diags.Append(kube.Diagnostic(err, action))
		return false
	}
	ztwim, err := spirefacts.GetIfServed(ctx, client, kube.ZeroTrustWorkloadIdentityManager)
	if err != nil {
		diags.Append(kube.Diagnostic(err, "read the cluster's trust domain"))
		return false
	}
	facts := &spirefacts.Facts{ZTWIM: ztwim, SpireServer: existing}
	td, kind := facts.TrustDomain()
	peers := make([]string, 0, len(spec.Peers))
	for p := range spec.Peers {
		peers = append(peers, p)
	}
	sort.Strings(peers)
	checkSelfFederation(peers, td, kind, diags)
	if prior, found := specFromObject(existing); found {
		checkEndpointChange(prior, spec.profile(), spec.httpsWebMode(), "the SpireServer", diags)
	}
	if diags.HasError() {
		return false
	}

	obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"federation": send.object()}}}
	obj.SetName(spirefacts.ObjectName)
	waiter := newFederationWaiter(existing, time.Now())
	out, err := client.Apply(ctx, kube.SpireServer, obj, m.ForceConflicts.ValueBool())
	if err != nil {
		diags.Append(kube.Diagnostic(err, action))
		return false
	}
	facts.SpireServer = out
	if m.ManagedRoute.IsUnknown() {
		// Not configured, so not sent: the object's own value.
		applied, _ := specFromObject(out)
		m.ManagedRoute = types.BoolValue(applied.managedRoute())
	}
	if final := awaitFederationVerdict(ctx, client, waiter, out, m.ManagedRoute.ValueBool(), timeout, kept, diags); final != nil {
		facts.SpireServer = final
	}
	if !m.ManagedRoute.ValueBool() && ctx.Err() == nil {
		deleteStaleFederationRoute(ctx, client, diags)
	}
	setFederationComputed(ctx, client, m, facts, diags)
	if m.BundleEndpointURL.IsUnknown() {
		// The Route could not be read: what the state can say is that
		// nothing is known about it.
		m.BundleEndpointURL = types.StringNull()
	}
	return true
}

func (r *spireFederationResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state spireFederationResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// The identity is known from state: the framework requires one from
	// every way out of Read (object gone, connection not known yet), also
	// when the prior state holds none (written by Terraform < 1.12).
	resp.Diagnostics.Append(spireFederationObjectIdentity(state.Cluster).setIfMissing(ctx, spireFederationType.shape, resp.Identity)...)
	client := r.Data.ReadClient(ctx, state.Cluster, r.object(state.ID), &resp.Diagnostics)
	if client == nil {
		return
	}
	facts, found := r.read(ctx, client, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if !found {
		resp.State.RemoveResource(ctx)
		return
	}
	spec, _ := specFromObject(facts.SpireServer)
	// federatesWith is one atomic list: while this resource manages it, every
	// entry is its business, and an entry changed, removed or added elsewhere
	// shows up as a plan. Otherwise the list is someone else's.
	managed := !state.FederatesWith.IsNull()
	resp.Diagnostics.Append(spec.setModel(&state, managed, managed)...)
	setFederationComputed(ctx, client, &state, facts, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	resp.Diagnostics.Append(spireFederationObjectIdentity(state.Cluster).set(ctx, spireFederationType.shape, resp.Identity)...)
}

// read returns the cluster's facts; found is false when the SpireServer, its
// CRD or its spec.federation is gone.
func (r *spireFederationResource) read(ctx context.Context, client *kube.Client, diags *diag.Diagnostics) (*spirefacts.Facts, bool) {
	obj, err := client.Get(ctx, kube.SpireServer, "", spirefacts.ObjectName)
	if kube.IsNotFound(err) || kube.IsCRDNotInstalled(err) {
		return nil, false
	}
	if err != nil {
		diags.Append(kube.Diagnostic(err, "read the SpireServer cluster"))
		return nil, false
	}
	if _, found := specFromObject(obj); !found {
		return nil, false
	}
	ztwim, err := spirefacts.GetIfServed(ctx, client, kube.ZeroTrustWorkloadIdentityManager)
	if err != nil {
		diags.Append(kube.Diagnostic(err, "read the cluster's trust domain"))
		return nil, false
	}
	return &spirefacts.Facts{ZTWIM: ztwim, SpireServer: obj}, true
}

// Delete releases the federates_with entries and leaves the bundle endpoint,
// which the operator forbids removing, with a warning.
func (r *spireFederationResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state spireFederationResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client := r.Data.Client(state.Cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	obj, err := client.Get(ctx, kube.SpireServer, "", spirefacts.ObjectName)
	if kube.IsNotFound(err) || kube.IsCRDNotInstalled(err) {
		return
	}
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "read the SpireServer cluster"))
		return
	}
	if _, found := specFromObject(obj); !found {
		return
	}
	// Re-applying the fields this provider owns as they are now, without
	// federatesWith, keeps the bundle endpoint running as it is (the API
	// refuses to drop spec.federation, and to change a profile it would
	// re-default) and releases the list, which goes when no other manager
	// owns it. Fields the API server defaulted or another manager wrote are
	// not claimed: a later create that leaves them to the CRD would
	// otherwise release them, and the API server empties bundleEndpoint to
	// null when its last fields go.
	release := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"federation": ownedFederationFields(obj, client.FieldManager),
	}}}
	release.SetName(spirefacts.ObjectName)
	if _, err := client.Apply(ctx, kube.SpireServer, release, state.ForceConflicts.ValueBool()); err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "release the federates_with entries of the SpireServer cluster"))
		return
	}
	// No warning: the destroy plan said that spec.federation stays ("Federation
	// Stays on the SpireServer"), before anything was done.
}

func (r *spireFederationResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, ok := r.importTarget(ctx, r.Data, req, &resp.Diagnostics)
	if !ok {
		return
	}
	cluster := clusterValue(id.Cluster)
	client := r.Data.Client(cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	facts, found := r.read(ctx, client, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if !found {
		resp.Diagnostics.AddError("Nothing to Import", fmt.Sprintf(
			"Cluster %q has no SpireServer \"cluster\" with spec.federation. Create the resource instead of importing it.",
			client.DisplayName()))
		return
	}
	state, d := spireFederationStateFromObject(ctx, client, cluster, facts)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	resp.Diagnostics.Append(id.set(ctx, spireFederationType.shape, resp.Identity)...)
}

// ownedFederationFields is spec.federation of obj cut down to the fields
// manager owns by server-side apply, without federatesWith, and always with
// the bundleEndpoint the CRD requires.
func ownedFederationFields(obj *unstructured.Unstructured, manager string) map[string]any {
	fed, _, _ := unstructured.NestedMap(obj.Object, "spec", "federation")
	delete(fed, "federatesWith")
	mine := applier(manager)
	var prune func(live map[string]any, at []string) map[string]any
	prune = func(live map[string]any, at []string) map[string]any {
		out := map[string]any{}
		for k, v := range live {
			p := append(append([]string{}, at...), k)
			if m, ok := v.(map[string]any); ok {
				if sub := prune(m, p); len(sub) > 0 {
					out[k] = sub
				}
				continue
			}
			if mine.holds(obj, p) {
				out[k] = v
			}
		}
		return out
	}
	out := prune(fed, []string{"spec", "federation"})
	if _, ok := out["bundleEndpoint"]; !ok {
		out["bundleEndpoint"] = map[string]any{}
	}
	return out
}
