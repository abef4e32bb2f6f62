package kube

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func statusErr(code int32, reason metav1.StatusReason, msg string, details *metav1.StatusDetails) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg, Details: details,
	}}
}

func TestNotFoundKinds(t *testing.T) {
	objectGone := apierrors.NewNotFound(schema.GroupResource{Group: "spire.spiffe.io", Resource: "clusterfederatedtrustdomains"}, "x")
	typeGone := statusErr(404, metav1.StatusReasonNotFound, "the server could not find the requested resource", &metav1.StatusDetails{})
	crd := &CRDNotInstalledError{Kind: ClusterFederatedTrustDomain, Err: typeGone}

	if !IsNotFound(objectGone) || IsNotFound(typeGone) || IsNotFound(crd) {
		t.Errorf("IsNotFound: object %v, type %v, crd %v; want true,false,false",
			IsNotFound(objectGone), IsNotFound(typeGone), IsNotFound(crd))
	}
	if !isTypeNotFound(typeGone) || isTypeNotFound(objectGone) {
		t.Error("isTypeNotFound must tell an unserved type from a missing object")
	}
	wrapped := &OpError{Cluster: "east", Verb: "get", Kind: ClusterFederatedTrustDomain, Err: crd}
	if !IsCRDNotInstalled(wrapped) {
		t.Error("IsCRDNotInstalled must see through OpError")
	}
}

func TestExplain(t *testing.T) {
	conflict := statusErr(409, metav1.StatusReasonConflict,
		`Apply failed with 1 conflict: conflict with "drift-editor" using spire.spiffe.io/v1alpha1: .spec.bundleEndpointURL`,
		&metav1.StatusDetails{Causes: []metav1.StatusCause{{
			Type:    metav1.CauseTypeFieldManagerConflict,
			Message: `conflict with "drift-editor" using spire.spiffe.io/v1alpha1`,
			Field:   ".spec.bundleEndpointURL",
		}}})
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "spire.spiffe.io", Resource: "clusterfederatedtrustdomains"}, "x",
		errors.New(`User "viewer" cannot patch resource`))
	invalid := statusErr(422, metav1.StatusReasonInvalid, "invalid", &metav1.StatusDetails{Causes: []metav1.StatusCause{
		{Field: "spec.federation.bundleEndpoint.profile", Message: "profile is immutable"},
	}})
	refused := &url.Error{Op: "Get", URL: "https://127.0.0.1:1", Err: syscall.ECONNREFUSED}
	op := func(verb string, err error) error {
		return &OpError{Cluster: "east", Verb: verb, Kind: ClusterFederatedTrustDomain, Name: "x", Err: err}
	}

	cases := []struct {
		name        string
		err         error
		wantSummary string
		wantDetail  []string
	}{
		{"crd", op("patch", &CRDNotInstalledError{Kind: ClusterFederatedTrustDomain}), "CustomResourceDefinition Not Installed",
			[]string{`"east"`, "clusterfederatedtrustdomains.spire.spiffe.io", "spire-controller-manager"}},
		{"forbidden", op("patch", forbidden), "Forbidden by the Cluster's RBAC",
			[]string{`"patch"`, `"clusterfederatedtrustdomains.spire.spiffe.io"`}},
		{"conflict", op("patch", conflict), "Field Manager Conflict", []string{`"drift-editor"`, "force_conflicts"}},
		{"invalid", op("patch", invalid), "Cluster Rejected the Object", []string{"spec.federation.bundleEndpoint.profile: profile is immutable"}},
		{"unreachable", op("get", refused), "Cluster Unavailable", []string{`"east"`}},
		{"unauthorized", op("get", apierrors.NewUnauthorized("token expired")), "Cluster Rejected the Credentials", []string{"exec plugin"}},
		{"other", op("get", errors.New("boom")), "Kubernetes API Error", []string{"boom"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			summary, detail := explain(tc.err, "create the thing")
			if summary != tc.wantSummary {
				t.Errorf("summary = %q, want %q", summary, tc.wantSummary)
			}
			for _, w := range append(tc.wantDetail, "create the thing") {
				if !strings.Contains(detail, w) {
					t.Errorf("detail lacks %q:\n%s", w, detail)
				}
			}
		})
	}
}

func TestTransient(t *testing.T) {
	for _, err := range []error{
		apierrors.NewTooManyRequests("slow down", 1),
		apierrors.NewServiceUnavailable("unavailable"),
		&url.Error{Op: "Get", URL: "https://127.0.0.1:1", Err: syscall.ECONNREFUSED},
		fmt.Errorf("wrapped: %w", syscall.ECONNRESET),
	} {
		if !isTransient(err) {
			t.Errorf("isTransient(%v) = false, want true", err)
		}
	}
	for _, err := range []error{
		apierrors.NewBadRequest("bad"),
		apierrors.NewForbidden(schema.GroupResource{}, "x", errors.New("no")),
		apierrors.NewConflict(schema.GroupResource{}, "x", errors.New("conflict")),
	} {
		if isTransient(err) {
			t.Errorf("isTransient(%v) = true, want false", err)
		}
	}
}
