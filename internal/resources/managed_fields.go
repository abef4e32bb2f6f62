package resources

import (
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// Server-side apply records who owns which field in managedFields; the
// resources read it to tell fields they wrote from fields another tool (or
// API server defaulting) set, which is what lets an adopted object plan
// nothing. Ownership, not values: a field another manager changed since is
// theirs.

// fieldsOwned reports whether an entry of entries that matches holds any of
// the fields at paths; entries without a field set (FieldsV1), or whose set
// does not decode, hold none.
func fieldsOwned(entries []metav1.ManagedFieldsEntry, matches func(metav1.ManagedFieldsEntry) bool, paths ...[]string) bool {
	for _, entry := range entries {
		if entry.FieldsV1 == nil || !matches(entry) {
			continue
		}
		for _, p := range paths {
			if holdsField(entry.FieldsV1.Raw, p...) {
				return true
			}
		}
	}
	return false
}

// holdsField reports whether a field set holds the field at fieldPath
// (object keys from the root, as in ["spec", "className"]). The set is read
// in place (kube.FieldSetHolds): decoded into maps, it was most of what a
// refresh allocated; decoded only when it spells a key the way the API
// server does not.
func holdsField(fieldsV1 []byte, fieldPath ...string) bool {
	if holds, ok := kube.FieldSetHolds(fieldsV1, fieldPath...); ok {
		return holds
	}
	var set map[string]any
	if json.Unmarshal(fieldsV1, &set) != nil {
		return false
	}
	node := any(set)
	for _, name := range fieldPath {
		m, _ := node.(map[string]any)
		node = m["f:"+name]
	}
	return node != nil
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
