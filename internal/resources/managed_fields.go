package resources

import (
	"encoding/json"
	"iter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Server-side apply records who owns which field in managedFields; the
// resources read it to tell fields they wrote from fields another tool (or
// API server defaulting) set, which is what lets an adopted object plan
// nothing. Ownership, not values: a field another manager changed since is
// theirs.

// managedFieldSets yields each managed-fields entry of obj with its decoded
// field set (FieldsV1); entries without one, or that do not decode, are
// skipped.
func managedFieldSets(obj *unstructured.Unstructured) iter.Seq2[metav1.ManagedFieldsEntry, map[string]any] {
	return func(yield func(metav1.ManagedFieldsEntry, map[string]any) bool) {
		for _, entry := range obj.GetManagedFields() {
			if entry.FieldsV1 == nil {
				continue
			}
			var set map[string]any
			if json.Unmarshal(entry.FieldsV1.Raw, &set) != nil {
				continue
			}
			if !yield(entry, set) {
				return
			}
		}
	}
}

// holdsField reports whether a decoded field set holds the field at
// fieldPath (object keys from the root, as in ["spec", "className"]).
func holdsField(set map[string]any, fieldPath ...string) bool {
	node := any(set)
	for _, name := range fieldPath {
		m, _ := node.(map[string]any)
		node = m["f:"+name]
	}
	return node != nil
}

// fieldsOwned reports whether an entry that matches holds any of the fields
// at paths.
func fieldsOwned(obj *unstructured.Unstructured, matches func(metav1.ManagedFieldsEntry) bool, paths ...[]string) bool {
	for entry, set := range managedFieldSets(obj) {
		if !matches(entry) {
			continue
		}
		for _, p := range paths {
			if holdsField(set, p...) {
				return true
			}
		}
	}
	return false
}

// appliedWithin reports whether manager applied obj less than d before now.
func appliedWithin(obj *unstructured.Unstructured, manager string, d time.Duration, now time.Time) bool {
	if obj == nil {
		return false
	}
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Time != nil && now.Sub(e.Time.Time) < d {
			return true
		}
	}
	return false
}
