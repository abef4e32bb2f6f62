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
	"math/big"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// Fixtures: what a test puts on a lab cluster before the provider acts on it
// (cert-manager issuers, namespaces, ConfigMaps, Secrets, a throwaway
// certificate). They are plain API writes, not any operator's doing.

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
	var ri dynamic.ResourceInterface = Dynamic(t, cluster).Resource(kube.CertManagerClusterIssuer.GVR())
	if namespace != "" {
		kind, ri = "Issuer", Dynamic(t, cluster).Resource(kube.CertManagerIssuer.GVR()).Namespace(namespace)
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
	var ri dynamic.ResourceInterface = Dynamic(t, cluster).Resource(kube.CertManagerClusterIssuer.GVR())
	if namespace != "" {
		ri = Dynamic(t, cluster).Resource(kube.CertManagerIssuer.GVR()).Namespace(namespace)
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
	if err := Dynamic(t, cluster).Resource(kube.ConfigMap.GVR()).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("acctest: %s: delete ConfigMap %s/%s: %v", cluster, ns, name, err)
	}
}

// EnsureNamespace creates namespace ns on cluster unless it exists.
func EnsureNamespace(t *testing.T, cluster, ns string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns},
	}}
	_, err := Dynamic(t, cluster).Resource(kube.Namespace.GVR()).Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("acctest: %s: create namespace %s: %v", cluster, ns, err)
	}
}

// UniqueNamespace creates a namespace on cluster whose name starts with
// prefix and is unique to the test, and returns its name. Namespaces are
// never deleted on these API servers, so the names never repeat; every test
// package that needs a namespace of its own uses this one.
func UniqueNamespace(t *testing.T, cluster, prefix string) string {
	t.Helper()
	name := UniqueName(prefix)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name},
	}}
	if _, err := Dynamic(t, cluster).Resource(kube.Namespace.GVR()).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("%s: create namespace %s: %v", cluster, name, err)
	}
	return name
}

// CreateConfigMap creates a ConfigMap with data in ns on cluster.
func CreateConfigMap(t *testing.T, cluster, ns, name string, data map[string]any) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": ns}, "data": data,
	}}
	if _, err := Dynamic(t, cluster).Resource(kube.ConfigMap.GVR()).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
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
	if _, err := Dynamic(t, cluster).Resource(kube.Secret.GVR()).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
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
