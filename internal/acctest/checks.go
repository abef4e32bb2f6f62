package acctest

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Checks that test packages share: the resources tests and the example tests
// ask the clusters the same questions, so the checks live here once.

// ClusterCheck runs a check against the cluster as a state check: the legacy
// Check field cannot address for_each instances, and a check that asks the
// API server or SPIRE rather than Terraform state needs no address at all.
type ClusterCheck resource.TestCheckFunc

// CheckState runs c, ignoring the state it is handed.
func (c ClusterCheck) CheckState(_ context.Context, _ statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	resp.Error = c(nil)
}

// CheckObjectFields compares fields of an object the cluster holds, read by
// get (ObjectGetter), with want: keys are dotted paths, and a nil value
// means "absent".
func CheckObjectFields(t *testing.T, get func() (*unstructured.Unstructured, error), want map[string]any) resource.TestCheckFunc {
	return func(*terraform.State) error {
		obj, err := get()
		if err != nil {
			return err
		}
		for field, w := range want {
			got, found, err := unstructured.NestedFieldNoCopy(obj.Object, strings.Split(field, ".")...)
			if err != nil {
				return fmt.Errorf("%s/%s %s: %v", obj.GetNamespace(), obj.GetName(), field, err)
			}
			switch {
			case w == nil && found:
				return fmt.Errorf("%s/%s: %s = %#v, want it absent", obj.GetNamespace(), obj.GetName(), field, got)
			case w != nil && !found:
				return fmt.Errorf("%s/%s: %s is absent, want %#v", obj.GetNamespace(), obj.GetName(), field, w)
			case w != nil && !reflect.DeepEqual(got, w):
				return fmt.Errorf("%s/%s: %s = %#v, want %#v", obj.GetNamespace(), obj.GetName(), field, got, w)
			}
		}
		return nil
	}
}

// StringChecks are exact checks of values, in order: a list of strings as
// knownvalue.ListExact expects it.
func StringChecks(values ...string) []knownvalue.Check {
	out := make([]knownvalue.Check, len(values))
	for i, v := range values {
		out[i] = knownvalue.StringExact(v)
	}
	return out
}
