package standin

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// The ZTWIM stand-in plays the spire-server controller of the
// OpenShift Zero Trust Workload Identity Manager operator
// (openshift/zero-trust-workload-identity-manager, pkg/controller/spire-server),
// which cannot run here (it renders a StatefulSet, ConfigMaps and RBAC for a
// real SPIRE server). Like the operator it works only through the API server,
// and it writes what the controller writes about spec.federation, each
// behaviour following the controller function its comment names:
//
//   - it reconciles the SpireServer `cluster` when it appears, when its
//     generation or owner references change (the For() predicate), and when
//     the ZeroTrustWorkloadIdentityManager `cluster` is created or deleted
//     (its watch maps only those events);
//   - a reconcile first sets Ready=False/Progressing "Reconciling SpireServer"
//     (status.go SetInitialReconciliationStatus), adds the owner reference to
//     the ZeroTrustWorkloadIdentityManager with a full Update that
//     re-serialises the spec (controller.go Reconcile), validates
//     spec.federation with the operator's messages (validation.go
//     validateFederationConfig), after the JWT issuer URL (controller.go
//     validateConfiguration, utils.IsValidURL), and on a refusal stops
//     without requeue; else it renders SPIRE's server.conf into the
//     ConfigMap spire-server (configmap.go reconcileSpireServerConfigMap,
//     cut down to the trust domain, the JWT issuer and the federation), then
//     reconciles the federation Route (routes.go reconcileRoute) and sets
//     Ready from the conditions of this reconcile (status.go
//     SetReadyCondition);
//   - conditions carry no observedGeneration, and lastTransitionTime moves
//     only when a condition's status flips (meta.SetStatusCondition).
//
// It renders no other part of the SPIRE server (no ServiceAccount, Service,
// RBAC, other ConfigMaps or StatefulSet conditions) and does not check TTLs.
// Every server.conf it renders is also kept in order (Renders), so a test
// can tell whether SPIRE could ever have been restarted without a peer.
//
// OpenShift's Route CRD is installed (minimal, schema preserved) when the
// cluster does not serve Routes, and the operator's namespace is created, as
// an installed operator has it.

const (
	// ZTWIMTick is how often the stand-in looks at the SpireServer.
	ZTWIMTick = 200 * time.Millisecond
	// ztwimStandInManager is the field manager of the stand-in's writes (the
	// operator sets none, so its client's user agent names it).
	ztwimStandInManager = "zero-trust-workload-identity-manager-standin"
	// ZTWIMRouteDelay is how long a reconcile takes between its first
	// status write and the Route: the operator renders the ServiceAccount,
	// Services, RBAC, webhook, three ConfigMaps and the StatefulSet first
	// (controller.go Reconcile), and the Route appeared about 1 to 5 s after
	// the apply when the operator ran against the provider (operator
	// contracts guide: "The Route appears after the reconcile").
	ZTWIMRouteDelay = 1500 * time.Millisecond
	// ztwimStandInRequeue paces a reconcile that returned an error (the Route
	// could not be created): controller-runtime requeues it with backoff.
	ztwimStandInRequeue = time.Second

	// ZTWIMRouteNamespace is the constant namespace of the federation Route
	// (utils.OperatorNamespace), whatever OPERATOR_NAMESPACE says.
	ZTWIMRouteNamespace = "zero-trust-workload-identity-manager"
	// ZTWIMRouteName is the federation Route's name (routes.go).
	ZTWIMRouteName = "spire-server-federation"
	// ZTWIMManagedByLabel and ZTWIMManagedByValue mark the operator's objects
	// (utils.SpireServerLabels); its Route cache sees only those.
	ZTWIMManagedByLabel = "app.kubernetes.io/managed-by"
	ZTWIMManagedByValue = "zero-trust-workload-identity-manager"
	// ZTWIMServerConfigMap is the ConfigMap holding SPIRE's server.conf
	// (configmap.go), in the operator's namespace.
	ZTWIMServerConfigMap = "spire-server"
)

// ZTWIMDeps is what the ZTWIM stand-in works through.
type ZTWIMDeps struct {
	// Dynamic talks to the cluster the stand-in serves.
	Dynamic dynamic.Interface
}

// StartZTWIM starts the stand-in spire-server controller against the
// cluster deps.Dynamic talks to, installing the Route CRD when the cluster
// does not serve Routes and creating the Route's namespace; it runs until
// stop is called or ctx ends. Tests start it through acctest.ZTWIMStandIn,
// bench/ on its mesh clusters, whose zerotrust_spire_federation applies wait
// for the operator's verdict.
func StartZTWIM(ctx context.Context, deps ZTWIMDeps) (s *ZTWIM, stop func(), err error) {
	dyn := deps.Dynamic
	if err := installRouteCRD(ctx, dyn); err != nil {
		return nil, nil, fmt.Errorf("installing the Route CRD: %w", err)
	}
	if err := ensureNamespace(ctx, dyn, ZTWIMRouteNamespace); err != nil {
		return nil, nil, err
	}
	s = &ZTWIM{dyn: dyn}
	return s, run(ctx, ZTWIMTick, s.tick), nil
}

// Reconciled reports whether the stand-in has reconciled the SpireServer as
// it is now (to the end, or to a refusal, and no requeue pending).
func (s *ZTWIM) Reconciled(ctx context.Context) bool {
	key, err := s.currentKey(ctx)
	return err == nil && s.reconciled(key)
}

// ZTWIM is a running stand-in (StartZTWIM).
type ZTWIM struct {
	dyn dynamic.Interface

	mu sync.Mutex
	// done is the watch key last reconciled to the end (or to a refusal,
	// which is not requeued); retryAt is set while a failed reconcile waits
	// for its requeue.
	done    string
	retryAt time.Time
	// renders is every server.conf written, oldest first.
	renders []ZTWIMRender
}

func (s *ZTWIM) reconciled(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return key == s.done && s.retryAt.IsZero()
}

func (s *ZTWIM) server() dynamic.ResourceInterface {
	return s.dyn.Resource(kube.SpireServer.GVR())
}

// currentKey sums up what the controller's watches react to: the SpireServer
// (UID, generation, owner references: the For() predicate
// GenerationChanged or owner references changed) and the
// ZeroTrustWorkloadIdentityManager's existence (its watch passes create and
// delete only, ZTWIMSpecChangedPredicate). "" when there is no SpireServer.
func (s *ZTWIM) currentKey(ctx context.Context) (string, error) {
	server, err := s.server().Get(ctx, "cluster", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return s.keyOf(ctx, server)
}

func (s *ZTWIM) keyOf(ctx context.Context, server *unstructured.Unstructured) (string, error) {
	ztwimUID := "none"
	ztwim, err := s.dyn.Resource(kube.ZeroTrustWorkloadIdentityManager.GVR()).Get(ctx, "cluster", metav1.GetOptions{})
	switch {
	case err == nil:
		ztwimUID = string(ztwim.GetUID())
	case !apierrors.IsNotFound(err):
		return "", err
	}
	owners, _ := json.Marshal(server.GetOwnerReferences())
	return fmt.Sprintf("%s/%d/%s/%s", server.GetUID(), server.GetGeneration(), owners, ztwimUID), nil
}

func (s *ZTWIM) tick(ctx context.Context) {
	server, err := s.server().Get(ctx, "cluster", metav1.GetOptions{})
	if err != nil {
		return // none yet, or the API server is busy: the next tick looks again
	}
	key, err := s.keyOf(ctx, server)
	if err != nil {
		return
	}
	s.mu.Lock()
	due := key != s.done || (!s.retryAt.IsZero() && time.Now().After(s.retryAt))
	s.mu.Unlock()
	if !due {
		return
	}
	requeue, err := s.reconcile(ctx, server)
	if err != nil {
		return // a write conflicted or failed: reconcile again on the next tick
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done, s.retryAt = key, time.Time{}
	if requeue {
		s.retryAt = time.Now().Add(ztwimStandInRequeue)
	}
}

// reconcile is controller.go Reconcile for the SpireServer `cluster`, in its
// order. requeue is set when the operator would return an error (and be
// requeued with backoff); err reports a write of the stand-in's own that
// failed, after which the next tick starts over.
func (s *ZTWIM) reconcile(ctx context.Context, server *unstructured.Unstructured) (requeue bool, err error) {
	// status.go SetInitialReconciliationStatus: on every reconcile, before
	// anything else.
	set := ztwimConditions{}
	set.add("Ready", "False", "Progressing", "Reconciling SpireServer")
	if server, err = s.writeStatus(ctx, server, set); err != nil {
		return false, err
	}
	set = ztwimConditions{}

	ztwim, err := s.dyn.Resource(kube.ZeroTrustWorkloadIdentityManager.GVR()).Get(ctx, "cluster", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		// controller.go Reconcile: no requeue; the ZTWIM watch brings it back
		// when the object is created.
		set.add("Ready", "False", "Failed", "Failed to retrieve ZeroTrustWorkloadIdentityManager from cluster")
		_, err = s.writeStatus(ctx, server, set)
		return false, err
	}
	if err != nil {
		return false, err
	}

	// controller.go Reconcile: utils.NeedsOwnerReferenceUpdate, then
	// SetControllerReference and a full Update of the typed object.
	if needsOwnerReference(server, ztwim) {
		if server, err = s.updateOwnerReference(ctx, server, ztwim); err != nil {
			return false, err
		}
	}

	trustDomain, _, _ := unstructured.NestedString(ztwim.Object, "spec", "trustDomain")
	stored := ztwimStoredConditions(server)
	// controller.go validateConfiguration: the common checks pass here (the
	// harness writes valid affinity, resources, labels and no proxy).
	set.add("ConfigurationValid", "True", "ConfigurationValid", "All configuration fields are valid")
	jwtIssuer, _, _ := unstructured.NestedString(server.Object, "spec", "jwtIssuer")
	if verr := ztwimValidURL(jwtIssuer); verr != nil {
		set.add("ConfigurationValid", "False", "InvalidJWTIssuerURL", "JWT issuer URL validation failed: "+verr.Error())
		set.setReady()
		_, err = s.writeStatus(ctx, server, set)
		return false, err
	}
	fed, hasFederation, _ := unstructured.NestedMap(server.Object, "spec", "federation")
	if hasFederation {
		if verr := ztwimValidateFederation(fed, trustDomain); verr != nil {
			// Refused: Reconcile returns without requeue, nothing after this runs.
			set.add("ConfigurationValid", "False", "InvalidFederationConfiguration",
				"Federation configuration validation failed: "+verr.Error())
			set.setReady()
			_, err = s.writeStatus(ctx, server, set)
			return false, err
		}
	}
	if c, ok := stored["ConfigurationValid"]; ok && c["status"] == "False" {
		set.add("ConfigurationValid", "True", "Ready", "Configuration validation passed")
	}

	if err := s.renderServerConf(ctx, trustDomain, jwtIssuer, fed); err != nil {
		return false, err
	}

	// The operand objects before the Route take their time.
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case <-time.After(ZTWIMRouteDelay):
	}
	if hasFederation {
		requeue = s.reconcileRoute(ctx, server, fed, trustDomain, stored, set)
	}
	set.setReady()
	_, err = s.writeStatus(ctx, server, set)
	return requeue, err
}

// needsOwnerReference is utils.NeedsOwnerReferenceUpdate: no owner
// reference matching the ZTWIM's UID, name and kind.
func needsOwnerReference(server, ztwim *unstructured.Unstructured) bool {
	for _, ref := range server.GetOwnerReferences() {
		if ref.UID == ztwim.GetUID() && ref.Name == ztwim.GetName() && ref.Kind == kube.ZeroTrustWorkloadIdentityManager.Kind {
			return false
		}
	}
	return true
}

// updateOwnerReference writes the owner reference as the operator does: the
// spec decoded into Go structs and encoded again, so metav1.Duration fields
// come back in Go's canonical form (24h -> 24h0m0s), an absent
// datastore.connMaxLifetime (int, no omitempty) appears as 0 and empty
// omitempty values vanish; the Update (not an apply) gives the stand-in's
// field manager the fields it changed.
func (s *ZTWIM) updateOwnerReference(ctx context.Context, server, ztwim *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	obj := server.DeepCopy()
	truth, isController := true, true
	owners := []metav1.OwnerReference{}
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller == nil || !*ref.Controller {
			owners = append(owners, ref)
		}
	}
	obj.SetOwnerReferences(append(owners, metav1.OwnerReference{
		APIVersion: kube.ZeroTrustWorkloadIdentityManager.APIVersion(), Kind: kube.ZeroTrustWorkloadIdentityManager.Kind,
		Name: ztwim.GetName(), UID: ztwim.GetUID(), Controller: &isController, BlockOwnerDeletion: &truth,
	}))
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	for _, field := range []string{"caValidity", "defaultX509Validity", "defaultJWTValidity"} {
		if v, ok := spec[field].(string); ok {
			if d, err := time.ParseDuration(v); err == nil {
				spec[field] = d.String()
			}
		}
	}
	if ds, ok := spec["datastore"].(map[string]any); ok {
		if _, found := ds["connMaxLifetime"]; !found {
			ds["connMaxLifetime"] = int64(0)
		}
	}
	for _, field := range []string{"labels", "nodeSelector"} {
		if m, ok := spec[field].(map[string]any); ok && len(m) == 0 {
			delete(spec, field)
		}
	}
	if ref, found, _ := unstructured.NestedString(spec, "federation", "bundleEndpoint", "httpsWeb", "servingCert", "externalSecretRef"); found && ref == "" {
		unstructured.RemoveNestedField(spec, "federation", "bundleEndpoint", "httpsWeb", "servingCert", "externalSecretRef")
	}
	obj.Object["spec"] = spec
	return s.server().Update(ctx, obj, metav1.UpdateOptions{FieldManager: ztwimStandInManager})
}

// ztwimConditions are the conditions one reconcile sets, in the order set
// (the operator keeps them in a map, status.go Manager).
type ztwimConditions map[string]map[string]any

func (c ztwimConditions) add(conditionType, status, reason, message string) {
	c[conditionType] = map[string]any{"type": conditionType, "status": status, "reason": reason, "message": message}
}

// setReady is status.go SetReadyCondition: only this reconcile's
// conditions count; any False one whose reason is not a progressing one
// makes Ready=False/Failed "<Type>: <message>", a progressing one
// Ready=False/Progressing, otherwise Ready=True. The stand-in sets at most
// one failed condition, so the operator's random map order does not matter.
func (c ztwimConditions) setReady() {
	progressing := map[string]bool{"StatefulSetNotReady": true, "DaemonSetNotReady": true, "DeploymentNotReady": true}
	var failed, waiting map[string]any
	for t, cond := range c {
		if t == "Ready" || cond["status"] != "False" {
			continue
		}
		if progressing[ztwimString(cond, "reason")] {
			waiting = cond
		} else {
			failed = cond
		}
	}
	switch {
	case failed != nil:
		c.add("Ready", "False", "Failed", fmt.Sprintf("%s: %s", failed["type"], failed["message"]))
	case waiting != nil:
		c.add("Ready", "False", "Progressing", fmt.Sprintf("%s: %s", waiting["type"], waiting["message"]))
	default:
		c.add("Ready", "True", "Ready", "All components are ready")
	}
}

// writeStatus merges set into the stored conditions as
// meta.SetStatusCondition does (lastTransitionTime moves only when the
// status flips; no observedGeneration, status.go ApplyStatus) and writes
// the status subresource.
func (s *ZTWIM) writeStatus(ctx context.Context, server *unstructured.Unstructured, set ztwimConditions) (*unstructured.Unstructured, error) {
	stored := ztwimStoredConditions(server)
	now := time.Now().UTC().Format(time.RFC3339)
	var order []string
	items, _, _ := unstructured.NestedSlice(server.Object, "status", "conditions")
	for _, item := range items {
		if m, ok := item.(map[string]any); ok {
			order = append(order, ztwimString(m, "type"))
		}
	}
	for t := range set {
		if _, ok := stored[t]; !ok {
			order = append(order, t)
		}
	}
	conditions := make([]any, 0, len(order))
	for _, t := range order {
		old, hasOld := stored[t]
		c, changed := set[t]
		if !changed {
			conditions = append(conditions, old)
			continue
		}
		c["lastTransitionTime"] = now
		if hasOld && old["status"] == c["status"] {
			c["lastTransitionTime"] = old["lastTransitionTime"]
		}
		conditions = append(conditions, c)
	}
	obj := server.DeepCopy()
	if err := unstructured.SetNestedSlice(obj.Object, conditions, "status", "conditions"); err != nil {
		return nil, err
	}
	return s.server().UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: ztwimStandInManager})
}

func ztwimStoredConditions(server *unstructured.Unstructured) map[string]map[string]any {
	out := map[string]map[string]any{}
	items, _, _ := unstructured.NestedSlice(server.Object, "status", "conditions")
	for _, item := range items {
		if m, ok := item.(map[string]any); ok {
			out[ztwimString(m, "type")] = m
		}
	}
	return out
}

// ztwimString is m[field] when it is a string, else "": the operator's Go
// types read only strings there, so a value of another JSON type counts as
// unset.
func ztwimString(m map[string]any, field string) string {
	s, _ := m[field].(string)
	return s
}
