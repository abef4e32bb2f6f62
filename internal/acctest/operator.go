package acctest

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// OperatorManager is the field manager tests use for what an operator (the
// Zero Trust Workload Identity Manager's, a service mesh's) or its user
// would write.
const OperatorManager = harness.OperatorFieldManager

func dynamicFor(t *testing.T, c *harness.Cluster) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// ApplyAs writes obj to c by server-side apply as field manager `manager`,
// forcing conflicts, the way another tool or an operator would.
func ApplyAs(t *testing.T, c *harness.Cluster, kind kube.Kind, manager string, obj map[string]any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion(kind.APIVersion())
	u.SetKind(kind.Kind)
	return apply(t, dynamicFor(t, c).Resource(kind.GVR()), c.Name, kind.Kind, kind.Namespaced, manager, u)
}

// ApplyAsOperator writes obj, an object of gvr that names its own
// apiVersion, kind and (when namespaced) namespace, to the cluster named
// cluster by server-side apply as OperatorManager: what a mesh's operator
// or its user made before the provider came along. The resources tests and
// the example tests both start from such objects.
func ApplyAsOperator(t *testing.T, cluster string, gvr schema.GroupVersionResource, obj map[string]any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj}
	return apply(t, Dynamic(t, cluster).Resource(gvr), cluster, gvr.Resource, u.GetNamespace() != "", OperatorManager, u)
}

// apply server-side applies u through ri as manager, forcing conflicts;
// what names the kind in a failure.
func apply(t *testing.T, ri dynamic.NamespaceableResourceInterface, cluster, what string, namespaced bool, manager string, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	var out *unstructured.Unstructured
	var err error
	if namespaced {
		out, err = ri.Namespace(u.GetNamespace()).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: manager, Force: true})
	} else {
		out, err = ri.Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: manager, Force: true})
	}
	if err != nil {
		t.Fatalf("%s: apply %s %s as %q: %v", cluster, what, u.GetName(), manager, err)
	}
	return out
}

// ObjectGetter reads the object name of gvr (in namespace ns, "" for a
// cluster-scoped kind) from the cluster named cluster each time it is
// called: what CheckObjectFields compares, in the resources tests and the
// example tests alike.
func ObjectGetter(t *testing.T, cluster string, gvr schema.GroupVersionResource, ns, name string) func() (*unstructured.Unstructured, error) {
	return func() (*unstructured.Unstructured, error) {
		ri := Dynamic(t, cluster).Resource(gvr)
		if ns != "" {
			return ri.Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		}
		return ri.Get(context.Background(), name, metav1.GetOptions{})
	}
}

// GetSingleton reads the cluster-scoped object `cluster` of kind from c, or
// returns nil when it does not exist.
func GetSingleton(t *testing.T, c *harness.Cluster, kind kube.Kind) *unstructured.Unstructured {
	t.Helper()
	obj, err := dynamicFor(t, c).Resource(kind.GVR()).Get(context.Background(), "cluster", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("%s: get %s cluster: %v", c.Name, kind.Kind, err)
	}
	return obj
}

// SpireServerObject is a SpireServer `cluster` holding the fields the
// released CRD requires (which only the operator fills in), plus spec.
func SpireServerObject(spec map[string]any) map[string]any {
	full := harness.SpireServerRequiredSpec()
	for k, v := range spec {
		full[k] = v
	}
	return map[string]any{"metadata": map[string]any{"name": "cluster"}, "spec": full}
}

// ZTWIMObject is a ZeroTrustWorkloadIdentityManager `cluster`.
func ZTWIMObject(trustDomain, clusterName string) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"name": "cluster"},
		"spec":     map[string]any{"trustDomain": trustDomain, "clusterName": clusterName},
	}
}

// ResetSpireSingletons deletes the ZeroTrustWorkloadIdentityManager and
// SpireServer `cluster` from c and waits until they are gone, and deletes the
// operator's federation Route, so a test on an Exclusive cluster starts from
// an installation without them.
func ResetSpireSingletons(t *testing.T, c *harness.Cluster) {
	t.Helper()
	d := dynamicFor(t, c)
	ctx := context.Background()
	for _, kind := range []kube.Kind{kube.SpireServer, kube.ZeroTrustWorkloadIdentityManager} {
		ri := d.Resource(kind.GVR())
		if err := ri.Delete(ctx, "cluster", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("%s: delete %s cluster: %v", c.Name, kind.Kind, err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, err := ri.Get(ctx, "cluster", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %s cluster still exists 30s after delete (err %v)", c.Name, kind.Kind, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// The operator's federation Route outlives both (it has no owner and the
	// operator never deletes it), so a later test would find it: gone too.
	err := d.Resource(kube.Route.GVR()).Namespace(ZTWIMRouteNamespace).Delete(ctx, ZTWIMRouteName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("%s: delete Route %s/%s: %v", c.Name, ZTWIMRouteNamespace, ZTWIMRouteName, err)
	}
}
