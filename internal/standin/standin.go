package standin

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// What every stand-in shares: its reconcile loop and the objects an
// installed operator finds in place.

var (
	crdGVR       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	namespaceGVR = kube.Namespace.GVR()
	configMapGVR = kube.ConfigMap.GVR()
	secretGVR    = kube.Secret.GVR()
)

// run calls step every tick, in a goroutine of its own, until ctx ends or
// the returned stop is called; stop returns once the last step is over.
func run(ctx context.Context, tick time.Duration, step func(context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			step(ctx)
			select {
			case <-ctx.Done():
				return
			case <-time.After(tick):
			}
		}
	}()
	return func() { cancel(); <-done }
}

// ensureNamespace creates namespace ns unless it exists.
func ensureNamespace(ctx context.Context, dyn dynamic.Interface, ns string) error {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns},
	}}
	if _, err := dyn.Resource(namespaceGVR).Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	return nil
}
