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
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireserverattr"
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
	spireTrustRevokedBundle   = "bundle_revoked"
	spireTrustEndpointTimeout = 5 * time.Second
)

// spireTrustBroken reports a spire_trust value that an apply repairs.
func spireTrustBroken(v types.String) bool {
	switch v.ValueString() {
	case spireTrustNoRelationship, spireTrustNoBundle, spireTrustStaleBundle, spireTrustRevokedBundle:
		return true
	}
	return false
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

// claimWarning reports whether the fast path must leave this Read to the
// framework, so that the warning is said.
func (u *spireUnreachable) claimWarning(client *kube.Client) bool {
	return u != nil && walkOf(client).spireWarningClaimed.first(u.Server.Key())
}

// addTo adds the warning when no other Read of this walk has.
func (u *spireUnreachable) addTo(client *kube.Client, diags *diag.Diagnostics) {
	if u == nil {
		return
	}
	walk := walkOf(client)
	walk.spireWarningClaimed.first(u.Server.Key())
	if !walk.spireWarningSaid.first(u.Server.Key()) {
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
// Objects of another class than the cluster's spire.class_name are left
// alone (null): another spire-controller-manager, and so another SPIRE
// server, acts on them, if any does.
func checkSpireTrust(ctx context.Context, client *kube.Client, data *providerdata.Data, state *federatedTrustDomainResourceModel,
	obj *kube.Refreshed) (*spireUnreachable, diag.Diagnostics) {
	if !state.CheckSpire.ValueBool() || state.ClassName.ValueString() != data.SpireOf(client).ClassName {
		state.SpireTrust = types.StringNull()
		return nil, nil
	}
	server, diags := spireserverattr.ServerFrom(ctx, client, data, state.SpireServer)
	if diags.HasError() {
		return nil, diags
	}
	view, err := spireViewOf(ctx, client, server)
	if err != nil {
		state.SpireTrust = types.StringNull()
		return &spireUnreachable{Server: server, Err: err}, diags
	}
	trust, lag := spireTrustOf(ctx, client, state.TrustDomain.ValueString(), view)
	// Never seen federated and applied moments ago: still on its way.
	if (trust == spireTrustNoRelationship || trust == spireTrustNoBundle) && state.SpireTrust.IsNull() &&
		appliedWithin(obj.Full(), client.FieldManager, spireTrustPending, time.Now()) {
		state.SpireTrust = types.StringNull()
		return nil, diags
	}
	walkOf(client).lags.keep(spireLagKey(server, state.TrustDomain.ValueString()), lag)
	state.SpireTrust = types.StringValue(trust)
	return nil, diags
}

// spireTrustOf judges SPIRE's view of td. A bundle SPIRE holds is stale when
// the peer's https_spiffe endpoint answers with a certificate of a CA the
// bundle does not hold; an endpoint that does not answer proves nothing.
// When it answers, what it serves is compared with what SPIRE holds
// (judgeEndpointLag). An https_web endpoint is not fetched: its roots are
// SPIRE's, not the provider's.
func spireTrustOf(ctx context.Context, client *kube.Client, td string, view spireexec.View) (string, endpointLag) {
	rel, ok := view.Relationships[td]
	if !ok {
		return spireTrustNoRelationship, endpointLag{}
	}
	held := view.Bundles[td]
	if held == nil {
		return spireTrustNoBundle, endpointLag{}
	}
	if rel.Profile != spireexec.ProfileHTTPSSPIFFE {
		return spireTrustFederated, endpointLag{}
	}
	answer := endpointWithHeld(ctx, client, rel, held)
	if answer.refused {
		return spireTrustStaleBundle, endpointLag{}
	}
	return judgeEndpointLag(held, answer.served, time.Now())
}

// SPIRE's bundle client fetches a federated bundle every quarter of the
// refresh hint the bundle last came with, and never takes a hint under a
// minute.
const (
	spirePollsPerRefreshHint = 4
	spireMinimumRefreshHint  = time.Minute
)

// judgeEndpointLag compares what SPIRE holds of a peer with what the peer's
// endpoint served (nil: it did not answer, which proves nothing).
//
// The endpoint serving an authority SPIRE lacks is a normal state of every
// scheduled rotation: a prepared authority is in the endpoint's bundle
// until SPIRE's next poll, and nothing is signed with it yet. So that alone
// is no finding (planSpireTrust warns about it). But SPIRE also holding an
// unexpired authority the endpoint no longer serves means the peer revoked
// it before SPIRE fetched the new one: a forced rotation, where the peer's
// workloads already present SVIDs of an authority SPIRE does not hold, and
// SPIRE trusts one the peer has revoked. A scheduled rotation never gets
// there, because the peer revokes only an authority its peers stopped
// needing long after they fetched its successor. That is bundle_revoked: a
// repair that makes SPIRE fetch now instead of at its next poll.
func judgeEndpointLag(held, served *spiffebundle.Bundle, now time.Time) (string, endpointLag) {
	if served == nil {
		return spireTrustFederated, endpointLag{}
	}
	lag := endpointLag{X509Difference: trustbundle.CompareX509(held, served, now)}
	if hint, ok := held.RefreshHint(); ok && hint > 0 {
		lag.Poll = max(hint, spireMinimumRefreshHint) / spirePollsPerRefreshHint
	}
	if len(lag.Missing) > 0 && len(lag.Dropped) > 0 {
		return spireTrustRevokedBundle, lag
	}
	return spireTrustFederated, lag
}

// endpointWithHeld fetches the endpoint authenticated by held, once per
// client, endpoint and bundle (objects of one cluster share them).
func endpointWithHeld(ctx context.Context, client *kube.Client, rel spireexec.Endpoint, held *spiffebundle.Bundle) endpointAnswer {
	key := "spire-endpoint " + rel.URL + " " + rel.EndpointID + " " + strings.Join(trustbundle.FingerprintsSHA256(held), ",")
	answer, _ := walkOf(client).endpoints.get(key, func() (endpointAnswer, error) { return fetchWithHeld(ctx, rel, held), nil })
	return answer
}

// spireLagKey is where checkSpireTrust leaves the endpointLag of a refresh
// for planSpireTrust, which runs later in the same walk.
func spireLagKey(s spireexec.Server, td string) string {
	return "spire-lag " + s.Key() + " " + td
}

// planSpireTrust completes spire_trust in plan: unknown on create (the apply
// tells), the repair when the prior state says SPIRE lost the federation,
// else the prior value. A repair that needs a bundle the configuration does
// not give is refused here, with what to set.
func planSpireTrust(ctx context.Context, client *kube.Client, data *providerdata.Data, plan *federatedTrustDomainResourceModel,
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
		if state.SpireTrust.ValueString() == spireTrustFederated {
			diags.Append(planSpireLag(ctx, client, data, *plan)...)
		}
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
		diags.Append(planSpireRepair(ctx, client, data, *plan, config, state.SpireTrust.ValueString())...)
	}
	return diags
}

// planSpireRepair says what the apply will repair, or why it cannot.
func planSpireRepair(ctx context.Context, client *kube.Client, data *providerdata.Data, plan, config federatedTrustDomainResourceModel, found string) diag.Diagnostics {
	var diags diag.Diagnostics
	td, name := plan.TrustDomain.ValueString(), plan.Name.ValueString()
	where := "the SPIRE server"
	if client != nil {
		if server, d := spireserverattr.ServerFrom(ctx, client, data, plan.SpireServer); !d.HasError() {
			where = server.String()
		}
	}
	lag, _ := plannedLag(ctx, client, data, plan)
	needsBundle := found != spireTrustNoRelationship && found != spireTrustRevokedBundle && httpsSPIFFE(ctx, plan.BundleEndpointProfile)
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
		repair = "seeds SPIRE with the peer's current bundle (from its endpoint, else trust_domain_bundle) and has it refresh the bundle from the endpoint"
	case spireTrustRevokedBundle:
		repair = "has SPIRE fetch the peer's bundle now (`spire-server federation refresh`) instead of " + nextPoll(lag)
	default:
		repair = "replaces SPIRE's bundle with the peer's current bundle (from its endpoint, else trust_domain_bundle) and has it refresh from the endpoint"
	}
	diags.AddWarning("SPIRE Federation Will Be Repaired",
		fmt.Sprintf("%s %s for %q (ClusterFederatedTrustDomain %q): its workloads cannot verify the peer's SVIDs. The apply %s.",
			where, spireTrustFinding(found), td, name, repair))
	return diags
}

// plannedLag is the endpointLag the refresh of this walk found for plan's
// trust domain, if any.
func plannedLag(ctx context.Context, client *kube.Client, data *providerdata.Data, plan federatedTrustDomainResourceModel) (endpointLag, bool) {
	if client == nil {
		return endpointLag{}, false
	}
	server, d := spireserverattr.ServerFrom(ctx, client, data, plan.SpireServer)
	if d.HasError() {
		return endpointLag{}, false
	}
	// A plan without a refresh (-refresh=false) finds nothing.
	return walkOf(client).lags.lookup(spireLagKey(server, plan.TrustDomain.ValueString()))
}

// nextPoll says when SPIRE fetches the peer's bundle by itself.
func nextPoll(lag endpointLag) string {
	if lag.Poll == 0 {
		return "at its next poll of the endpoint"
	}
	return fmt.Sprintf("at its next poll of the endpoint, up to %v from now (a quarter of the bundle's refresh hint)", lag.Poll)
}

// planSpireLag warns when the peer's endpoint serves X.509 authorities that
// SPIRE, federated otherwise, does not hold yet: the normal state of a
// scheduled rotation between the peer's prepare and SPIRE's next poll, so
// not a change (judgeEndpointLag), but workloads of the peer that already
// present SVIDs of such an authority (activated and tainted in a hurry)
// fail with this cluster until then.
func planSpireLag(ctx context.Context, client *kube.Client, data *providerdata.Data, plan federatedTrustDomainResourceModel) diag.Diagnostics {
	var diags diag.Diagnostics
	lag, ok := plannedLag(ctx, client, data, plan)
	if !ok || len(lag.Missing) == 0 {
		return diags
	}
	diags.AddWarning("SPIRE Has Not Fetched the Peer's New Authorities",
		fmt.Sprintf("The bundle endpoint %s of %q (ClusterFederatedTrustDomain %q) serves X.509 authorities that this "+
			"cluster's SPIRE server does not hold yet: %s. SPIRE fetches them %s. That is normal right after the peer "+
			"prepared a new authority. If the peer already signs with it (a rotation forced through activate and taint), "+
			"workloads of the peer fail mTLS with this cluster until then: the action zerotrust_spire_bundle_refresh makes "+
			"SPIRE fetch now. Once the peer revokes the old authority, the plan repairs this by itself (spire_trust "+
			"bundle_revoked).", plan.BundleEndpointURL.ValueString(), plan.TrustDomain.ValueString(), plan.Name.ValueString(),
			strings.Join(trustbundle.Describe(lag.Missing), ", "), nextPoll(lag)))
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
	case spireTrustRevokedBundle:
		return "holds a bundle with an authority the peer revoked and without the one that replaced it (a forced CA rotation of the peer)"
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
	stale := held != nil && rel.Profile == spireexec.ProfileHTTPSSPIFFE && fetchWithHeld(ctx, rel, held).refused
	if (held == nil || stale) && !bundle.IsNull() && !bundle.IsUnknown() {
		id, err := spiffeid.TrustDomainFromString(td)
		if err != nil {
			return err
		}
		b, err := trustbundle.Parse(id, []byte(bundle.ValueString()))
		if err != nil {
			return fmt.Errorf("trust_domain_bundle: %w", err)
		}
		doc, err := seedDocument(ctx, rel, b)
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

// seedDocument is the bundle a repair seeds SPIRE with: what the peer's
// endpoint serves now when configured (trust_domain_bundle) authenticates
// it, else configured. A configured bundle read from a bundle ConfigMap can
// still carry an authority the peer revoked (SPIRE does not rewrite the
// ConfigMap on revocation); the endpoint serves the peer's bundle as it is
// now, so seeding from it never hands SPIRE a revoked authority.
func seedDocument(ctx context.Context, rel spireexec.Endpoint, configured *spiffebundle.Bundle) ([]byte, error) {
	seed := configured
	if rel.Profile == spireexec.ProfileHTTPSSPIFFE {
		if served := fetchWithHeld(ctx, rel, configured).served; served != nil {
			seed = served
		}
	}
	return seed.Marshal()
}

// spireTrustRefreshAfterSeed bounds the refresh after a seed.
const spireTrustRefreshAfterSeed = 30 * time.Second

// errRefreshAfterSeed is a repair that seeded the bundle but could not
// refresh it from the endpoint.
type errRefreshAfterSeed struct{ err error }

func (e errRefreshAfterSeed) Error() string { return e.err.Error() }
func (e errRefreshAfterSeed) Unwrap() error { return e.err }

// fetchWithHeld fetches the endpoint authenticated by held (the endpoint's
// SVID is of the peer's trust domain, held's).
func fetchWithHeld(ctx context.Context, rel spireexec.Endpoint, held *spiffebundle.Bundle) endpointAnswer {
	ctx, cancel := context.WithTimeout(ctx, spireTrustEndpointTimeout)
	defer cancel()
	served, err := bundlesource.FetchRelationship(ctx, rel, held.TrustDomain(), held)
	return endpointAnswer{served: served, refused: bundlesource.IsUnknownAuthority(err)}
}

// httpsSPIFFE reports a bundle_endpoint_profile of type https_spiffe.
func httpsSPIFFE(ctx context.Context, profile types.Object) bool {
	var p bundleEndpointProfileModel
	if profile.IsNull() || profile.IsUnknown() || profile.As(ctx, &p, basetypes.ObjectAsOptions{}).HasError() {
		return false
	}
	return p.Type.ValueString() == spireexec.ProfileHTTPSSPIFFE
}
