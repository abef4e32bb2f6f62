package acctest

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CheckGone is a CheckDestroy (or step check) asking cluster's API server
// that none of the named objects of gvr exists in namespace ("" for a
// cluster-scoped kind): destroy must have deleted them, not only forgotten
// them.
func CheckGone(t *testing.T, cluster string, gvr schema.GroupVersionResource, namespace string, names ...string) resource.TestCheckFunc {
	t.Helper()
	return func(*terraform.State) error {
		ri := Dynamic(t, cluster).Resource(gvr)
		for _, name := range names {
			var err error
			if namespace == "" {
				_, err = ri.Get(context.Background(), name, metav1.GetOptions{})
			} else {
				_, err = ri.Namespace(namespace).Get(context.Background(), name, metav1.GetOptions{})
			}
			switch {
			case err == nil:
				return fmt.Errorf("%s: %s %s still exists after destroy", cluster, gvr.Resource, objectPath(namespace, name))
			case !apierrors.IsNotFound(err):
				return fmt.Errorf("%s: get %s %s: %w", cluster, gvr.Resource, objectPath(namespace, name), err)
			}
		}
		return nil
	}
}

func objectPath(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
