package resources

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestAppliedWithin(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	obj := &unstructured.Unstructured{}
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "zerotrust", Operation: metav1.ManagedFieldsOperationApply, Time: &metav1.Time{Time: now.Add(-30 * time.Second)}},
		{Manager: "someone", Operation: metav1.ManagedFieldsOperationApply, Time: &metav1.Time{Time: now}},
	})
	if !appliedWithin(obj, "zerotrust", time.Minute, now) {
		t.Error("an apply 30 s ago is not within a minute")
	}
	if appliedWithin(obj, "zerotrust", 10*time.Second, now) {
		t.Error("an apply 30 s ago is within 10 s")
	}
	if appliedWithin(obj, "other", time.Hour, now) {
		t.Error("another manager's apply counted")
	}
	if appliedWithin(nil, "zerotrust", time.Hour, now) {
		t.Error("no object counted as applied")
	}
}
