package kube

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A write whose UID precondition fails is a 409 that says "uid mismatch";
// other conflicts, and other errors saying the same words, are not.
func TestIsUIDMismatch(t *testing.T) {
	gr := schema.GroupResource{Group: "kuma.io", Resource: "meshservices"}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{apierrors.NewConflict(gr, "cart", errors.New(`Precondition failed: UID in precondition: 1, UID in object meta: 2: uid mismatch`)), true},
		{apierrors.NewConflict(gr, "cart", errors.New("the object has been modified")), false},
		{errors.New("uid mismatch"), false},
		{nil, false},
	} {
		if got := IsUIDMismatch(tc.err); got != tc.want {
			t.Errorf("IsUIDMismatch(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
