package resources

// This file holds what zerotrust_spire_federation knows about the Zero Trust
// Workload Identity Manager operator's spire-server controller
// (openshift/zero-trust-workload-identity-manager,
// pkg/controller/spire-server): when an apply may end (the operator's
// verdict, awaitFederationVerdict) and what it leaves behind that the
// provider removes (deleteStaleFederationRoute). It is one contract, written
// against the controller's source and tested against the stand-in that
// follows the same source (internal/standin/ztwim.go).

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spirefacts"
)

const (
	// federationDefaultTimeout bounds the wait for the operator's verdict
	// after create and update (the timeouts block overrides it).
	federationDefaultTimeout = 5 * time.Minute
	// federationPollInterval paces the reads of the SpireServer's conditions.
	federationPollInterval = 500 * time.Millisecond
	// federationSettleWindow is how long a changed SpireServer may show no
	// sign of the operator's reconcile before its conditions are taken as
	// they stand. The operator sets no observedGeneration (status.go
	// ApplyStatus) and moves a condition's lastTransitionTime only when its
	// status flips, so a reconcile that ends where the previous one did (the
	// Ready=False of managed_route = false, or the same refusal again) leaves
	// nothing to tell it happened once its transient Ready=False/Progressing
	// has been missed. Its reconciles took about 1 to 5 seconds when it ran
	// against the provider, so 15 s without any sign means it has reconciled; if
	// it is not running at all, the conditions it left cannot pass for a
	// verdict and the timeout reports that.
	federationSettleWindow = 15 * time.Second
)

// The operator's condition types, reasons and messages the wait reads
// (pkg/controller/spire-server/controller.go, status.go, routes.go).
const (
	conditionReady              = "Ready"
	conditionConfigurationValid = "ConfigurationValid"
	conditionTTLValid           = "TTLConfigurationValid"
	conditionRouteAvailable     = "RouteAvailable"
	reasonProgressing           = "Progressing"
	reasonFailed                = "Failed"
	reasonRouteDisabled         = "FederationRouteDisabled"
	reasonInvalidFederation     = "InvalidFederationConfiguration"
)

// spireCondition is one status condition of the SpireServer.
type spireCondition struct {
	Type, Status, Reason, Message string
	// LastTransition is the zero time when the operator wrote none.
	LastTransition time.Time
}

// spireConditions reads status.conditions keyed by type.
func spireConditions(obj *unstructured.Unstructured) map[string]spireCondition {
	out := map[string]spireCondition{}
	if obj == nil {
		return out
	}
	items, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		c := spireCondition{Type: objText(m["type"]), Status: objText(m["status"]), Reason: objText(m["reason"]), Message: objText(m["message"])}
		c.LastTransition, _ = time.Parse(time.RFC3339, objText(m["lastTransitionTime"]))
		out[c.Type] = c
	}
	return out
}

// federationVerdictKind is what the operator said about the applied change.
type federationVerdictKind int

const (
	// verdictPending: nothing yet (or only what the operator says on its way:
	// Progressing, a transient failure such as StatefulSetAvailable on the
	// first reconcile).
	verdictPending federationVerdictKind = iota
	// verdictReady: Ready=True.
	verdictReady
	// verdictRouteDisabled: Ready=False only because managed_route is false.
	verdictRouteDisabled
	// verdictRefused: ConfigurationValid or TTLConfigurationValid is False;
	// the operator does not retry (controller.go Reconcile returns without
	// requeue after validateConfiguration and handleTTLValidation).
	verdictRefused
)

type federationVerdict struct {
	kind federationVerdictKind
	// refusal is the condition that refused, for verdictRefused.
	refusal spireCondition
}

// federationWaiter tells the operator's verdict on one apply from what it
// said before, without observedGeneration (the operator sets none): a
// condition speaks about the apply once its lastTransitionTime is at or
// after the apply (it moves on status flips, and every reconcile flips Ready
// through False/Progressing, status.go SetInitialReconciliationStatus), or
// once any poll has seen the operator write to the object since the apply
// (a condition differing from before, or a new resourceVersion: it writes
// status at the start of every reconcile). Without either sign for
// federationSettleWindow, the conditions are taken as they stand.
type federationWaiter struct {
	before map[string]spireCondition
	// since is the apply's start, truncated to lastTransitionTime's resolution.
	since, settleAt time.Time
	// changed: the apply changed the generation, so the operator reconciles
	// (its For() predicate is GenerationChanged); otherwise it says nothing new.
	changed          bool
	beforeGeneration int64
	appliedRV        string
	// seen is sticky: once the operator has written after the apply, all it
	// says is about the applied generation.
	seen bool
}

// newFederationWaiter records the object before the apply, which starts at start.
func newFederationWaiter(before *unstructured.Unstructured, start time.Time) *federationWaiter {
	return &federationWaiter{
		before:           spireConditions(before),
		beforeGeneration: before.GetGeneration(),
		since:            start.UTC().Truncate(time.Second),
		settleAt:         start.Add(federationSettleWindow),
		changed:          true,
	}
}

// applied records the object as the apply returned it.
func (w *federationWaiter) applied(out *unstructured.Unstructured) {
	w.changed = out.GetGeneration() != w.beforeGeneration
	w.appliedRV = out.GetResourceVersion()
}

// observe judges one read of the object at time now; done is true once the
// wait is over (the verdict is final, or there is nothing to wait for).
func (w *federationWaiter) observe(obj *unstructured.Unstructured, now time.Time) (federationVerdict, bool) {
	conds := spireConditions(obj)
	if !w.changed {
		// The operator is not going to reconcile: what it says is the verdict.
		v := judgeFederation(conds, func(spireCondition) bool { return true })
		return v, true
	}
	if !w.seen && (obj.GetResourceVersion() != w.appliedRV || conditionsDiffer(w.before, conds)) {
		w.seen = true
	}
	settled := !w.seen && now.After(w.settleAt)
	// lastTransitionTime has a resolution of a second: a condition written in
	// the apply's own second before the apply (the last change's refusal,
	// in a quick sequence of applies) is only fresh once it differs from
	// what was there before.
	fresh := func(c spireCondition) bool {
		return w.seen || settled || (!c.LastTransition.Before(w.since) && !sameCondition(c, w.before[c.Type]))
	}
	v := judgeFederation(conds, fresh)
	return v, v.kind != verdictPending
}

// sameCondition reports whether a and b say the same, written at the same time.
func sameCondition(a, b spireCondition) bool {
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message &&
		a.LastTransition.Equal(b.LastTransition)
}

// conditionsDiffer reports whether any condition differs (sameCondition),
// or a condition appeared or went.
func conditionsDiffer(a, b map[string]spireCondition) bool {
	if len(a) != len(b) {
		return true
	}
	for t, x := range a {
		if y, ok := b[t]; !ok || !sameCondition(x, y) {
			return true
		}
	}
	return false
}

// judgeFederation reads the verdict from the conditions that fresh says
// speak about the applied change.
func judgeFederation(conds map[string]spireCondition, fresh func(spireCondition) bool) federationVerdict {
	ready, hasReady := conds[conditionReady]
	// Progressing: a reconcile is under way (its first write), or the
	// StatefulSet is rolling out; the other conditions may be the last
	// reconcile's until it ends.
	if hasReady && ready.Reason == reasonProgressing {
		return federationVerdict{}
	}
	for _, t := range []string{conditionConfigurationValid, conditionTTLValid} {
		if c, ok := conds[t]; ok && c.Status == "False" && fresh(c) {
			return federationVerdict{kind: verdictRefused, refusal: c}
		}
	}
	if !hasReady || !fresh(ready) {
		return federationVerdict{}
	}
	if ready.Status == "True" {
		return federationVerdict{kind: verdictReady}
	}
	// status.go SetReadyCondition names the first failed condition it finds
	// ("<Type>: <message>"); with managed_route = false that is
	// RouteAvailable (routes.go reconcileRoute), for good.
	if route, ok := conds[conditionRouteAvailable]; ok && ready.Reason == reasonFailed &&
		strings.HasPrefix(ready.Message, conditionRouteAvailable+": ") && route.Reason == reasonRouteDisabled {
		return federationVerdict{kind: verdictRouteDisabled}
	}
	// Any other failure may pass (the StatefulSet not found in the
	// operator's cache on its first reconcile, which its events requeue): the
	// timeout decides.
	return federationVerdict{}
}

// awaitFederationVerdict waits for the operator's verdict on the apply that
// returned out and reports it in diags; with managedRoute it also waits for
// the federation Route, so that bundle_endpoint_url is known on return. It
// returns the SpireServer as last read, or nil. kept is the sentence its
// errors end with: what Terraform keeps of the write (federationKept).
func awaitFederationVerdict(ctx context.Context, client *kube.Client, w *federationWaiter, out *unstructured.Unstructured,
	managedRoute bool, timeout time.Duration, kept string, diags *diag.Diagnostics,
) *unstructured.Unstructured {
	w.applied(out)
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var verdict federationVerdict
	final, err := client.WaitFor(waitCtx, kube.SpireServer, "", spirefacts.ObjectName, federationPollInterval,
		func(obj *unstructured.Unstructured) (bool, error) {
			var done bool
			verdict, done = w.observe(obj, time.Now())
			return done, nil
		})
	cluster := client.DisplayName()
	switch {
	case err != nil && waitCtx.Err() != nil && ctx.Err() == nil:
		conds := spireConditions(final)
		if len(conds) == 0 {
			diags.AddError("SpireServer Not Reconciled", fmt.Sprintf(
				"No operator reported on the SpireServer \"cluster\" of cluster %q within %s after this apply: its "+
					"status has no conditions. Is the Zero Trust Workload Identity Manager operator running (and its "+
					"ZeroTrustWorkloadIdentityManager \"cluster\" created)? %s Apply again once the operator runs, or "+
					"give it more time with a timeouts block.", cluster, timeout, kept))
			return final
		}
		diags.AddError("SpireServer Not Ready", fmt.Sprintf(
			"The Zero Trust Workload Identity Manager operator gave no verdict on this change of the SpireServer "+
				"\"cluster\" of cluster %q within %s. Its conditions:%s\n\n%s Check the operator and the SPIRE server "+
				"it runs, or give it more time with a timeouts block.",
			cluster, timeout, describeConditions(final), kept))
		return final
	case err != nil:
		diags.Append(kube.Diagnostic(err, "wait for the operator's verdict on the SpireServer cluster"))
		return final
	}
	switch verdict.kind {
	case verdictRefused:
		detail := fmt.Sprintf(
			"The Zero Trust Workload Identity Manager operator refused the SpireServer \"cluster\" of cluster %q after "+
				"this apply: %s=False (%s): %s\n\nOn a refusal the operator stops reconciling the SpireServer and does "+
				"not retry until it changes again, so nothing of it is rolled out, this change included. %s Correct the "+
				"configuration and apply again.",
			cluster, verdict.refusal.Type, verdict.refusal.Reason, verdict.refusal.Message, kept)
		if verdict.refusal.Reason != reasonInvalidFederation {
			detail += fmt.Sprintf(" The refusal (%s) is about a setting of the SpireServer that this resource "+
				"does not manage: fix it where it is managed; the next apply then changes nothing that is already "+
				"on the cluster.", verdict.refusal.Reason)
		}
		diags.AddError("SpireServer Configuration Refused", detail)
		return final
	case verdictRouteDisabled:
		// The plan said so when managed_route = false was chosen ("SpireServer
		// Will Not Become Ready"), and Terraform shows that plan's warnings
		// again in the apply: a second warning here would tell one fact twice.
		return final
	}
	if managedRoute && w.changed {
		awaitFederationRoute(waitCtx, ctx, client, timeout, diags)
	}
	return final
}

// awaitFederationRoute waits until the operator's federation Route exists
// with a host, when the cluster serves Routes: the operator creates it in
// the last step of its reconcile (controller.go Reconcile, routes.go
// reconcileRoute), after the apply has returned.
func awaitFederationRoute(waitCtx, ctx context.Context, client *kube.Client, timeout time.Duration, diags *diag.Diagnostics) {
	served, err := client.Served(waitCtx, kube.Route)
	if err != nil || !served {
		return // no Routes (not OpenShift): bundle_endpoint_url stays null
	}
	_, err = client.WaitFor(waitCtx, kube.Route, spirefacts.RouteNamespace, spirefacts.FederationRouteName, federationPollInterval,
		func(route *unstructured.Unstructured) (bool, error) { return spirefacts.RouteURL(route) != "", nil })
	switch {
	case err == nil:
	case waitCtx.Err() != nil && ctx.Err() == nil:
		diags.AddError("Federation Route Not Created", fmt.Sprintf(
			"The operator reports the SpireServer \"cluster\" of cluster %q Ready, but its Route %s/%s did not appear "+
				"with a host within %s, so bundle_endpoint_url is not known. Check the operator's logs.",
			client.DisplayName(), spirefacts.RouteNamespace, spirefacts.FederationRouteName, timeout))
	default:
		diags.Append(kube.Diagnostic(err, "wait for the federation Route"))
	}
}

// deleteStaleFederationRoute deletes the Route the operator made for
// managed_route = true: it never deletes it itself (routes.go reconcileRoute
// only creates and updates, and the Route has no owner), so it would keep
// publishing a host nobody serves. Only a Route carrying the operator's
// label is deleted; one of the user's own under that name stays.
func deleteStaleFederationRoute(ctx context.Context, client *kube.Client, diags *diag.Diagnostics) {
	route, err := spirefacts.FederationRoute(ctx, client)
	if err != nil {
		diags.Append(kube.Diagnostic(err, "read the federation Route"))
		return
	}
	if route == nil || !spirefacts.IsOperatorRoute(route) {
		return
	}
	if err := client.Delete(ctx, kube.Route, spirefacts.RouteNamespace, spirefacts.FederationRouteName); err != nil {
		diags.Append(kube.Diagnostic(err, "delete the operator's federation Route (managed_route = false)"))
	}
}
