package standin

import (
	"context"
	"fmt"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// The ZTWIM stand-in's federation Route (routes.go) and the minimal Route CRD
// it installs where the cluster serves no Routes.

// reconcileRoute is routes.go reconcileRoute: with managedRoute "true" the
// Route is created or brought up to date (never deleted, no owner
// reference); otherwise RouteAvailable=False says so on every reconcile.
// requeue is set when the Route could not be written.
func (s *ZTWIM) reconcileRoute(ctx context.Context, server *unstructured.Unstructured, fed map[string]any, trustDomain string,
	stored map[string]map[string]any, set ztwimConditions,
) (requeue bool) {
	if ztwimString(fed, "managedRoute") != "true" {
		set.add("RouteAvailable", "False", "FederationRouteDisabled", "Federation managed route disabled")
		return false
	}
	want := ztwimRoute(server, fed, trustDomain)
	routes := s.dyn.Resource(kube.Route.GVR()).Namespace(ZTWIMRouteNamespace)
	cur, err := routes.Get(ctx, ZTWIMRouteName, metav1.GetOptions{})
	// The operator's Route cache only holds Routes with its managed-by
	// label: one without it is "not found", and Create then fails.
	if err == nil && cur.GetLabels()[ZTWIMManagedByLabel] != ZTWIMManagedByValue {
		err = apierrors.NewNotFound(kube.Route.GVR().GroupResource(), ZTWIMRouteName)
	}
	switch {
	case apierrors.IsNotFound(err):
		if _, err := routes.Create(ctx, want, metav1.CreateOptions{FieldManager: ztwimStandInManager}); err != nil {
			set.add("RouteAvailable", "False", "FederationRouteCreationFailed", err.Error())
			return true
		}
		set.add("RouteAvailable", "True", "FederationRouteCreated", "Federation route created")
	case err != nil:
		set.add("RouteAvailable", "False", "FederationRouteRetrievalFailed", err.Error())
		return true
	case !reflect.DeepEqual(cur.Object["spec"], want.Object["spec"]) || !reflect.DeepEqual(cur.GetLabels(), want.GetLabels()):
		cur.Object["spec"] = want.Object["spec"]
		cur.SetLabels(want.GetLabels())
		if _, err := routes.Update(ctx, cur, metav1.UpdateOptions{FieldManager: ztwimStandInManager}); err != nil {
			set.add("RouteAvailable", "False", "FederationRouteUpdateFailed", err.Error())
			return true
		}
		set.add("RouteAvailable", "True", "FederationRouteUpdated", "Federation route updated")
	default:
		if c, ok := stored["RouteAvailable"]; !ok || c["status"] != "True" {
			set.add("RouteAvailable", "True", "RouteAvailable", "Federation route is ready")
		}
	}
	return false
}

// ztwimRoute is routes.go generateFederationRoute: host
// federation.<trust domain>, to the Service spire-server's port federation,
// passthrough for https_spiffe and ACME, reencrypt (with the external
// certificate, when named) for a serving certificate; the operator's labels
// over the user's spec.labels; no owner reference.
func ztwimRoute(server *unstructured.Unstructured, fed map[string]any, trustDomain string) *unstructured.Unstructured {
	labels := map[string]any{}
	if user, found, _ := unstructured.NestedMap(server.Object, "spec", "labels"); found {
		for k, v := range user {
			labels[k] = v
		}
	}
	for k, v := range map[string]string{
		"app.kubernetes.io/name":      "spire-server",
		"app.kubernetes.io/instance":  "cluster-zero-trust-workload-identity-manager",
		"app.kubernetes.io/part-of":   "zero-trust-workload-identity-manager",
		"app.kubernetes.io/component": "control-plane",
		ZTWIMManagedByLabel:           ZTWIMManagedByValue,
		"app.kubernetes.io/version":   "1.13.3",
	} {
		labels[k] = v
	}
	tls := map[string]any{"termination": "passthrough", "insecureEdgeTerminationPolicy": "Redirect"}
	profile, _, _ := unstructured.NestedString(fed, "bundleEndpoint", "profile")
	if _, hasCert, _ := unstructured.NestedMap(fed, "bundleEndpoint", "httpsWeb", "servingCert"); hasCert && profile == "https_web" {
		tls["termination"] = "reencrypt"
		if ref, _, _ := unstructured.NestedString(fed, "bundleEndpoint", "httpsWeb", "servingCert", "externalSecretRef"); ref != "" {
			tls["externalCertificate"] = map[string]any{"name": ref}
		}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kube.Route.APIVersion(), "kind": kube.Route.Kind,
		"metadata": map[string]any{"name": ZTWIMRouteName, "namespace": ZTWIMRouteNamespace, "labels": labels},
		"spec": map[string]any{
			"host":           "federation." + trustDomain,
			"to":             map[string]any{"kind": "Service", "name": "spire-server", "weight": int64(100)},
			"port":           map[string]any{"targetPort": "federation"},
			"tls":            tls,
			"wildcardPolicy": "None",
		},
	}}
}

// installRouteCRD installs a minimal OpenShift Route CRD (route.openshift.io/v1,
// schema preserved) unless Routes are served, and waits until they are.
func installRouteCRD(ctx context.Context, dyn dynamic.Interface) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	gvr := kube.Route.GVR()
	if _, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1}); err == nil {
		return nil
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": gvr.Resource + "." + gvr.Group},
		"spec": map[string]any{
			"group": gvr.Group, "scope": "Namespaced",
			"names": map[string]any{"kind": kube.Route.Kind, "plural": gvr.Resource, "singular": "route", "listKind": "RouteList"},
			"versions": []any{map[string]any{
				"name": gvr.Version, "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
	if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	for {
		_, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("routes not served: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
