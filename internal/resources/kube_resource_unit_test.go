package resources

import (
	"reflect"
	"testing"
)

// kubeTypeRequired are the hooks of a kubeType the skeleton calls without
// a default; every other hook may be left nil.
var kubeTypeRequired = []string{"typeInfo", "ref", "fromObject", "refresh"}

// TestKubeTypesAreComplete: every registered resource on the skeleton has
// a descriptor with the hooks the skeleton cannot do without, so no Read,
// Delete, import or list panics on a nil one.
func TestKubeTypesAreComplete(t *testing.T) {
	onSkeleton := 0
	for _, newResource := range All() {
		r := reflect.ValueOf(newResource())
		for r.Kind() == reflect.Pointer {
			r = r.Elem()
		}
		base := r.FieldByName("kubeResource")
		if !base.IsValid() {
			continue
		}
		onSkeleton++
		desc := base.FieldByName("kubeType")
		if desc.IsNil() {
			t.Errorf("%s has no descriptor (kubeType)", r.Type())
			continue
		}
		for _, name := range kubeTypeRequired {
			if desc.Elem().FieldByName(name).IsNil() {
				t.Errorf("%s's descriptor has no %s", r.Type(), name)
			}
		}
		if info := desc.Elem().FieldByName("typeInfo"); !info.IsNil() && info.Elem().FieldByName("kinds").Len() == 0 {
			t.Errorf("%s's descriptor names no kind", r.Type())
		}
	}
	if onSkeleton < 6 {
		t.Fatalf("found %d resources on the skeleton, want at least 6", onSkeleton)
	}
}
