package acctest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// This file is a TEST-ONLY stand-in for the cert-manager Operator for Red Hat
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
// (IstioCSRHoldAgent) to prove that an apply waits for them.
//
// cert-manager's Issuer, ClusterIssuer and Certificate CRDs are installed in
// a minimal form (schema preserved, no validation): cert-manager publishes
// its CRDs, but they are not among the released upstream CRDs the harness
// installs (internal/harness/crds.go), and only the fields read here matter.

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
	istioCSRStandInMu      sync.Mutex
	istioCSRStandInRunning = map[string]bool{}
	// istioCSRHeld holds back the agent and istiod's Certificate of the
	// IstioCSR of a namespace, by "<cluster>/<namespace>".
	istioCSRHeld sync.Map

	certManagerIssuerGVR        = kube.CertManagerIssuer.GVR()
	certManagerClusterIssuerGVR = kube.CertManagerClusterIssuer.GVR()
	// CertManagerCertificateGVR is cert-manager's Certificate.
	CertManagerCertificateGVR = kube.CertManagerCertificate.GVR()
	istioCSRCRDGVR            = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	istioCSRNamespaceGVR      = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	configMapGVR              = kube.ConfigMap.GVR()
	secretGVR                 = kube.Secret.GVR()
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
	{CertManagerCertificateGVR, "istio"},
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

// IstioCSRStandIn starts the stand-in cert-manager Operator on cluster (once
// per test binary and cluster; it stops when the tests are done) and
// installs the cert-manager CRDs there.
func IstioCSRStandIn(t *testing.T, cluster string) {
	t.Helper()
	istioCSRStandInMu.Lock()
	defer istioCSRStandInMu.Unlock()
	if istioCSRStandInRunning[cluster] {
		return
	}
	dyn := Dynamic(t, cluster)
	if err := installCertManagerCRDs(dyn); err != nil {
		t.Fatalf("acctest: IstioCSR stand-in on %s: installing the cert-manager CRDs: %v", cluster, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s := &istioCSRStandIn{dyn: dyn, cluster: cluster, settled: map[types.UID]int64{}}
	go func() {
		defer close(done)
		for {
			s.reconcileAll(ctx)
			s.standInForControllers(ctx)
			select {
			case <-ctx.Done():
				return
			case <-time.After(istioCSRStandInTick):
			}
		}
	}()
	istioCSRStandInRunning[cluster] = true
	AtExit(func() {
		cancel()
		<-done
	})
}

// IstioCSRHoldAgent holds back (hold) or releases the agent's Deployment and
// istiod's Certificate of the IstioCSR in namespace ns: while held, the
// stand-in's kube controllers and cert-manager leave them unavailable and
// not Ready, as a crash-looping agent or a slow issuer would.
func IstioCSRHoldAgent(cluster, ns string, hold bool) {
	if hold {
		istioCSRHeld.Store(cluster+"/"+ns, true)
	} else {
		istioCSRHeld.Delete(cluster + "/" + ns)
	}
}

// ResetIstioCSRs deletes every IstioCSR of cluster and waits until they are
// gone (the stand-in removes the finalizer), so a test of the single-instance
// rule starts with none. IstioCSR tests run one at a time (not in
// parallel): the operator serves one IstioCSR per cluster.
func ResetIstioCSRs(t *testing.T, cluster string) {
	t.Helper()
	ri := Dynamic(t, cluster).Resource(kube.IstioCSR.GVR())
	ctx := context.Background()
	list, err := ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("acctest: %s: list IstioCSRs: %v", cluster, err)
	}
	for _, item := range list.Items {
		if err := ri.Namespace(item.GetNamespace()).Delete(ctx, item.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("acctest: %s: delete IstioCSR %s/%s: %v", cluster, item.GetNamespace(), item.GetName(), err)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		list, err := ri.List(ctx, metav1.ListOptions{})
		if err == nil && len(list.Items) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("acctest: %s: IstioCSRs still exist 30s after delete (err %v)", cluster, err)
		}
	}
}

// CertManagerIssuer creates a self-signed cert-manager Issuer in namespace
// (created when missing), or a ClusterIssuer when namespace is "", whose
// status reports Ready=True when ready is set. An IstioCSR uses an Issuer
// only from its istio.namespace. IstioCSRStandIn must have run on the cluster.
func CertManagerIssuer(t *testing.T, cluster, namespace, name string, ready bool) {
	t.Helper()
	CertManagerIssuerSpec(t, cluster, namespace, name, map[string]any{"selfSigned": map[string]any{}}, ready)
}

// CertManagerIssuerSpec is CertManagerIssuer with the issuer's spec, e.g.
// {"ca": {"secretName": "root"}} or {"acme": {...}}.
func CertManagerIssuerSpec(t *testing.T, cluster, namespace, name string, spec map[string]any, ready bool) {
	t.Helper()
	if namespace != "" {
		EnsureNamespace(t, cluster, namespace)
	}
	kind := "ClusterIssuer"
	var ri dynamic.ResourceInterface = Dynamic(t, cluster).Resource(certManagerClusterIssuerGVR)
	if namespace != "" {
		kind, ri = "Issuer", Dynamic(t, cluster).Resource(certManagerIssuerGVR).Namespace(namespace)
	}
	status := "False"
	if ready {
		status = "True"
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cert-manager.io/v1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec":     spec,
		// The test CRD has no status subresource, so status is written with the object.
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": status}}},
	}}
	if namespace == "" {
		unstructured.RemoveNestedField(obj.Object, "metadata", "namespace")
	}
	if _, err := ri.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("acctest: %s: create %s %s/%s: %v", cluster, kind, namespace, name, err)
	}
}

// SetCertManagerIssuerSpec replaces the spec of the Issuer namespace/name
// (a ClusterIssuer when namespace is "").
func SetCertManagerIssuerSpec(t *testing.T, cluster, namespace, name string, spec map[string]any) {
	t.Helper()
	var ri dynamic.ResourceInterface = Dynamic(t, cluster).Resource(certManagerClusterIssuerGVR)
	if namespace != "" {
		ri = Dynamic(t, cluster).Resource(certManagerIssuerGVR).Namespace(namespace)
	}
	obj, err := ri.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("acctest: %s: get issuer %s/%s: %v", cluster, namespace, name, err)
	}
	obj.Object["spec"] = spec
	if _, err := ri.Update(context.Background(), obj, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("acctest: %s: update issuer %s/%s: %v", cluster, namespace, name, err)
	}
}

// DeleteConfigMap deletes the ConfigMap ns/name on cluster.
func DeleteConfigMap(t *testing.T, cluster, ns, name string) {
	t.Helper()
	if err := Dynamic(t, cluster).Resource(configMapGVR).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("acctest: %s: delete ConfigMap %s/%s: %v", cluster, ns, name, err)
	}
}

// EnsureNamespace creates namespace ns on cluster unless it exists.
func EnsureNamespace(t *testing.T, cluster, ns string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns},
	}}
	_, err := Dynamic(t, cluster).Resource(istioCSRNamespaceGVR).Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("acctest: %s: create namespace %s: %v", cluster, ns, err)
	}
}

// CreateConfigMap creates a ConfigMap with data in ns on cluster.
func CreateConfigMap(t *testing.T, cluster, ns, name string, data map[string]any) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": ns}, "data": data,
	}}
	if _, err := Dynamic(t, cluster).Resource(configMapGVR).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("acctest: %s: create ConfigMap %s/%s: %v", cluster, ns, name, err)
	}
}

// CreateSecret creates a Secret with data (plain text, encoded here) in ns.
func CreateSecret(t *testing.T, cluster, ns, name string, data map[string]string) {
	t.Helper()
	encoded := map[string]any{}
	for k, v := range data {
		encoded[k] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": name, "namespace": ns}, "data": encoded,
	}}
	if _, err := Dynamic(t, cluster).Resource(secretGVR).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("acctest: %s: create Secret %s/%s: %v", cluster, ns, name, err)
	}
}

// TestCertificatePEM is a throwaway self-signed certificate, a CA (that may
// sign certificates) when ca is set.
func TestCertificatePEM(t *testing.T, ca bool) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "zerotrust test"},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, BasicConstraintsValid: true,
	}
	if ca {
		tmpl.IsCA, tmpl.KeyUsage = true, x509.KeyUsageCertSign|x509.KeyUsageDigitalSignature
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

type istioCSRStandIn struct {
	dyn     dynamic.Interface
	cluster string
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

func (s *istioCSRStandIn) istioCSRs() dynamic.NamespaceableResourceInterface {
	return s.dyn.Resource(kube.IstioCSR.GVR())
}

func (s *istioCSRStandIn) reconcileAll(ctx context.Context) {
	list, err := s.istioCSRs().List(ctx, metav1.ListOptions{})
	if err != nil {
		return // the API server may be busy; the next tick retries
	}
	for i := range list.Items {
		s.processReconcileRequest(ctx, &list.Items[i], list.Items)
	}
}

// processReconcileRequest follows controller.go processReconcileRequest.
func (s *istioCSRStandIn) processReconcileRequest(ctx context.Context, obj *unstructured.Unstructured, all []unstructured.Unstructured) {
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

// reconcileIstioCSRDeployment follows install_istiocsr.go: network
// policies, services, service account, RBAC, istiod's Certificate, the
// Deployment (with the issuer checks and the CA ConfigMap), each status
// field as soon as its step passes, and the processed annotation after the
// first success.
func (s *istioCSRStandIn) reconcileIstioCSRDeployment(ctx context.Context, obj *unstructured.Unstructured) error {
	ns := obj.GetNamespace()
	cfg, _, _ := unstructured.NestedMap(obj.Object, "spec", "istioCSRConfig")
	istioNS, _, _ := unstructured.NestedString(cfg, "istio", "namespace")
	labels := istioCSRResourceLabels(obj)
	mapped := map[string]string{IstioCSRNamespaceLabel: ns}
	for k, v := range labels {
		mapped[k] = v
	}
	port, found, _ := unstructured.NestedInt64(cfg, "server", "port")
	if !found || port == 0 {
		port = 443
	}

	// networkpolicies.go: four policies, asset labels merged with ours.
	for _, name := range []string{"istio-csr-deny-all", "istio-csr-allow-egress-to-api-server", "istio-csr-allow-ingress-to-metrics", "istio-csr-allow-ingress-to-grpc"} {
		l := map[string]string{"istiocsr.operator.openshift.io/owned-by": "istio-csr"}
		for k, v := range labels {
			l[k] = v
		}
		np := istioCSRObject("networking.k8s.io/v1", "NetworkPolicy", ns, name, l, map[string]any{
			"podSelector": map[string]any{"matchLabels": map[string]any{"app": istioCSRAgentName}}, "policyTypes": []any{"Ingress"},
		})
		if err := s.ensure(ctx, networkPolicyGVR, np); err != nil {
			return fromClientError(err, "failed to create network policy %s/%s", ns, name)
		}
	}
	// services.go: the gRPC service (server.port) and the metrics service.
	for name, p := range map[string]int64{istioCSRAgentName: port, istioCSRAgentName + "-metrics": 9402} {
		svc := istioCSRObject("v1", "Service", ns, name, labels, map[string]any{
			"selector": map[string]any{"app": istioCSRAgentName},
			"ports":    []any{map[string]any{"name": "web", "port": p, "targetPort": int64(6443), "protocol": "TCP"}},
		})
		if err := s.ensure(ctx, serviceGVR, svc); err != nil {
			return fromClientError(err, "failed to create service %s/%s", ns, name)
		}
	}
	s.setStatusField(ctx, obj, "istioCSRGRPCEndpoint", fmt.Sprintf("%s.%s.svc:%d", istioCSRAgentName, ns, port))
	// serviceaccounts.go.
	if err := s.ensure(ctx, serviceAccountGVR, istioCSRObject("v1", "ServiceAccount", ns, istioCSRAgentName, labels, nil)); err != nil {
		return fromClientError(err, "failed to create serviceaccount %s/%s", ns, istioCSRAgentName)
	}
	s.setStatusField(ctx, obj, "serviceAccount", istioCSRAgentName)
	// rbacs.go: a ClusterRole and ClusterRoleBinding by generateName, found
	// again by the full label set; Roles and RoleBindings in istio.namespace.
	subject := []any{map[string]any{"kind": "ServiceAccount", "name": istioCSRAgentName, "namespace": ns}}
	clusterRole, err := s.ensureGenerated(ctx, clusterRoleGVR, istioCSRObject("rbac.authorization.k8s.io/v1", "ClusterRole", "", "", mapped, nil),
		map[string]any{"rules": []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps", "namespaces"}, "verbs": []any{"get", "list", "watch"}}}},
		objString(nestedValue(obj.Object, "status", "clusterRole")))
	if err != nil {
		return fromClientError(err, "failed to create clusterrole")
	}
	binding, err := s.ensureGenerated(ctx, clusterRoleBindingGVR, istioCSRObject("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "", mapped, nil),
		map[string]any{"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": clusterRole}, "subjects": subject},
		objString(nestedValue(obj.Object, "status", "clusterRoleBinding")))
	if err != nil {
		return fromClientError(err, "failed to create clusterrolebinding")
	}
	for _, name := range []string{istioCSRAgentName, istioCSRAgentName + "-leases"} {
		role := istioCSRObject("rbac.authorization.k8s.io/v1", "Role", istioNS, name, mapped, nil)
		role.Object["rules"] = []any{map[string]any{"apiGroups": []any{"cert-manager.io"}, "resources": []any{"certificaterequests"}, "verbs": []any{"create", "get"}}}
		if err := s.ensure(ctx, roleGVR, role); err != nil {
			return fromClientError(err, "failed to create role %s/%s", istioNS, name)
		}
		rb := istioCSRObject("rbac.authorization.k8s.io/v1", "RoleBinding", istioNS, name, mapped, nil)
		rb.Object["roleRef"] = map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name}
		rb.Object["subjects"] = subject
		if err := s.ensure(ctx, roleBindingGVR, rb); err != nil {
			return fromClientError(err, "failed to create rolebinding %s/%s", istioNS, name)
		}
	}
	s.setStatusField(ctx, obj, "clusterRole", clusterRole)
	s.setStatusField(ctx, obj, "clusterRoleBinding", binding)

	// certificates.go: istiod's Certificate, issuerRef copied verbatim;
	// cert-manager's webhook refuses it with 403 Forbidden, irrecoverable.
	certSpec := istiodCertificateSpec(cfg, istioNS)
	if denial := certManagerWebhookDenial(certSpec); denial != "" {
		return irrecoverable("failed to create %s/%s certificate resource: admission webhook \"webhook.cert-manager.io\" denied the request: %s",
			istioNS, istiodCertificateName, denial)
	}
	if err := s.ensure(ctx, CertManagerCertificateGVR, istioCSRObject("cert-manager.io/v1", "Certificate", istioNS, istiodCertificateName, mapped, certSpec)); err != nil {
		return fromClientError(err, "failed to create %s/%s certificate resource", istioNS, istiodCertificateName)
	}

	// deployments.go getDeploymentObject: the issuer checks and the CA copy.
	caPEM, err := s.istioCSRCA(ctx, obj, cfg, istioNS)
	if err != nil {
		return fmt.Errorf("failed to generate deployment resource for creation in %s: %w", ns, err)
	}
	caCopy := istioCSRObject("v1", "ConfigMap", ns, istioCSRCACopyName, labels, nil)
	caCopy.Object["data"] = map[string]any{istioCSRCACopyKey: caPEM}
	if err := s.ensure(ctx, configMapGVR, caCopy); err != nil {
		return fromClientError(err, "failed to create CA ConfigMap %s/%s", ns, istioCSRCACopyName)
	}
	podLabels := map[string]any{}
	for k, v := range labels {
		podLabels[k] = v
	}
	dep := istioCSRObject("apps/v1", "Deployment", ns, istioCSRAgentName, labels, map[string]any{
		"replicas": int64(1),
		"selector": map[string]any{"matchLabels": map[string]any{"app": istioCSRAgentName}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": podLabels},
			"spec": map[string]any{
				"serviceAccountName": istioCSRAgentName,
				"containers": []any{map[string]any{
					"name": istioCSRAgentName, "image": istioCSRStandInImage, "args": istioCSRArgs(cfg, istioNS),
				}},
			},
		},
	})
	if err := s.ensure(ctx, deploymentGVR, dep); err != nil {
		return fromClientError(err, "failed to create deployment %s/%s", ns, istioCSRAgentName)
	}
	s.setStatusField(ctx, obj, "istioCSRImage", istioCSRStandInImage)

	// install_istiocsr.go: the processed annotation after the first success.
	if obj.GetAnnotations()[IstioCSRProcessedAnnotation] != "true" {
		fresh, err := s.istioCSRs().Namespace(ns).Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return fromClientError(err, "failed to fetch istiocsr")
		}
		annotations := fresh.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[IstioCSRProcessedAnnotation] = "true"
		fresh.SetAnnotations(annotations)
		if err := s.updateIstioCSR(ctx, fresh); err != nil {
			return fromClientError(err, "failed to update processed annotation")
		}
	}
	return nil
}

// istioCSRCA follows deployments.go: getIssuer (an Issuer in
// istio.namespace or a ClusterIssuer; not found is retried),
// assertIssuerRefExists (ACME is irrecoverable), then the CA:
// handleUserProvidedCA when istioCACertificate is set (irrecoverable
// failures), else createCAConfigMapFromIssuerSecret for a CA issuer (its
// secret read in istio.namespace, retried), else
// createCAConfigMapFromIstiodCertificate (istiod-tls, retried).
func (s *istioCSRStandIn) istioCSRCA(ctx context.Context, obj *unstructured.Unstructured, cfg map[string]any, istioNS string) (string, error) {
	name, _, _ := unstructured.NestedString(cfg, "certManager", "issuerRef", "name")
	kind, _, _ := unstructured.NestedString(cfg, "certManager", "issuerRef", "kind")
	var issuer *unstructured.Unstructured
	var err error
	if strings.EqualFold(kind, "ClusterIssuer") {
		issuer, err = s.dyn.Resource(certManagerClusterIssuerGVR).Get(ctx, name, metav1.GetOptions{})
	} else {
		issuer, err = s.dyn.Resource(certManagerIssuerGVR).Namespace(istioNS).Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		return "", fmt.Errorf("failed to verify issuer in %s/%s: %w", obj.GetNamespace(), obj.GetName(), fromClientError(err, "failed to fetch issuer"))
	}
	if _, acme, _ := unstructured.NestedMap(issuer.Object, "spec", "acme"); acme {
		return "", fmt.Errorf("failed to verify issuer in %s/%s: %w", obj.GetNamespace(), obj.GetName(),
			irrecoverable("spec.istioCSRConfig.certManager.issuerRef uses unsupported ACME issuer: invalid issuerRef config"))
	}
	if ref, found, _ := unstructured.NestedMap(cfg, "certManager", "istioCACertificate"); found {
		cmNS, cmName, key := objString(ref["namespace"]), objString(ref["name"]), objString(ref["key"])
		if cmNS == "" {
			cmNS = obj.GetNamespace()
		}
		cm, err := s.dyn.Resource(configMapGVR).Namespace(cmNS).Get(ctx, cmName, metav1.GetOptions{})
		if err != nil {
			return "", irrecoverable("failed to fetch CA certificate ConfigMap %s/%s: %v", cmNS, cmName, err)
		}
		text, ok, _ := unstructured.NestedString(cm.Object, "data", key)
		if !ok {
			return "", irrecoverable("invalid CA certificate ConfigMap %s/%s: key %q not found in ConfigMap %s/%s", cmNS, cmName, key, cmNS, cmName)
		}
		if !validCAPEM(text) {
			return "", irrecoverable("invalid PEM data in CA certificate ConfigMap %s/%s key %q", cmNS, cmName, key)
		}
		return text, nil
	}
	secretName, _, _ := unstructured.NestedString(issuer.Object, "spec", "ca", "secretName")
	if secretName == "" {
		secretName = istiodSecretName
	}
	secret, err := s.dyn.Resource(secretGVR).Namespace(istioNS).Get(ctx, secretName, metav1.GetOptions{})
	if err != nil {
		return "", fromClientError(err, "failed to fetch secret in issuer")
	}
	encoded, _, _ := unstructured.NestedString(secret.Object, "data", "ca.crt")
	data, _ := base64.StdEncoding.DecodeString(encoded)
	if len(data) == 0 {
		return "", retry("failed to find CA certificate")
	}
	return string(data), nil
}

// validCAPEM is deployments.go validatePEMData on the first PEM block.
func validCAPEM(text string) bool {
	block, _ := pem.Decode([]byte(text))
	if block == nil || block.Type != "CERTIFICATE" {
		return false
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	return err == nil && cert.BasicConstraintsValid && cert.IsCA && cert.KeyUsage&x509.KeyUsageCertSign != 0
}

// istiodCertificateSpec is certificates.go updateCertificateParams.
func istiodCertificateSpec(cfg map[string]any, istioNS string) map[string]any {
	tls, _, _ := unstructured.NestedMap(cfg, "istiodTLSConfig")
	cn := objString(tls["commonName"])
	if cn == "" {
		cn = "istiod." + istioNS + ".svc"
	}
	var dnsNames []any
	if names, ok := tls["certificateDNSNames"].([]any); ok {
		dnsNames = append(dnsNames, names...)
	}
	revisions, _, _ := unstructured.NestedStringSlice(cfg, "istio", "revisions")
	for _, rev := range revisions {
		switch rev {
		case "":
		case "default":
			dnsNames = append(dnsNames, "istiod."+istioNS+".svc")
		default:
			dnsNames = append(dnsNames, "istiod-"+rev+"."+istioNS+".svc")
		}
	}
	trustDomain := objString(tls["trustDomain"])
	ref, _, _ := unstructured.NestedMap(cfg, "certManager", "issuerRef")
	spec := map[string]any{
		"commonName":  cn,
		"uris":        []any{fmt.Sprintf("spiffe://%s/ns/%s/sa/istiod-service-account", trustDomain, istioNS)},
		"duration":    goDuration(tls["certificateDuration"]),
		"renewBefore": goDuration(tls["certificateRenewBefore"]),
		"secretName":  istiodSecretName, "revisionHistoryLimit": int64(1),
		"privateKey": map[string]any{"algorithm": tls["privateKeyAlgorithm"], "size": tls["privateKeySize"], "rotationPolicy": "Always"},
		"issuerRef":  map[string]any{"name": ref["name"], "kind": ref["kind"], "group": ref["group"]},
	}
	if len(dnsNames) > 0 {
		spec["dnsNames"] = dnsNames
	}
	return spec
}

// goDuration is a duration as the operator's typed copy (*metav1.Duration)
// writes it: 1h -> 1h0m0s.
func goDuration(v any) any {
	if d, err := time.ParseDuration(objString(v)); err == nil {
		return d.String()
	}
	return v
}

// certManagerWebhookDenial is cert-manager's Certificate validation
// (internal/apis/certmanager/validation/certificate.go): validateIssuerRef
// and ValidateDuration. "" when the webhook admits spec.
func certManagerWebhookDenial(spec map[string]any) string {
	ref, _ := spec["issuerRef"].(map[string]any)
	group, kind := objString(ref["group"]), objString(ref["kind"])
	if (group == "" || group == "cert-manager.io") && kind != "Issuer" && kind != "ClusterIssuer" {
		return fmt.Sprintf("spec.issuerRef.kind: Invalid value: %q: must be one of Issuer or ClusterIssuer", kind)
	}
	duration, errD := time.ParseDuration(objString(spec["duration"]))
	renew, errR := time.ParseDuration(objString(spec["renewBefore"]))
	switch {
	case errD == nil && duration < time.Hour:
		return fmt.Sprintf("spec.duration: Invalid value: %q: certificate duration must be greater than 1h0m0s", duration)
	case errR == nil && renew < 5*time.Minute:
		return fmt.Sprintf("spec.renewBefore: Invalid value: %q: certificate renewBefore must be greater than 5m0s", renew)
	case errD == nil && errR == nil && renew >= duration:
		return fmt.Sprintf("spec.duration: Invalid value: %q: certificate duration %s must be greater than renewBefore %s", duration, duration, renew)
	}
	return ""
}

// istioCSRArgs is deployments.go updateArgList (durations in whole minutes).
func istioCSRArgs(cfg map[string]any, istioNS string) []any {
	minutes := func(field string) string {
		d, _ := time.ParseDuration(objString(nestedValue(cfg, "istiodTLSConfig", field)))
		return fmt.Sprintf("%.0fm", d.Minutes())
	}
	clusterID := objString(nestedValue(cfg, "server", "clusterID"))
	if clusterID == "" {
		clusterID = "Kubernetes"
	}
	return []any{
		"--log-level=" + objString(cfg["logLevel"]), "--log-format=" + objString(cfg["logFormat"]),
		"--issuer-name=" + objString(nestedValue(cfg, "certManager", "issuerRef", "name")),
		"--issuer-kind=" + objString(nestedValue(cfg, "certManager", "issuerRef", "kind")),
		"--issuer-group=" + objString(nestedValue(cfg, "certManager", "issuerRef", "group")),
		"--cluster-id=" + clusterID, "--trust-domain=" + objString(nestedValue(cfg, "istiodTLSConfig", "trustDomain")),
		"--istiod-cert-duration=" + minutes("certificateDuration"), "--istiod-cert-renew-before=" + minutes("certificateRenewBefore"),
		"--max-client-certificate-duration=" + minutes("maxCertificateDuration"),
		fmt.Sprintf("--serving-address=0.0.0.0:%d", 6443), "--certificate-namespace=" + istioNS,
		"--root-ca-file=/var/run/configmaps/istio-csr/" + istioCSRCACopyKey,
	}
}

// istioCSRResourceLabels is constants.go controllerDefaultResourceLabels
// over spec.controllerConfig.labels (the defaults win).
func istioCSRResourceLabels(obj *unstructured.Unstructured) map[string]string {
	labels := map[string]string{}
	user, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "controllerConfig", "labels")
	for k, v := range user {
		labels[k] = v
	}
	for k, v := range map[string]string{
		"app": istioCSRAgentName, "app.kubernetes.io/name": istioCSRAgentName, "app.kubernetes.io/instance": istioCSRAgentName,
		"app.kubernetes.io/version": "v0.14.2", "app.kubernetes.io/managed-by": "cert-manager-operator",
		"app.kubernetes.io/part-of": "cert-manager-operator",
	} {
		labels[k] = v
	}
	return labels
}

type istioCSRCond struct{ typ, status, reason, message string }

// setConditions is conditions.go SetCondition: a condition changes (message
// and lastTransitionTime included) only when its status or reason does; no
// observedGeneration; no write when nothing changes.
func (s *istioCSRStandIn) setConditions(ctx context.Context, obj *unstructured.Unstructured, conds []istioCSRCond) {
	fresh, err := s.istioCSRs().Namespace(obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return
	}
	items, _, _ := unstructured.NestedSlice(fresh.Object, "status", "conditions")
	changed := false
	for _, c := range conds {
		found := false
		for i, item := range items {
			old, ok := item.(map[string]any)
			if !ok || old["type"] != c.typ {
				continue
			}
			found = true
			if old["status"] != c.status || old["reason"] != c.reason {
				items[i] = newCondition(c)
				changed = true
			}
		}
		if !found {
			items = append(items, newCondition(c))
			changed = true
		}
	}
	if !changed {
		return
	}
	if err := unstructured.SetNestedSlice(fresh.Object, items, "status", "conditions"); err != nil {
		return
	}
	_, _ = s.istioCSRs().Namespace(fresh.GetNamespace()).UpdateStatus(ctx, fresh, metav1.UpdateOptions{FieldManager: istioCSRStandInManager})
}

func newCondition(c istioCSRCond) map[string]any {
	return map[string]any{
		"type": c.typ, "status": c.status, "reason": c.reason, "message": c.message,
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	}
}

// setStatusField writes one status field, as the operator does after each
// step (its own Status().Update); fields are never cleared.
func (s *istioCSRStandIn) setStatusField(ctx context.Context, obj *unstructured.Unstructured, field, value string) {
	fresh, err := s.istioCSRs().Namespace(obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return
	}
	if v, _, _ := unstructured.NestedString(fresh.Object, "status", field); v == value {
		return
	}
	if err := unstructured.SetNestedField(fresh.Object, value, "status", field); err != nil {
		return
	}
	_, _ = s.istioCSRs().Namespace(fresh.GetNamespace()).UpdateStatus(ctx, fresh, metav1.UpdateOptions{FieldManager: istioCSRStandInManager})
}

// updateIstioCSR is the operator's UpdateWithRetry of its typed copy: a
// full Update, whose spec is the Go types' serialisation.
// obj becomes the object the API server returned (its generation changes
// when the re-serialised spec differs from what was stored).
func (s *istioCSRStandIn) updateIstioCSR(ctx context.Context, obj *unstructured.Unstructured) error {
	reserialiseIstioCSRSpec(obj)
	out, err := s.istioCSRs().Namespace(obj.GetNamespace()).Update(ctx, obj, metav1.UpdateOptions{FieldManager: istioCSRStandInManager})
	if err == nil {
		obj.Object = out.Object
	}
	return err
}

// reserialiseIstioCSRSpec makes the spec what encoding the operator's Go
// types writes: the three *metav1.Duration fields in time.Duration.String()
// form (1h -> 1h0m0s), resources always present (a non-pointer
// ResourceRequirements: `{}` at least), quantities canonical (0.5 -> 500m).
func reserialiseIstioCSRSpec(obj *unstructured.Unstructured) {
	cfg, found, _ := unstructured.NestedMap(obj.Object, "spec", "istioCSRConfig")
	if !found {
		return
	}
	if tls, ok := cfg["istiodTLSConfig"].(map[string]any); ok {
		for _, field := range []string{"certificateDuration", "certificateRenewBefore", "maxCertificateDuration"} {
			if text, ok := tls[field].(string); ok {
				if d, err := time.ParseDuration(text); err == nil {
					tls[field] = d.String()
				}
			}
		}
	}
	res, ok := cfg["resources"].(map[string]any)
	if !ok {
		res = map[string]any{}
	}
	for _, group := range []string{"limits", "requests"} {
		if quantities, ok := res[group].(map[string]any); ok {
			for name, v := range quantities {
				if q, err := resource.ParseQuantity(objString(v)); err == nil {
					quantities[name] = q.String()
				}
			}
		}
	}
	cfg["resources"] = res
	_ = unstructured.SetNestedMap(obj.Object, cfg, "spec", "istioCSRConfig")
}

// ensure creates obj, or updates it when its labels or content differ
// (the operator's create-or-update with ObjectMetadataModified and the
// per-kind spec comparisons).
func (s *istioCSRStandIn) ensure(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
	ri := s.resource(gvr, obj.GetNamespace())
	live, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: istioCSRStandInManager})
		return err
	}
	if err != nil {
		return err
	}
	if !istioCSRContentDiffers(live, obj) {
		return nil
	}
	for k, v := range obj.Object {
		if k != "metadata" && k != "status" {
			live.Object[k] = v
		}
	}
	live.SetLabels(obj.GetLabels())
	_, err = ri.Update(ctx, live, metav1.UpdateOptions{FieldManager: istioCSRStandInManager})
	return err
}

// ensureGenerated is rbacs.go createOrApplyClusterRoles (and ...Bindings):
// the object named in status (statusName) is updated, or recreated under
// that name when gone; without a status name, the one object with the full
// label set is (more than one is irrecoverable), else a new one is created
// with generateName. It returns the name.
func (s *istioCSRStandIn) ensureGenerated(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured,
	content map[string]any, statusName string) (string, error) {
	for k, v := range content {
		obj.Object[k] = v
	}
	ri := s.resource(gvr, "")
	if statusName != "" {
		obj.SetName(statusName)
		err := s.ensure(ctx, gvr, obj)
		return statusName, err
	}
	var selector []string
	for k, v := range obj.GetLabels() {
		selector = append(selector, k+"="+v)
	}
	sort.Strings(selector)
	list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: strings.Join(selector, ",")})
	if err != nil {
		return "", err
	}
	switch len(list.Items) {
	case 0:
		obj.SetGenerateName(istioCSRAgentName + "-")
		created, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: istioCSRStandInManager})
		if err != nil {
			return "", err
		}
		return created.GetName(), nil
	case 1:
		obj.SetName(list.Items[0].GetName())
		err := s.ensure(ctx, gvr, obj)
		return obj.GetName(), err
	}
	return "", irrecoverable("more than 1 %s resources exist with matching labels", strings.TrimSuffix(gvr.Resource, "s"))
}

func (s *istioCSRStandIn) resource(gvr schema.GroupVersionResource, ns string) dynamic.ResourceInterface {
	if ns == "" {
		return s.dyn.Resource(gvr)
	}
	return s.dyn.Resource(gvr).Namespace(ns)
}

// istioCSRContentDiffers compares labels and every top-level field but
// metadata and status.
func istioCSRContentDiffers(live, want *unstructured.Unstructured) bool {
	if !reflect.DeepEqual(live.GetLabels(), want.GetLabels()) {
		return true
	}
	for k, v := range want.Object {
		if k == "metadata" || k == "status" || k == "apiVersion" || k == "kind" {
			continue
		}
		if !reflect.DeepEqual(istioCSRNormalizeJSON(live.Object[k]), istioCSRNormalizeJSON(v)) {
			if k == "spec" && live.Object[k] != nil && specContains(live.Object[k], v) {
				continue // the API server filled in defaults
			}
			return true
		}
	}
	return false
}

// specContains reports whether every field of want is in have with the same
// value (have may hold more: defaults the API server added).
func specContains(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if !specContains(h[k], v) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return false
		}
		for i := range w {
			if !specContains(h[i], w[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(istioCSRNormalizeJSON(have), istioCSRNormalizeJSON(want))
}

// standInForControllers plays the kube controllers and cert-manager for the
// operator's objects: the agent's Deployment rolls out (status for its
// current generation, one available replica) and istiod's Certificate is
// issued (Ready=True for its generation, the Secret istiod-tls with
// ca.crt), unless IstioCSRHoldAgent holds the IstioCSR's namespace back.
func (s *istioCSRStandIn) standInForControllers(ctx context.Context) {
	selector := metav1.ListOptions{LabelSelector: "app=" + istioCSRAgentName}
	if deps, err := s.dyn.Resource(deploymentGVR).List(ctx, selector); err == nil {
		for i := range deps.Items {
			dep := &deps.Items[i]
			if _, held := istioCSRHeld.Load(s.cluster + "/" + dep.GetNamespace()); held {
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
	certs, err := s.dyn.Resource(CertManagerCertificateGVR).List(ctx, selector)
	if err != nil {
		return
	}
	for i := range certs.Items {
		cert := &certs.Items[i]
		if _, held := istioCSRHeld.Load(s.cluster + "/" + cert.GetLabels()[IstioCSRNamespaceLabel]); held {
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
		_, _ = s.dyn.Resource(CertManagerCertificateGVR).Namespace(cert.GetNamespace()).UpdateStatus(ctx, cert, metav1.UpdateOptions{FieldManager: "cert-manager-standin"})
	}
}

func istioCSRObject(apiVersion, kind, ns, name string, labels map[string]string, spec map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	obj.SetNamespace(ns)
	obj.SetName(name)
	obj.SetLabels(labels)
	if spec != nil {
		obj.Object["spec"] = spec
	}
	return obj
}

// installCertManagerCRDs installs minimal cert-manager Issuer, ClusterIssuer
// and Certificate CRDs (the Certificate with a status subresource, as
// cert-manager's) and waits until their resources are served.
func installCertManagerCRDs(dyn dynamic.Interface) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range []struct {
		gvr          schema.GroupVersionResource
		kind, scope  string
		statusSubres bool
	}{
		{certManagerIssuerGVR, "Issuer", "Namespaced", false},
		{certManagerClusterIssuerGVR, "ClusterIssuer", "Cluster", false},
		{CertManagerCertificateGVR, "Certificate", "Namespaced", true},
	} {
		version := map[string]any{
			"name": c.gvr.Version, "served": true, "storage": true,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{
				"type": "object", "x-kubernetes-preserve-unknown-fields": true,
			}},
		}
		if c.statusSubres {
			version["subresources"] = map[string]any{"status": map[string]any{}}
		}
		crd := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": c.gvr.Resource + "." + c.gvr.Group},
			"spec": map[string]any{
				"group": c.gvr.Group, "scope": c.scope,
				"names":    map[string]any{"kind": c.kind, "plural": c.gvr.Resource, "singular": strings.ToLower(c.kind), "listKind": c.kind + "List"},
				"versions": []any{version},
			},
		}}
		if _, err := dyn.Resource(istioCSRCRDGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		for {
			_, err := dyn.Resource(c.gvr).List(ctx, metav1.ListOptions{})
			if err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s not served: %w", c.gvr.Resource, err)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

func objString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	default:
		return fmt.Sprint(x)
	}
}

func nestedValue(m map[string]any, fields ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(m, fields...)
	return v
}

func containsString(items []string, s string) bool {
	for _, item := range items {
		if item == s {
			return true
		}
	}
	return false
}

func removeString(items []string, s string) []string {
	out := make([]string, 0, len(items))
	for _, item := range items {
		if item != s {
			out = append(out, item)
		}
	}
	return out
}

// istioCSRNormalizeJSON makes values read from the API comparable with values built
// here (int vs int64, []any of maps).
func istioCSRNormalizeJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = istioCSRNormalizeJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = istioCSRNormalizeJSON(e)
		}
		return out
	case int:
		return int64(x)
	case float64:
		return int64(x)
	default:
		return v
	}
}
