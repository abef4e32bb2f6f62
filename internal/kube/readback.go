package kube

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A write whose connection broke after it was sent may have been carried
// out: the API server got it, and only its answer was lost. Before such a
// write is sent again (doWrite), the object is read back, and when it
// already is what the write makes of it, that object is the write's answer.
// The checks below say "already is", not "this write did it": an object
// another run made so is as good.

// readBack is doWrite's landed for a write of namespace/name of kind: it
// reads the object (one attempt) and, when is says it already holds the
// write, stores it in out. A missing object has not had the write.
func (c *Client) readBack(kind Kind, namespace, name string, out **unstructured.Unstructured,
	is func(*unstructured.Unstructured) bool) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		live, err := c.resource(kind, namespace).Get(ctx, name, metav1.GetOptions{})
		if isObjectNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if !is(live) {
			return false, nil
		}
		*out = live
		return true, nil
	}
}

// appliedBy reports whether live holds every value the server-side apply
// configuration applied sets, and manager owns, by apply, no field applied
// leaves out (such a field is released, and so removed, by the apply: still
// owned, the apply has not happened).
func appliedBy(live, applied *unstructured.Unstructured, manager string) bool {
	want := applied.DeepCopy().Object
	delete(want, "apiVersion")
	delete(want, "kind")
	if !contains(live.Object, want) {
		return false
	}
	owns := false
	for _, e := range live.GetManagedFields() {
		if e.Manager != manager || e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != "" {
			continue
		}
		owns = true
		var set map[string]any
		if e.FieldsV1 == nil || json.Unmarshal(e.FieldsV1.Raw, &set) != nil || !fieldsWithin(set, want) {
			return false
		}
	}
	return owns
}

// contains reports whether have holds want: every key of a map with a value
// that holds want's, lists of the same length item by item, equal scalars
// (numbers by value: a decoded 1 is int64, a built 1 may be float64).
func contains(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			hv, ok := h[k]
			if !ok || !contains(hv, v) {
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
			if !contains(h[i], w[i]) {
				return false
			}
		}
		return true
	}
	if hf, ok := number(have); ok {
		wf, ok := number(want)
		return ok && hf == wf
	}
	return reflect.DeepEqual(have, want)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	case int32:
		return float64(n), true
	}
	return 0, false
}

// fieldsWithin reports whether every field of a managedFields field set
// ("f:<name>" keys, nested) is a field of obj. Items of lists ("k:", "v:",
// "i:" keys) are not followed: their list is in obj, and contains compared it.
func fieldsWithin(set map[string]any, obj any) bool {
	m, _ := obj.(map[string]any)
	for k, sub := range set {
		name, ok := strings.CutPrefix(k, "f:")
		if !ok {
			continue
		}
		v, present := m[name]
		if !present {
			return false
		}
		if subSet, ok := sub.(map[string]any); ok {
			if _, isMap := v.(map[string]any); isMap && !fieldsWithin(subSet, v) {
				return false
			}
		}
	}
	return true
}

// mergePatched reports whether a JSON merge patch leaves obj as it is: its
// nulls are absent from obj, its objects hold as merge patches of obj's,
// its other values are obj's.
func mergePatched(obj map[string]any, patch []byte) bool {
	var p map[string]any
	if json.Unmarshal(patch, &p) != nil {
		return false
	}
	return mergeHolds(obj, p)
}

func mergeHolds(obj, patch map[string]any) bool {
	for k, pv := range patch {
		ov, present := obj[k]
		switch pv := pv.(type) {
		case nil:
			if present {
				return false
			}
		case map[string]any:
			om, _ := ov.(map[string]any)
			if !mergeHolds(om, pv) {
				return false
			}
		default:
			if !present || !contains(ov, pv) || !contains(pv, ov) {
				return false
			}
		}
	}
	return true
}
