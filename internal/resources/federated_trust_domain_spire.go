package resources

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
)

// What SPIRE does with a ClusterFederatedTrustDomain, as spire_trust says
// it. A ClusterFederatedTrustDomain has no status: the object can be in
// place while the cluster's SPIRE server no longer federates (a relationship
// deleted by hand) or holds no usable bundle of the peer (a bundle deleted
// by hand or lost in a datastore restore, which spire-controller-manager
// does not re-seed; a peer whose CA changed before SPIRE could fetch the new
// one: a forced rotation, a rebuilt cluster). Workloads then fail mTLS while
// the plan would show nothing. Refresh asks SPIRE (spireexec.View, once per
// cluster and Terraform operation), the plan shows the repair as a change of
// spire_trust, and the apply makes it (repairSpireTrust).
const (
	spireTrustFederated       = "federated"
	spireTrustNoRelationship  = "relationship_missing"
	spireTrustNoBundle        = "bundle_missing"
	spireTrustStaleBundle     = "bundle_stale"
	spireTrustEndpointTimeout = 5 * time.Second
)

// spireTrustBroken reports a spire_trust value that an apply repairs.
func spireTrustBroken(v types.String) bool {
	switch v.ValueString() {
	case spireTrustNoRelationship, spireTrustNoBundle, spireTrustStaleBundle:
		return true
	}
	return false
}

// spireTrustPending is how long after this provider applied an object that
// was never seen federated a missing relationship or bundle is not a
// finding yet: spire-controller-
// manager reconciles within seconds (its default resync is 10 s), and SPIRE
// fetches a bundle at its first refresh. A plan right after an apply without
// wait_for_bundle would otherwise plan a repair of what is still on its way.
const spireTrustPending = time.Minute

// spireViewOf is what server holds, asked once per client (one Terraform
// graph walk) and shared by every object of the cluster.
func spireViewOf(ctx context.Context, client *kube.Client, server spireexec.Server) (spireexec.View, error) {
	v, err := client.Memo("spire-view "+spireServerKey(server), func() (any, error) { return server.View(ctx) })
	view, _ := v.(spireexec.View)
	return view, err
}

func spireServerKey(s spireexec.Server) string {
	return s.Namespace + "/" + s.Pod + "/" + s.Container
}

// spireUnreachable is a refresh that could not ask SPIRE. Read says so once
// per cluster and SPIRE server (claimSpireWarning), as a warning: the object
// itself was read.
type spireUnreachable struct {
	Server spireexec.Server
	Err    error
}

// The warning is said by the framework's Read (the fast path answers
// without diagnostics): the first fast-path Read that meets SPIRE's silence
// claims the warning and leaves its request to the framework, which says it;
// later ones answer fast. A Read that reaches the framework another way may
// say it first; either way it is said once.
func spireWarningClaimKey(s spireexec.Server) string {
	return "spire-warning-claimed " + spireServerKey(s)
}
func spireWarningSaidKey(s spireexec.Server) string { return "spire-warning-said " + spireServerKey(s) }

// claimWarning reports whether the fast path must leave this Read to the
// framework, so that the warning is said.
func (u *spireUnreachable) claimWarning(client *kube.Client) bool {
	return u != nil && client.FirstTime(spireWarningClaimKey(u.Server))
}

// addTo adds the warning when no other Read of this walk has.
func (u *spireUnreachable) addTo(client *kube.Client, diags *diag.Diagnostics) {
	if u == nil {
		return
	}
	client.FirstTime(spireWarningClaimKey(u.Server))
	if !client.FirstTime(spireWarningSaidKey(u.Server)) {
		return
	}
	why := ""
	if sentence, ok := kube.Refused(u.Err); ok {
		why = " (" + sentence + ")"
	}
	diags.AddWarning("SPIRE Not Asked",
		fmt.Sprintf("Cannot ask the %s what it federates with%s, so the plan cannot show a federation that SPIRE lost "+
			"(spire_trust stays unknown on every zerotrust_federated_trust_domain of the cluster). Allow `get` on "+
			"`pods` and `get` and `create` on `pods/exec` in its namespace for the provider's credentials, point "+
			"spire_server at the SPIRE server pod, or set check_spire = false where no SPIRE server is reachable.\n\n%v",
			u.Server, why, u.Err))
}

// checkSpireTrust sets state.SpireTrust from what the SPIRE server holds for
// the object's trust domain; obj is the object as just read.
// Objects of another class than the provider's spire.class_name are left
// alone (null): another spire-controller-manager, and so another SPIRE
// server, acts on them, if any does.
func checkSpireTrust(ctx context.Context, client *kube.Client, data *providerdata.Data, state *federatedTrustDomainResourceModel,
	obj *unstructured.Unstructured) (*spireUnreachable, diag.Diagnostics) {
	if !state.CheckSpire.ValueBool() || state.ClassName.ValueString() != data.SpireClassName {
		state.SpireTrust = types.StringNull()
		return nil, nil
	}
	server, diags := spireServer(ctx, client, data.SpireNamespace, state.SpireServer)
	if diags.HasError() {
		return nil, diags
	}
	view, err := spireViewOf(ctx, client, server)
	if err != nil {
		state.SpireTrust = types.StringNull()
		return &spireUnreachable{Server: server, Err: err}, diags
	}
	trust := spireTrustOf(ctx, client, state.TrustDomain.ValueString(), view)
	// Never seen federated and applied moments ago: still on its way.
	if trust != spireTrustFederated && trust != spireTrustStaleBundle && state.SpireTrust.IsNull() &&
		appliedWithin(obj, client.FieldManager, spireTrustPending, time.Now()) {
		state.SpireTrust = types.StringNull()
		return nil, diags
	}
	state.SpireTrust = types.StringValue(trust)
	return nil, diags
}

// spireTrustOf judges SPIRE's view of td. A bundle SPIRE holds is stale when
// the peer's https_spiffe endpoint answers with a certificate of a CA the
// bundle does not hold; an endpoint that does not answer proves nothing.
func spireTrustOf(ctx context.Context, client *kube.Client, td string, view spireexec.View) string {
	rel, ok := view.Relationships[td]
	if !ok {
		return spireTrustNoRelationship
	}
	held := view.Bundles[td]
	if held == nil {
		return spireTrustNoBundle
	}
	if rel.Profile == bundlesource.ProfileHTTPSSPIFFE && heldBundleRefused(ctx, client, rel, held) {
		return spireTrustStaleBundle
	}
	return spireTrustFederated
}

// heldBundleRefused fetches the endpoint authenticated by held, once per
// client, endpoint and bundle (objects of one cluster share them).
func heldBundleRefused(ctx context.Context, client *kube.Client, rel spireexec.Endpoint, held *spiffebundle.Bundle) bool {
	key := "spire-endpoint " + rel.URL + " " + rel.EndpointID + " " + strings.Join(trustbundle.FingerprintsSHA256(held), ",")
	v, _ := client.Memo(key, func() (any, error) { return heldBundleRefusedNow(ctx, rel, held), nil })
	refused, _ := v.(bool)
	return refused
}

// appliedWithin reports whether manager applied obj less than d before now.
func appliedWithin(obj *unstructured.Unstructured, manager string, d time.Duration, now time.Time) bool {
	if obj == nil {
		return false
	}
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Time != nil && now.Sub(e.Time.Time) < d {
			return true
		}
	}
	return false
}

// planSpireTrust completes spire_trust in plan: unknown on create (the apply
// tells), the repair when the prior state says SPIRE lost the federation,
// else the prior value. A repair that needs a bundle the configuration does
// not give is refused here, with what to set.
func planSpireTrust(ctx context.Context, client *kube.Client, spireNamespace string, plan *federatedTrustDomainResourceModel,
	config federatedTrustDomainResourceModel, state *federatedTrustDomainResourceModel) diag.Diagnostics {
	var diags diag.Diagnostics
	switch {
	case plan.CheckSpire.IsUnknown():
		plan.SpireTrust = types.StringUnknown()
	case !plan.CheckSpire.ValueBool():
		plan.SpireTrust = types.StringNull()
	case state == nil:
		plan.SpireTrust = types.StringUnknown()
	case !spireTrustBroken(state.SpireTrust):
		plan.SpireTrust = state.SpireTrust
	case state.SpireTrust.ValueString() == spireTrustNoBundle && !httpsSPIFFE(ctx, plan.BundleEndpointProfile):
		// SPIRE fetches an https_web bundle at its next refresh by itself,
		// once the endpoint answers; an apply could only hurry it, and
		// would fail for as long as the peer is down.
		plan.SpireTrust = state.SpireTrust
		diags.AddWarning("SPIRE Holds No Peer Bundle",
			fmt.Sprintf("SPIRE holds no bundle of %q (ClusterFederatedTrustDomain %q). It fetches it from the https_web "+
				"endpoint %s at its next refresh; if the endpoint answers, zerotrust_spire_bundle_refresh makes that happen now.",
				plan.TrustDomain.ValueString(), plan.Name.ValueString(), plan.BundleEndpointURL.ValueString()))
	default:
		plan.SpireTrust = types.StringValue(spireTrustFederated)
		diags.Append(planSpireRepair(ctx, client, spireNamespace, *plan, config, state.SpireTrust.ValueString())...)
	}
	return diags
}

// planSpireRepair says what the apply will repair, or why it cannot.
func planSpireRepair(ctx context.Context, client *kube.Client, spireNamespace string, plan, config federatedTrustDomainResourceModel, found string) diag.Diagnostics {
	var diags diag.Diagnostics
	td, name := plan.TrustDomain.ValueString(), plan.Name.ValueString()
	where := "the SPIRE server"
	if client != nil {
		if server, d := spireServer(ctx, client, spireNamespace, plan.SpireServer); !d.HasError() {
			where = server.String()
		}
	}
	needsBundle := found != spireTrustNoRelationship && httpsSPIFFE(ctx, plan.BundleEndpointProfile)
	if needsBundle && config.TrustDomainBundle.IsNull() {
		diags.AddAttributeError(path.Root("trust_domain_bundle"), "SPIRE Needs the Peer Bundle Again",
			fmt.Sprintf("%s %s for %q (ClusterFederatedTrustDomain %q), and its https_spiffe endpoint %s can only be "+
				"fetched with a bundle that authenticates it. Set trust_domain_bundle to the peer's current bundle (for "+
				"example data.zerotrust_trust_bundle.<peer>.spiffe_bundle); the apply then seeds SPIRE with it.",
				where, spireTrustFinding(found), td, name, plan.BundleEndpointURL.ValueString()))
		return diags
	}
	var repair string
	switch found {
	case spireTrustNoRelationship:
		repair = "waits for spire-controller-manager to recreate the relationship from the ClusterFederatedTrustDomain, then checks the bundle"
	case spireTrustNoBundle:
		repair = "seeds SPIRE with trust_domain_bundle and has it refresh the bundle from the peer's endpoint"
	default:
		repair = "replaces SPIRE's bundle with trust_domain_bundle and has it refresh from the peer's endpoint"
	}
	diags.AddWarning("SPIRE Federation Will Be Repaired",
		fmt.Sprintf("%s %s for %q (ClusterFederatedTrustDomain %q): its workloads cannot verify the peer's SVIDs. The apply %s.",
			where, spireTrustFinding(found), td, name, repair))
	return diags
}

func spireTrustFinding(v string) string {
	switch v {
	case spireTrustNoRelationship:
		return "has no federation relationship"
	case spireTrustNoBundle:
		return "holds no bundle"
	case spireTrustStaleBundle:
		return "holds a bundle that no longer authenticates the peer's bundle endpoint (the peer's CA changed)"
	}
	return v
}

// repairSpireTrust makes SPIRE federate with the peer again and hold a
// bundle that authenticates its endpoint; bundle is the configuration's
// trust_domain_bundle (not the state's, which keeps the bootstrap value). It
// works from a fresh view of SPIRE, not the plan's: the apply runs later.
func repairSpireTrust(ctx context.Context, server spireexec.Server, m federatedTrustDomainResourceModel, bundle types.String) error {
	td := m.TrustDomain.ValueString()
	var view spireexec.View
	var last error
	// spire-controller-manager recreates a missing relationship at its next
	// reconcile (its resync interval, 10 s by default).
	err := wait.PollUntilContextCancel(ctx, spireexec.PollInterval, true, func(ctx context.Context) (bool, error) {
		view, last = server.View(ctx)
		if last != nil {
			return false, nil //nolint:nilerr // retried until ctx ends; last goes into the error
		}
		if _, ok := view.Relationships[td]; !ok {
			last = fmt.Errorf("spire-controller-manager has not recreated the federation relationship with %q "+
				"(is it running, and does the object's className %q match its class?)", td, m.ClassName.ValueString())
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("%w: %v", err, last)
	}
	rel := view.Relationships[td]
	held := view.Bundles[td]
	seeded := false
	stale := held != nil && rel.Profile == bundlesource.ProfileHTTPSSPIFFE && heldBundleRefusedNow(ctx, rel, held)
	if (held == nil || stale) && !bundle.IsNull() && !bundle.IsUnknown() {
		id, err := spiffeid.TrustDomainFromString(td)
		if err != nil {
			return err
		}
		b, err := trustbundle.Parse(id, []byte(bundle.ValueString()))
		if err != nil {
			return fmt.Errorf("trust_domain_bundle: %w", err)
		}
		doc, err := b.Marshal()
		if err != nil {
			return err
		}
		if err := server.SetBundle(ctx, td, doc); err != nil {
			return fmt.Errorf("seeding SPIRE with trust_domain_bundle (`spire-server bundle set`): %w", err)
		}
		seeded = true
	}
	// Refresh succeeds once SPIRE fetched the peer's bundle with what it
	// holds now: the proof that the endpoint authenticates again. After a
	// seed the bundle is in place whatever the endpoint does now, so a peer
	// that is down as well is a warning, not a failed repair.
	refreshCtx := ctx
	if seeded {
		var cancel context.CancelFunc
		refreshCtx, cancel = context.WithTimeout(ctx, spireTrustRefreshAfterSeed)
		defer cancel()
	}
	if err := server.Refresh(refreshCtx, td); err != nil {
		if seeded && ctx.Err() == nil {
			return errRefreshAfterSeed{err}
		}
		// Refresh gives this up at once (spireexec.IsPermanent).
		if spireexec.IsUnknownAuthority(err) && !seeded {
			return fmt.Errorf("%w (trust_domain_bundle is not set, and the bundle SPIRE holds cannot authenticate the endpoint)", err)
		}
		return err
	}
	return nil
}

// spireTrustRefreshAfterSeed bounds the refresh after a seed.
const spireTrustRefreshAfterSeed = 30 * time.Second

// errRefreshAfterSeed is a repair that seeded the bundle but could not
// refresh it from the endpoint.
type errRefreshAfterSeed struct{ err error }

func (e errRefreshAfterSeed) Error() string { return e.err.Error() }
func (e errRefreshAfterSeed) Unwrap() error { return e.err }

// heldBundleRefusedNow fetches the endpoint authenticated by held (the
// endpoint's SVID is of the peer's trust domain, held's).
func heldBundleRefusedNow(ctx context.Context, rel spireexec.Endpoint, held *spiffebundle.Bundle) bool {
	ctx, cancel := context.WithTimeout(ctx, spireTrustEndpointTimeout)
	defer cancel()
	_, err := rel.Fetch(ctx, held.TrustDomain(), held)
	return bundlesource.IsUnknownAuthority(err)
}

// httpsSPIFFE reports a bundle_endpoint_profile of type https_spiffe.
func httpsSPIFFE(ctx context.Context, profile types.Object) bool {
	var p bundleEndpointProfileModel
	if profile.IsNull() || profile.IsUnknown() || profile.As(ctx, &p, basetypes.ObjectAsOptions{}).HasError() {
		return false
	}
	return p.Type.ValueString() == bundlesource.ProfileHTTPSSPIFFE
}
