package acctest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// This file is a TEST-ONLY stand-in for the cert-manager Operator for Red Hat
// OpenShift, whose istio-csr controller cannot run here (it needs cert-manager
// and real Deployments). Like the operator it works only through the API
// server: it watches every IstioCSR of one cluster and writes status the way
// the operator does — the gRPC endpoint `cert-manager-istio-csr.<namespace>.svc:<port>`,
// the agent's image, ServiceAccount, ClusterRole and ClusterRoleBinding, and
// the conditions Ready and Degraded for the object's current generation:
//
//   - the issuerRef names no existing cert-manager Issuer (in istio.namespace,
//     the Istio control plane's namespace, as the IstioCSR API says: "When
//     issuerRef.Kind is Issuer, it must exist in
//     .spec.istioCSRConfig.istio.namespace") or ClusterIssuer: Degraded=True,
//     Ready=False (the operator cannot configure the agent; an irrecoverable
//     error);
//   - the issuer exists but does not report Ready=True: Degraded=False,
//     Ready=False with reason InProgress (the operator keeps retrying);
//   - otherwise Ready=True, Degraded=False.
//
// cert-manager's Issuer and ClusterIssuer CRDs are installed (minimal, schema
// preserved) so tests can create issuers with CertManagerIssuer.

const (
	istioCSRStandInTick    = 200 * time.Millisecond
	istioCSRStandInManager = "cert-manager-operator-standin"
	istioCSRStandInImage   = "registry.example.test/cert-manager/istio-csr:v0.14.2"
	istioCSRAgentName      = "cert-manager-istio-csr"
)

var (
	istioCSRStandInMu      sync.Mutex
	istioCSRStandInRunning = map[string]bool{}

	certManagerIssuerGVR        = schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "issuers"}
	certManagerClusterIssuerGVR = schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "clusterissuers"}
	istioCSRCRDGVR              = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	istioCSRNamespaceGVR        = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// IstioCSRStandIn starts the stand-in cert-manager Operator on cluster (once
// per test binary and cluster; it stops when the tests are done) and
// installs the cert-manager issuer CRDs there.
func IstioCSRStandIn(t *testing.T, cluster string) {
	t.Helper()
	istioCSRStandInMu.Lock()
	defer istioCSRStandInMu.Unlock()
	if istioCSRStandInRunning[cluster] {
		return
	}
	dyn := Dynamic(t, cluster)
	if err := installCertManagerIssuerCRDs(dyn); err != nil {
		t.Fatalf("acctest: IstioCSR stand-in on %s: installing the cert-manager issuer CRDs: %v", cluster, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s := &istioCSRStandIn{dyn: dyn}
	go func() {
		defer close(done)
		for {
			s.reconcileAll(ctx)
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

// CertManagerIssuer creates a cert-manager Issuer in namespace (created when
// missing), or a ClusterIssuer when namespace is "", whose status reports
// Ready=True when ready is set. An IstioCSR uses an Issuer only from its
// istio.namespace. IstioCSRStandIn must have run on the cluster.
func CertManagerIssuer(t *testing.T, cluster, namespace, name string, ready bool) {
	t.Helper()
	if namespace != "" {
		ns := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": namespace},
		}}
		_, err := Dynamic(t, cluster).Resource(istioCSRNamespaceGVR).Create(context.Background(), ns, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("acctest: %s: create namespace %s: %v", cluster, namespace, err)
		}
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
		"spec":     map[string]any{"selfSigned": map[string]any{}},
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

type istioCSRStandIn struct {
	dyn dynamic.Interface
}

func (s *istioCSRStandIn) reconcileAll(ctx context.Context) {
	list, err := s.dyn.Resource(kube.IstioCSR.GVR()).List(ctx, metav1.ListOptions{})
	if err != nil {
		return // the API server may be busy; the next tick retries
	}
	for i := range list.Items {
		if obj := &list.Items[i]; obj.GetDeletionTimestamp() == nil {
			s.reconcile(ctx, obj)
		}
	}
}

func (s *istioCSRStandIn) reconcile(ctx context.Context, obj *unstructured.Unstructured) {
	ns := obj.GetNamespace()
	cfg, _, _ := unstructured.NestedMap(obj.Object, "spec", "istioCSRConfig")
	port, found, _ := unstructured.NestedInt64(cfg, "server", "port")
	if !found {
		port = 443
	}
	readyStatus, readyReason, readyMessage := "True", "Ready", "reconciliation successful"
	degradedStatus, degradedReason, degradedMessage := "False", "Ready", ""
	istioNS, _, _ := unstructured.NestedString(cfg, "istio", "namespace")
	switch issuerState, detail := s.issuerState(ctx, istioNS, cfg); issuerState {
	case istioCSRIssuerMissing:
		readyStatus, readyReason, readyMessage = "False", "Failed", "reconciliation failed: "+detail
		degradedStatus, degradedReason, degradedMessage = "True", "Failed", detail
	case istioCSRIssuerNotReady:
		readyStatus, readyReason, readyMessage = "False", "InProgress", detail
	}

	status := map[string]any{
		"istioCSRGRPCEndpoint": fmt.Sprintf("%s.%s.svc:%d", istioCSRAgentName, ns, port),
		"istioCSRImage":        istioCSRStandInImage,
		"serviceAccount":       istioCSRAgentName,
		"clusterRole":          istioCSRAgentName + "-" + istioCSRShortHash(ns),
		"clusterRoleBinding":   istioCSRAgentName + "-" + istioCSRShortHash(ns),
	}
	old, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	status["conditions"] = []any{
		istioCSRCondition(old, obj.GetGeneration(), "Ready", readyStatus, readyReason, readyMessage),
		istioCSRCondition(old, obj.GetGeneration(), "Degraded", degradedStatus, degradedReason, degradedMessage),
	}
	current, _, _ := unstructured.NestedMap(obj.Object, "status")
	if reflect.DeepEqual(istioCSRNormalizeJSON(current), istioCSRNormalizeJSON(status)) {
		return
	}
	obj.Object["status"] = status
	_, _ = s.dyn.Resource(kube.IstioCSR.GVR()).Namespace(ns).UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: istioCSRStandInManager})
}

type istioCSRIssuerState int

const (
	istioCSRIssuerReady istioCSRIssuerState = iota
	istioCSRIssuerNotReady
	istioCSRIssuerMissing
)

// issuerState looks the issuerRef up as the operator does: an Issuer in
// istioNS (the IstioCSR's istio.namespace), or a ClusterIssuer.
func (s *istioCSRStandIn) issuerState(ctx context.Context, istioNS string, cfg map[string]any) (istioCSRIssuerState, string) {
	name, _, _ := unstructured.NestedString(cfg, "certManager", "issuerRef", "name")
	kind, _, _ := unstructured.NestedString(cfg, "certManager", "issuerRef", "kind")
	var (
		issuer *unstructured.Unstructured
		err    error
	)
	if strings.EqualFold(kind, "ClusterIssuer") {
		issuer, err = s.dyn.Resource(certManagerClusterIssuerGVR).Get(ctx, name, metav1.GetOptions{})
	} else {
		issuer, err = s.dyn.Resource(certManagerIssuerGVR).Namespace(istioNS).Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		resource := "issuers.cert-manager.io"
		if strings.EqualFold(kind, "ClusterIssuer") {
			resource = "clusterissuers.cert-manager.io"
		}
		return istioCSRIssuerMissing, fmt.Sprintf("failed to fetch issuer: %s %q not found", resource, name)
	}
	conditions, _, _ := unstructured.NestedSlice(issuer.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" && m["status"] == "True" {
			return istioCSRIssuerReady, ""
		}
	}
	return istioCSRIssuerNotReady, fmt.Sprintf("waiting for %s %q to become Ready", kind, name)
}

// istioCSRCondition keeps lastTransitionTime while the status stays the same, as
// meta.SetStatusCondition does.
func istioCSRCondition(old []any, generation int64, conditionType, status, reason, message string) map[string]any {
	transition := time.Now().UTC().Format(time.RFC3339)
	for _, item := range old {
		if c, ok := item.(map[string]any); ok && c["type"] == conditionType && c["status"] == status {
			if t, ok := c["lastTransitionTime"].(string); ok {
				transition = t
			}
		}
	}
	return map[string]any{
		"type": conditionType, "status": status, "reason": reason, "message": message,
		"lastTransitionTime": transition, "observedGeneration": generation,
	}
}

// installCertManagerIssuerCRDs installs minimal cert-manager Issuer and ClusterIssuer
// CRDs and waits until their resources are served.
func installCertManagerIssuerCRDs(dyn dynamic.Interface) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, gvr := range []schema.GroupVersionResource{certManagerIssuerGVR, certManagerClusterIssuerGVR} {
		kind, scope := "Issuer", "Namespaced"
		if gvr == certManagerClusterIssuerGVR {
			kind, scope = "ClusterIssuer", "Cluster"
		}
		crd := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": gvr.Resource + "." + gvr.Group},
			"spec": map[string]any{
				"group": gvr.Group, "scope": scope,
				"names": map[string]any{"kind": kind, "plural": gvr.Resource, "singular": strings.ToLower(kind), "listKind": kind + "List"},
				"versions": []any{map[string]any{
					"name": gvr.Version, "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{
						"type": "object", "x-kubernetes-preserve-unknown-fields": true,
					}},
				}},
			},
		}}
		if _, err := dyn.Resource(istioCSRCRDGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		for {
			_, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
			if err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s not served: %w", gvr.Resource, err)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

func istioCSRShortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:5]
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
