package resources

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireserverattr"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/workloadtrust"
)

var (
	_ resource.ResourceWithConfigure      = (*federatedTrustDomainResource)(nil)
	_ resource.ResourceWithIdentity       = (*federatedTrustDomainResource)(nil)
	_ resource.ResourceWithImportState    = (*federatedTrustDomainResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*federatedTrustDomainResource)(nil)
	_ resource.ResourceWithValidateConfig = (*federatedTrustDomainResource)(nil)
)

// defaultFederationTimeout bounds wait_for_bundle and delete_bundle_on_destroy:
// spire-controller-manager reconciles within seconds, a first fetch from a
// peer's endpoint may take a refresh interval.
const defaultFederationTimeout = 5 * time.Minute

// federatedTrustDomainType: ClusterFederatedTrustDomains are cluster-scoped,
// so the identity is cluster and name.
var federatedTrustDomainType = &kubeType[federatedTrustDomainResourceModel]{
	typeInfo: &typeInfo{
		name:  typename.FederatedTrustDomain,
		kinds: []kube.Kind{kube.ClusterFederatedTrustDomain},
		planChecks: []string{
			"that no other ClusterFederatedTrustDomain federates with the same trust domain (duplicate check), nor one a Helm release owns",
			"which SPIRE server pod a planned repair of spire_trust runs in",
			"that the SpireServer's federatesWith, where this configuration does not manage it, does not list the trust domain (the SPIRE server's configuration file would override the ClusterFederatedTrustDomain)",
		},
	},
	ref: func(m *federatedTrustDomainResourceModel) modelRef {
		return modelRef{id: &m.ID, cluster: m.Cluster, name: m.Name}
	},
	fromObject: func(ctx context.Context, cluster types.String, obj *unstructured.Unstructured, _ *kube.Client) (federatedTrustDomainResourceModel, diag.Diagnostics) {
		return federatedTrustDomainStateFromObject(ctx, cluster, obj)
	},
	refresh:    setFederatedTrustDomainFromObject,
	fastSchema: federatedTrustDomainSchemaOnce,
	// The skeleton's Refresh is refreshFederatedTrustDomainFast
	// (federated_trust_domain_fastpath.go), which also asks SPIRE.
	refreshing:     refreshFederatedTrustDomainFast,
	completing:     completeFederatedTrustDomain,
	plan:           planFederatedTrustDomain,
	helmSeenByPlan: true,
	deleting:       deleteFederatedTrustDomain,
}

// NewFederatedTrustDomainResource manages a SPIRE ClusterFederatedTrustDomain.
func NewFederatedTrustDomainResource() resource.Resource {
	return &federatedTrustDomainResource{kubeResource[federatedTrustDomainResourceModel]{kubeType: federatedTrustDomainType}}
}

type federatedTrustDomainResource struct {
	kubeResource[federatedTrustDomainResourceModel]
}

func (r *federatedTrustDomainResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	plan, client := r.applying(ctx, req.Plan, &resp.Diagnostics)
	if client == nil {
		return
	}
	name, td := plan.Name.ValueString(), plan.TrustDomain.ValueString()

	if !r.checkUnique(ctx, client, name, td, &resp.Diagnostics) {
		return
	}
	obj, diags := federatedTrustDomainObjectFromModel(ctx, plan, true)
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
	resp.Diagnostics.Append(setFederatedTrustDomainFromObject(ctx, &plan, out)...)
	resp.Diagnostics.Append(recordClassNameWritten(ctx, resp.Private, out, client.FieldManager)...)
	// The object exists from here on: state records it even if the wait fails.
	r.store(ctx, &plan, &resp.State, resp.Identity, &resp.Diagnostics)
	r.waitForBundle(ctx, client, plan, plan.Timeouts.Create, true, &resp.Diagnostics)
	// What SPIRE does with the new object: known after a successful wait,
	// else for the next refresh to find.
	if plan.CheckSpire.ValueBool() && plan.WaitForBundle.ValueBool() && !resp.Diagnostics.HasError() {
		plan.SpireTrust = types.StringValue(spireTrustFederated)
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("spire_trust"), plan.SpireTrust)...)
	}
}

// waitForBundle implements wait_for_bundle.
// A create (created) then also waits, within the same timeout, until the
// entries of the cluster's ClusterSPIFFEIDs that federate with the trust
// domain do again (waitEntriesFederateAgain).
func (r *federatedTrustDomainResource) waitForBundle(ctx context.Context, client *kube.Client, m federatedTrustDomainResourceModel,
	timeoutOf func(context.Context, time.Duration) (time.Duration, diag.Diagnostics), created bool, diags *diag.Diagnostics) {
	if !m.WaitForBundle.ValueBool() || diags.HasError() {
		return
	}
	server, ctx, cancel, ok := spireWithin(ctx, r.Data, client, m, timeoutOf, diags)
	if !ok {
		return
	}
	defer cancel()
	if err := server.WaitForBundle(ctx, m.TrustDomain.ValueString()); err != nil {
		diags.AddError("SPIRE Does Not Hold the Peer Bundle",
			fmt.Sprintf("The ClusterFederatedTrustDomain %q was applied, but waiting for its bundle failed. Check that "+
				"spire-controller-manager runs with class %q, that trust_domain_bundle or the peer's bundle endpoint "+
				"%q is right, and the controller's and SPIRE server's logs.\n\n%v",
				m.Name.ValueString(), m.ClassName.ValueString(), m.BundleEndpointURL.ValueString(), err))
		return
	}
	if created {
		waitEntriesFederateAgain(ctx, client, server, m, diags)
	}
}

// waitEntriesFederateAgain waits, within ctx (the create's timeout), until
// the entries of every ClusterSPIFFEID on the cluster that federates with
// m's trust domain carry the federation. A replacement deletes the object
// first, and spire-controller-manager then renders those entries without the
// trust domain; it adds it back only at a later reconcile, after SPIRE holds
// the bundle again, so an apply that ended on the bundle alone left workloads
// that did not federate (a check block right after it said so). Only
// ClusterSPIFFEIDs of the object's class count: another controller's do not
// see it. What is left when the wait ends is a warning, not an error: the
// object is as it should be, and an error would taint it, so that the next
// apply replaced it and dropped the federation again.
func waitEntriesFederateAgain(ctx context.Context, client *kube.Client, server spireexec.Server, m federatedTrustDomainResourceModel, diags *diag.Diagnostics) {
	td := m.TrustDomain.ValueString()
	items, err := client.List(ctx, kube.ClusterSPIFFEID, "")
	if err != nil {
		if d, ok := kube.NotCheckedWarning(err, "that the workloads federating with "+td+" federate again"); ok {
			diags.Append(d)
		}
		return
	}
	var want []workloadtrust.Want
	for _, item := range items {
		class, _, _ := unstructured.NestedString(item.Object, "spec", "className")
		tds, _, _ := unstructured.NestedStringSlice(item.Object, "spec", "federatesWith")
		if item.GetDeletionTimestamp() == nil && class == m.ClassName.ValueString() && slices.Contains(tds, td) {
			want = append(want, workloadtrust.Want{Name: item.GetName(), FederatesWith: []string{td}})
		}
	}
	if len(want) == 0 {
		return
	}
	if _, err := workloadtrust.Wait(ctx, client, server, want, clusterSPIFFEIDPoll); err != nil {
		diags.AddWarning("Workloads Do Not Federate Again Yet", fmt.Sprintf(
			"The ClusterFederatedTrustDomain %q on cluster %q was created and SPIRE holds the bundle of %q, but the "+
				"entries of the ClusterSPIFFEIDs that federate with it do not all carry the federation yet (asked %s): "+
				"spire-controller-manager adds it at a later reconcile. Until then those workloads do not trust %q. "+
				"Give the wait more time with timeouts.create, or check spire-controller-manager's logs.\n\n%v",
			m.Name.ValueString(), client.DisplayName(), td, server, td, err))
	}
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
		case othersOnly && item.GetName() != name && applier(client.FieldManager).wrote(item):
			continue
		case (item.GetName() == name || other == td) && refuseHelmOwned(item, client.DisplayName(), path.Root("trust_domain"), diags):
			// The release's object for this trust domain stays the one
			// spire-controller-manager follows; a second one here would be
			// ignored, and one under its name would fight the release.
			return false
		case item.GetName() == name && !adoptGuard(item, client, path.Root("name"),
			fmt.Sprintf("A ClusterFederatedTrustDomain named %q already exists on cluster %q and was not created by "+
				"this configuration. Import it (terraform import ... %s) or choose another name.",
				name, client.DisplayName(), resourceID(clusterValue(client.Name), name)), diags):
			return false
		case item.GetName() != name && other == td && stillFederates(ctx, client, item.GetName(), td):
			owner := ""
			if !applier(client.FieldManager).wrote(item) {
				owner = " " + writtenBy(item, client.FieldManager)
			}
			diags.AddAttributeError(path.Root("trust_domain"), "Duplicate Trust Domain",
				fmt.Sprintf("ClusterFederatedTrustDomain %q on cluster %q already federates with %q. "+
					"spire-controller-manager would silently ignore a second object for the same trust domain. "+
					"Manage that object instead (import it), or delete it first.%s", item.GetName(), client.DisplayName(), td, owner))
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

// refreshFederatedTrustDomain is Read's work, run by Refresh
// (federated_trust_domain_fastpath.go) whichever way Read goes: it reads the
// object state names and updates state from it and from what the cluster's
// SPIRE server holds (checkSpireTrust). found is false when the object is gone;
// classNameWritten is what recordClassNameWritten keeps in private state;
// unreachable, when SPIRE could not be asked, is for Read to warn about.
func refreshFederatedTrustDomain(ctx context.Context, client *kube.Client, data *providerdata.Data,
	state *federatedTrustDomainResourceModel) (found, classNameWritten bool, unreachable *spireUnreachable, diags diag.Diagnostics) {
	obj, err := client.GetForRefresh(ctx, kube.ClusterFederatedTrustDomain, "", state.Name.ValueString())
	if kube.IsNotFound(err) {
		return false, false, nil, nil
	}
	if err != nil {
		diags.Append(kube.Diagnostic(err, "read the ClusterFederatedTrustDomain "+state.Name.ValueString()))
		return false, false, nil, diags
	}
	diags.Append(setFederatedTrustDomainFromObject(ctx, state, obj.Object)...)
	unreachable, d := checkSpireTrust(ctx, client, data, state, obj)
	diags.Append(d...)
	return true, appliesClassName(obj, client.FieldManager), unreachable, diags
}

func (r *federatedTrustDomainResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	plan, client := r.applying(ctx, req.Plan, &resp.Diagnostics)
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
	obj, diags := federatedTrustDomainObjectFromModel(ctx, toApply, false)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	out, err := client.Apply(ctx, kube.ClusterFederatedTrustDomain, obj, plan.ForceConflicts.ValueBool())
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "update the ClusterFederatedTrustDomain "+plan.Name.ValueString()))
		return
	}
	planned := plan.SpireTrust
	resp.Diagnostics.Append(setFederatedTrustDomainFromObject(ctx, &plan, out)...)
	resp.Diagnostics.Append(recordClassNameWritten(ctx, resp.Private, out, client.FieldManager)...)
	// Until the repair below succeeds, state keeps what the refresh found, so
	// that a failed repair plans again.
	var found types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("spire_trust"), &found)...)
	repair := spireTrustBroken(found) && planned.ValueString() == spireTrustFederated
	if repair {
		plan.SpireTrust = found
	}
	r.store(ctx, &plan, &resp.State, resp.Identity, &resp.Diagnostics)
	if repair && !resp.Diagnostics.HasError() {
		r.repairSpireTrust(ctx, client, plan, config.TrustDomainBundle, found.ValueString(), &resp.Diagnostics)
		if !resp.Diagnostics.HasError() {
			resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("spire_trust"), planned)...)
		}
	} else if !resp.Diagnostics.HasError() {
		var prior types.String
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("trust_domain_bundle"), &prior)...)
		if prior.IsNull() && r.firstBundleSeeds(ctx, plan, found) {
			r.seedFirstBundle(ctx, client, plan, &resp.Diagnostics)
		}
	}
	r.waitForBundle(ctx, client, plan, plan.Timeouts.Update, false, &resp.Diagnostics)
}

// spireWithin is the SPIRE server m names and ctx bounded by the timeout
// timeoutOf gives; ok is false when diags has an error.
func spireWithin(ctx context.Context, data *providerdata.Data, client *kube.Client, m federatedTrustDomainResourceModel,
	timeoutOf func(context.Context, time.Duration) (time.Duration, diag.Diagnostics), diags *diag.Diagnostics,
) (server spireexec.Server, _ context.Context, cancel context.CancelFunc, ok bool) {
	timeout, d := timeoutOf(ctx, defaultFederationTimeout)
	diags.Append(d...)
	server, d = spireserverattr.ServerFrom(ctx, client, data, m.SpireServer)
	diags.Append(d...)
	if diags.HasError() {
		return server, ctx, func() {}, false
	}
	ctx, cancel = context.WithTimeout(ctx, timeout)
	return server, ctx, cancel, true
}

// firstBundleSeeds reports an update that gives an https_spiffe federation
// its first trust_domain_bundle while SPIRE's side is not known to be broken
// (a broken one is repaired as planned): the object was created without one,
// as a workspace does before its peer published its bundle. The bundle is
// bootstrap input that spire-controller-manager reads only when it creates
// the relationship, which it did without; so the update gives it to SPIRE.
func (r *federatedTrustDomainResource) firstBundleSeeds(ctx context.Context, plan federatedTrustDomainResourceModel, found types.String) bool {
	return !spireTrustBroken(found) && !plan.TrustDomainBundle.IsNull() && !plan.TrustDomainBundle.IsUnknown() &&
		plan.CheckSpire.ValueBool() && plan.ClassName.ValueString() == r.Data.SpireAt(plan.Cluster).ClassName &&
		httpsSPIFFE(ctx, plan.BundleEndpointProfile)
}

// seedFirstBundle seeds SPIRE with the first trust_domain_bundle when it
// holds no bundle of the peer, as the repair of a lost bundle does. SPIRE not
// askable (no pod, no pods/exec) leaves it to the next refresh, which says
// so; SPIRE already holding a bundle (fetched or seeded otherwise) is left
// alone. What SPIRE holds is asked once per walk (spireViewOf), however many
// federations of the cluster get their first bundle in it.
func (r *federatedTrustDomainResource) seedFirstBundle(ctx context.Context, client *kube.Client, m federatedTrustDomainResourceModel, diags *diag.Diagnostics) {
	server, d := spireserverattr.ServerFrom(ctx, client, r.Data, m.SpireServer)
	if d.HasError() {
		return
	}
	view, err := spireViewOf(ctx, client, server)
	if err != nil || view.Bundles[m.TrustDomain.ValueString()] != nil {
		return
	}
	r.repairSpireTrust(ctx, client, m, m.TrustDomainBundle, spireTrustNoBundle, diags)
}

// repairSpireTrust runs the repair the plan showed (see spire_trust).
func (r *federatedTrustDomainResource) repairSpireTrust(ctx context.Context, client *kube.Client, m federatedTrustDomainResourceModel,
	bundle types.String, found string, diags *diag.Diagnostics) {
	server, ctx, cancel, ok := spireWithin(ctx, r.Data, client, m, m.Timeouts.Update, diags)
	if !ok {
		return
	}
	defer cancel()
	err := repairSpireTrust(ctx, server, m, bundle)
	var notRefreshed errRefreshAfterSeed
	if errors.As(err, &notRefreshed) {
		diags.AddWarning("Peer Bundle Seeded, Not Refreshed",
			fmt.Sprintf("The %s holds the bundle of %q again (trust_domain_bundle), but could not refresh it from the peer's "+
				"endpoint %s yet; SPIRE retries at its next refresh.\n\n%v", server, m.TrustDomain.ValueString(),
				m.BundleEndpointURL.ValueString(), err))
		return
	}
	if err != nil {
		diags.AddError("SPIRE Federation Not Repaired",
			fmt.Sprintf("The %s %s for %q (ClusterFederatedTrustDomain %q), and the repair did not succeed; the next "+
				"plan shows it again.\n\n%v", server, spireTrustFinding(found), m.TrustDomain.ValueString(), m.Name.ValueString(), err))
	}
}

// deleteFederatedTrustDomain is the descriptor's deleting: the object, then
// (delete_bundle_on_destroy) the peer's bundle in SPIRE.
func deleteFederatedTrustDomain(ctx context.Context, r *kubeResource[federatedTrustDomainResourceModel], client *kube.Client,
	state federatedTrustDomainResourceModel, diags *diag.Diagnostics,
) {
	if !r.deleteObject(ctx, client, state, diags) {
		return
	}
	client.Release(kube.ClusterFederatedTrustDomain, state.TrustDomain.ValueString())
	if !state.DeleteBundleOnDestroy.ValueBool() {
		return
	}
	if keptByConfiguredPeer(ctx, r.Data, client, state.Cluster, state.Name.ValueString(), state.TrustDomain.ValueString(), diags) {
		return
	}
	server, ctx, cancel, ok := spireWithin(ctx, r.Data, client, state, state.Timeouts.Delete, diags)
	if !ok {
		return
	}
	defer cancel()
	// delete_bundle_on_destroy is on by default, so clusters whose SPIRE
	// server is elsewhere (or absent) reach here too: a missing pod is not
	// worth the timeout's wait, which DeleteBundle would spend retrying.
	_, err := client.Get(ctx, kube.Pod, server.Namespace, server.Pod)
	if kube.IsNotFound(err) {
		err = fmt.Errorf("there is no SPIRE server pod %s/%s to delete it through: set spire_server if SPIRE runs elsewhere, "+
			"or delete_bundle_on_destroy = false where no SPIRE server is federated", server.Namespace, server.Pod)
	} else {
		err = server.DeleteBundle(ctx, state.TrustDomain.ValueString())
	}
	if err != nil {
		// The object is gone: say so, but let Terraform forget it.
		diags.AddWarning("Peer Bundle Not Deleted",
			fmt.Sprintf("The ClusterFederatedTrustDomain %q was deleted, but the SPIRE server may still hold the bundle of %q, "+
				"and then workloads federated with it keep trusting that trust domain. Delete it with "+
				"`spire-server bundle delete -id spiffe://%s -mode dissociate` once the federation relationship is gone.\n\n%v",
				state.Name.ValueString(), state.TrustDomain.ValueString(), state.TrustDomain.ValueString(), err))
	}
}
