package standin

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// The IstioCSR stand-in plays the cert-manager Operator for Red Hat
// OpenShift (openshift/cert-manager-operator, pkg/controller/istiocsr, at
// 454cb8846), whose istio-csr controller cannot run here. Like the operator
// it works only through the API server, and it does what the controller
// does; each behaviour's comment names the controller function it follows
// (files under pkg/controller/istiocsr unless said otherwise):
//
//   - controller.go processReconcileRequest: an IstioCSR being deleted only
//     loses its finalizer (cleanUp does no cleanup); otherwise the finalizer
//     is added, the reject annotation checked, the single-instance rule
//     applied, then the objects reconciled;
//   - every Update of the IstioCSR (finalizer, processed and reject
//     annotations) is a full Update of the operator's typed copy, which
//     re-serialises the spec (reserialiseIstioCSRSpec);
//   - common/reconcile_result.go HandleReconcileResult: irrecoverable errors
//     set Degraded=True and are not retried until the spec changes; others
//     set Ready=False Progressing and are retried (here on every tick, where
//     the operator waits 30 s);
//   - api/operator/v1alpha1/conditions.go SetCondition: a condition is
//     rewritten only when its status or reason changes, never with an
//     observedGeneration.
//
// The lab has no kube-controller-manager and no cert-manager, so the
// stand-in also plays their part for the objects the operator creates: the
// agent's Deployment becomes available and istiod's Certificate Ready (and
// its Secret istiod-tls appears), unless a test holds them back
// (IstioCSRDeps.Held) to prove that an apply waits for them.
//
// cert-manager's Issuer, ClusterIssuer and Certificate CRDs are installed in
// a minimal form (schema preserved, no validation): cert-manager publishes
// its CRDs, but they are not among the released upstream CRDs the harness
// installs (internal/testkit/harness/crds.go), and only the fields read here matter.
//
// The stand-in's reconcile is in this file, what it creates in
// istiocsr_operands.go and how it writes and compares objects in
// istiocsr_objects.go; the CRDs are installed by certmanager_crds.go.

const (
	istioCSRStandInTick    = 200 * time.Millisecond
	istioCSRStandInManager = "cert-manager-operator-standin"
	istioCSRStandInImage   = "registry.example.test/cert-manager/istio-csr:v0.14.2"
	istioCSRAgentName      = "cert-manager-istio-csr"

	// IstioCSRFinalizer is the operator's finalizer
	// ("istiocsr.openshift.operator.io/" + ControllerName).
	IstioCSRFinalizer = "istiocsr.openshift.operator.io/cert-manager-istio-csr-controller"
	// IstioCSRProcessedAnnotation is set after the first successful reconcile.
	IstioCSRProcessedAnnotation = "operator.openshift.io/istio-csr-processed"
	// IstioCSRRejectAnnotation marks an IstioCSR refused for good because an
	// older one exists.
	IstioCSRRejectAnnotation = "operator.openshift.io/istio-csr-reject-multiple-instance"
	// IstioCSRNamespaceLabel maps objects outside the IstioCSR's namespace to it.
	IstioCSRNamespaceLabel = "cert-manager-istio-csr-namespace"
	istioCSRCACopyName     = "cert-manager-istio-csr-issuer-ca-copy"
	istioCSRCACopyKey      = "ca.crt"
	istiodCertificateName  = "istiod"
	istiodSecretName       = "istiod-tls"
)

var (
	certManagerIssuerGVR        = kube.CertManagerIssuer.GVR()
	certManagerClusterIssuerGVR = kube.CertManagerClusterIssuer.GVR()
	certManagerCertificateGVR   = kube.CertManagerCertificate.GVR()
)

// IstioCSROperandKind is one kind of object the operator creates for an
// IstioCSR, and where (see IstioCSROperands).
type IstioCSROperandKind struct {
	GVR schema.GroupVersionResource
	// Where: "own" (the IstioCSR's namespace), "istio" (istio.namespace) or
	// "cluster".
	Where string
}

// IstioCSROperands are the kinds of everything the operator creates for an
// IstioCSR, with its labels (constants.go controllerDefaultResourceLabels,
// plus the namespace mapping label outside the IstioCSR's namespace).
var IstioCSROperands = []IstioCSROperandKind{
	{kube.Deployment.GVR(), "own"},
	{kube.Service.GVR(), "own"},
	{kube.ServiceAccount.GVR(), "own"},
	{kube.NetworkPolicy.GVR(), "own"},
	{configMapGVR, "own"},
	{kube.Role.GVR(), "istio"},
	{kube.RoleBinding.GVR(), "istio"},
	{certManagerCertificateGVR, "istio"},
	{kube.ClusterRole.GVR(), "cluster"},
	{kube.ClusterRoleBinding.GVR(), "cluster"},
}

var (
	deploymentGVR         = IstioCSROperands[0].GVR
	serviceGVR            = IstioCSROperands[1].GVR
	serviceAccountGVR     = IstioCSROperands[2].GVR
	networkPolicyGVR      = IstioCSROperands[3].GVR
	roleGVR               = IstioCSROperands[5].GVR
	roleBindingGVR        = IstioCSROperands[6].GVR
	clusterRoleGVR        = IstioCSROperands[8].GVR
	clusterRoleBindingGVR = IstioCSROperands[9].GVR
)

// IstioCSRDeps is what the IstioCSR stand-in works through.
type IstioCSRDeps struct {
	// Dynamic talks to the cluster the stand-in serves.
	Dynamic dynamic.Interface
	// Held reports whether the agent's Deployment and istiod's Certificate
	// of the IstioCSR in namespace are held back: while held, the
	// stand-in's kube controllers and cert-manager leave them unavailable
	// and not Ready, as a crash-looping agent or a slow issuer would. Nil
	// holds nothing back.
	Held func(namespace string) bool
}

// StartIstioCSR installs the cert-manager CRDs on the cluster deps.Dynamic
// talks to and starts the stand-in cert-manager Operator there; it runs
// until stop is called or ctx ends.
func StartIstioCSR(ctx context.Context, deps IstioCSRDeps) (s *IstioCSR, stop func(), err error) {
	if err := installCertManagerCRDs(ctx, deps.Dynamic); err != nil {
		return nil, nil, fmt.Errorf("installing the cert-manager CRDs: %w", err)
	}
	held := deps.Held
	if held == nil {
		held = func(string) bool { return false }
	}
	s = &IstioCSR{dyn: deps.Dynamic, held: held, settled: map[types.UID]int64{}}
	return s, run(ctx, istioCSRStandInTick, func(ctx context.Context) {
		s.reconcileAll(ctx)
		s.standInForControllers(ctx)
	}), nil
}

// IstioCSR is a running IstioCSR stand-in (StartIstioCSR).
type IstioCSR struct {
	dyn  dynamic.Interface
	held func(namespace string) bool
	// settled remembers, by IstioCSR uid, the generation whose reconcile
	// ended without a requeue (success, an irrecoverable error, a
	// rejection): the operator's IstioCSR watch filters on generation
	// changes (GenerationChangedPredicate), so it reconciles the object again
	// only when the spec changes. A retried error is reconciled again on the
	// next tick (the operator's requeue).
	settled map[types.UID]int64
}

// istioCSRReconcileError is common/errors.go ReconcileError: irrecoverable
// or to be retried.
type istioCSRReconcileError struct {
	irrecoverable bool
	msg           string
}

func (e *istioCSRReconcileError) Error() string { return e.msg }

func irrecoverable(format string, args ...any) error {
	return &istioCSRReconcileError{irrecoverable: true, msg: fmt.Sprintf(format, args...)}
}

func retry(format string, args ...any) error {
	return &istioCSRReconcileError{msg: fmt.Sprintf(format, args...)}
}

// fromClientError is common/errors.go FromClientError: Unauthorized,
// Forbidden, Invalid, BadRequest and ServiceUnavailable are irrecoverable,
// every other API error is retried.
func fromClientError(err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...) + ": " + err.Error()
	if apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) || apierrors.IsInvalid(err) ||
		apierrors.IsBadRequest(err) || apierrors.IsServiceUnavailable(err) {
		return &istioCSRReconcileError{irrecoverable: true, msg: msg}
	}
	return &istioCSRReconcileError{msg: msg}
}

func (s *IstioCSR) istioCSRs() dynamic.NamespaceableResourceInterface {
	return s.dyn.Resource(kube.IstioCSR.GVR())
}

func (s *IstioCSR) reconcileAll(ctx context.Context) {
	list, err := s.istioCSRs().List(ctx, metav1.ListOptions{})
	if err != nil {
		return // the API server may be busy; the next tick retries
	}
	for i := range list.Items {
		s.processReconcileRequest(ctx, &list.Items[i], list.Items)
	}
}

// processReconcileRequest follows controller.go processReconcileRequest.
func (s *IstioCSR) processReconcileRequest(ctx context.Context, obj *unstructured.Unstructured, all []unstructured.Unstructured) {
	// Deletion: cleanUp only emits an event, then the finalizer goes.
	if obj.GetDeletionTimestamp() != nil {
		if finalizers := obj.GetFinalizers(); containsString(finalizers, IstioCSRFinalizer) {
			obj.SetFinalizers(removeString(finalizers, IstioCSRFinalizer))
			_ = s.updateIstioCSR(ctx, obj)
		}
		return
	}
	// utils.go addFinalizer: a full Update, first thing of every reconcile.
	if !containsString(obj.GetFinalizers(), IstioCSRFinalizer) {
		obj.SetFinalizers(append(obj.GetFinalizers(), IstioCSRFinalizer))
		if s.updateIstioCSR(ctx, obj) != nil {
			return
		}
	}
	// containsProcessingRejectedAnnotation: checked before anything else.
	if obj.GetAnnotations()[IstioCSRRejectAnnotation] == "true" {
		return
	}
	if gen, ok := s.settled[obj.GetUID()]; ok && gen == obj.GetGeneration() {
		return
	}
	// utils.go disallowMultipleIstioCSRInstances: only the oldest IstioCSR of
	// the cluster is served; an instance is rejected when any other one (in
	// another namespace, being deleted or not) was created at the same second
	// or before, so equal timestamps reject them all. Only Ready=False is
	// written (no Degraded: HandleReconcileResult is not reached), then the
	// annotation, by a full Update; no requeue.
	for _, other := range all {
		if other.GetNamespace() == obj.GetNamespace() {
			continue
		}
		if !other.GetCreationTimestamp().After(obj.GetCreationTimestamp().Time) {
			s.setConditions(ctx, obj, []istioCSRCond{{"Ready", "False", "Failed",
				fmt.Sprintf("multiple instances of istiocsr exists, %s/%s will not be processed", obj.GetNamespace(), obj.GetName())}})
			s.settled[obj.GetUID()] = obj.GetGeneration()
			if fresh, err := s.istioCSRs().Namespace(obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{}); err == nil {
				annotations := fresh.GetAnnotations()
				if annotations == nil {
					annotations = map[string]string{}
				}
				annotations[IstioCSRRejectAnnotation] = "true"
				fresh.SetAnnotations(annotations)
				_ = s.updateIstioCSR(ctx, fresh)
			}
			return
		}
	}
	err := s.reconcileIstioCSRDeployment(ctx, obj)
	// common/reconcile_result.go HandleReconcileResult.
	var rerr *istioCSRReconcileError
	switch {
	case err == nil:
		s.settled[obj.GetUID()] = obj.GetGeneration()
		s.setConditions(ctx, obj, []istioCSRCond{
			{"Degraded", "False", "Ready", ""}, {"Ready", "True", "Ready", "reconciliation successful"},
		})
	case errors.As(err, &rerr) && rerr.irrecoverable:
		s.settled[obj.GetUID()] = obj.GetGeneration()
		s.setConditions(ctx, obj, []istioCSRCond{
			{"Degraded", "True", "Failed", "reconciliation failed with irrecoverable error not retrying: " + err.Error()},
			{"Ready", "False", "Failed", ""},
		})
	default:
		s.setConditions(ctx, obj, []istioCSRCond{
			{"Degraded", "False", "Ready", ""}, {"Ready", "False", "Progressing", "reconciliation failed, retrying: " + err.Error()},
		})
	}
}

// standInForControllers plays the kube controllers and cert-manager for the
// operator's objects: the agent's Deployment rolls out (status for its
// current generation, one available replica) and istiod's Certificate is
// issued (Ready=True for its generation, the Secret istiod-tls with
// ca.crt), unless IstioCSRDeps.Held holds the IstioCSR's namespace back.
func (s *IstioCSR) standInForControllers(ctx context.Context) {
	selector := metav1.ListOptions{LabelSelector: "app=" + istioCSRAgentName}
	if deps, err := s.dyn.Resource(deploymentGVR).List(ctx, selector); err == nil {
		for i := range deps.Items {
			dep := &deps.Items[i]
			if s.held(dep.GetNamespace()) {
				continue
			}
			observed, _, _ := unstructured.NestedInt64(dep.Object, "status", "observedGeneration")
			if observed == dep.GetGeneration() {
				continue
			}
			_ = unstructured.SetNestedMap(dep.Object, map[string]any{
				"observedGeneration": dep.GetGeneration(), "replicas": int64(1), "updatedReplicas": int64(1),
				"readyReplicas": int64(1), "availableReplicas": int64(1),
			}, "status")
			_, _ = s.dyn.Resource(deploymentGVR).Namespace(dep.GetNamespace()).UpdateStatus(ctx, dep, metav1.UpdateOptions{FieldManager: "kube-controller-manager-standin"})
		}
	}
	certs, err := s.dyn.Resource(certManagerCertificateGVR).List(ctx, selector)
	if err != nil {
		return
	}
	for i := range certs.Items {
		cert := &certs.Items[i]
		if s.held(cert.GetLabels()[IstioCSRNamespaceLabel]) {
			continue
		}
		ready := false
		items, _, _ := unstructured.NestedSlice(cert.Object, "status", "conditions")
		for _, item := range items {
			if c, ok := item.(map[string]any); ok && c["type"] == "Ready" && c["status"] == "True" && istioCSRNormalizeJSON(c["observedGeneration"]) == cert.GetGeneration() {
				ready = true
			}
		}
		if ready {
			continue
		}
		secret := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": istiodSecretName, "namespace": cert.GetNamespace()},
			"data":     map[string]any{"ca.crt": base64.StdEncoding.EncodeToString([]byte("stand-in CA of " + cert.GetNamespace()))},
		}}
		if _, err := s.dyn.Resource(secretGVR).Namespace(cert.GetNamespace()).Create(ctx, secret, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			continue
		}
		_ = unstructured.SetNestedSlice(cert.Object, []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "Ready", "message": "Certificate is up to date and has not expired",
			"observedGeneration": cert.GetGeneration(), "lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
		}}, "status", "conditions")
		_, _ = s.dyn.Resource(certManagerCertificateGVR).Namespace(cert.GetNamespace()).UpdateStatus(ctx, cert, metav1.UpdateOptions{FieldManager: "cert-manager-standin"})
	}
}
