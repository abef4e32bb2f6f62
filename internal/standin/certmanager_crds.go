package standin

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// cert-manager's CRDs, in the minimal form the IstioCSR stand-in needs (see
// istiocsr.go).

// installCertManagerCRDs installs minimal cert-manager Issuer, ClusterIssuer
// and Certificate CRDs (the Certificate with a status subresource, as
// cert-manager's) and waits until their resources are served.
func installCertManagerCRDs(ctx context.Context, dyn dynamic.Interface) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for _, c := range []struct {
		gvr          schema.GroupVersionResource
		kind, scope  string
		statusSubres bool
	}{
		{certManagerIssuerGVR, "Issuer", "Namespaced", false},
		{certManagerClusterIssuerGVR, "ClusterIssuer", "Cluster", false},
		{certManagerCertificateGVR, "Certificate", "Namespaced", true},
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
		if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
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
