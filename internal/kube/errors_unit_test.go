package kube

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
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
		{"conflict", op("patch", conflict), "Field Manager Conflict", []string{`"drift-editor" owns .spec.bundleEndpointURL`, "force_conflicts"}},
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

// TestClassify pins which answers are retried. Only throttling, server
// errors that are not schema errors, and lost connections are; everything
// that says something about the request itself fails at once.
func TestClassify(t *testing.T) {
	gr := schema.GroupResource{Group: "operator.openshift.io", Resource: "spireservers"}
	schemaErr := statusErr(500, "", "failed to create typed patch object (/cluster; operator.openshift.io/v1alpha1, "+
		"Kind=SpireServer): .spec.federation.bundleEndpoint.port: field not declared in schema", nil)
	wrongType := statusErr(500, "", "failed to create typed patch object (/x; spire.spiffe.io/v1alpha1, "+
		"Kind=ClusterFederatedTrustDomain): .spec.bundleEndpointURL: expected string, got &value.valueUnstructured{Value:1}", nil)
	typeGone := statusErr(404, metav1.StatusReasonNotFound, "the server could not find the requested resource", &metav1.StatusDetails{})
	timeout := &url.Error{Op: "Get", URL: "https://127.0.0.1:1", Err: &net.OpError{Op: "dial", Err: timeoutErr{}}}

	for _, tc := range []struct {
		name string
		err  error
		want errClass
	}{
		{"429", apierrors.NewTooManyRequests("slow down", 1), retryable},
		{"503", apierrors.NewServiceUnavailable("unavailable"), retryable},
		{"500 internal", apierrors.NewInternalError(errors.New("etcd leader changed")), retryable},
		{"502 from a proxy", statusErr(502, "", "bad gateway", nil), retryable},
		{"504", apierrors.NewTimeoutError("slow", 1), retryable},
		{"refused", &url.Error{Op: "Get", URL: "https://127.0.0.1:1", Err: syscall.ECONNREFUSED}, retryable},
		{"reset", fmt.Errorf("wrapped: %w", syscall.ECONNRESET), retryable},
		{"EOF", &url.Error{Op: "Patch", URL: "https://127.0.0.1:1", Err: io.EOF}, retryable},
		{"dial timeout", timeout, retryable},

		{"schema: unknown field", schemaErr, permanent},
		{"schema: wrong type", wrongType, permanent},
		{"422", statusErr(422, metav1.StatusReasonInvalid, "invalid", nil), permanent},
		{"400", apierrors.NewBadRequest("bad"), permanent},
		{"403", apierrors.NewForbidden(gr, "cluster", errors.New("no")), permanent},
		{"401", apierrors.NewUnauthorized("expired"), permanent},
		{"409", apierrors.NewConflict(gr, "cluster", errors.New("conflict")), permanent},
		{"404 object", apierrors.NewNotFound(gr, "cluster"), permanent},
		{"unknown CA", &url.Error{Op: "Get", URL: "https://127.0.0.1:1", Err: x509.UnknownAuthorityError{}}, permanent},
		{"no such host", &url.Error{Op: "Get", URL: "https://nowhere.invalid", Err: &net.DNSError{Err: "no such host", Name: "nowhere.invalid", IsNotFound: true}}, permanent},
		{"interrupted", fmt.Errorf("get: %w", context.Canceled), permanent},

		{"404 type", typeGone, typeMissing},
	} {
		if got := classify(tc.err); got != tc.want {
			t.Errorf("%s: classify(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
	if !IsRejected(schemaErr) || !IsRejected(wrongType) || IsRejected(apierrors.NewServiceUnavailable("x")) {
		t.Error("IsRejected must hold for schema errors and not for an unavailable server")
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// TestExplainNamesFieldObjectCluster: a permanent refusal is never reported
// as an outage, and it names the field, the object and the cluster.
func TestExplainNamesFieldObjectCluster(t *testing.T) {
	op := &OpError{Cluster: "east", Verb: "patch", Kind: SpireServer, Name: "cluster", Err: statusErr(500, "",
		"failed to create typed patch object (/cluster; operator.openshift.io/v1alpha1, Kind=SpireServer): errors:\n"+
			"  .spec.federation.bundleEndpoint.port: field not declared in schema\n"+
			"  .spec.federation.bundleEndpoint.address: field not declared in schema", nil)}
	summary, detail := explain(op, "update the SpireServer cluster")
	if summary != "Field Not in the Cluster's Schema" {
		t.Errorf("summary = %q", summary)
	}
	for _, want := range []string{`cluster "east"`, `SpireServer "cluster"`, "  - .spec.federation.bundleEndpoint.port: field not declared in schema",
		"  - .spec.federation.bundleEndpoint.address: field not declared in schema", "Retrying does not help"} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, detail)
		}
	}

	ns := &OpError{Cluster: "west", Verb: "patch", Kind: IstioCSR, Namespace: "cert-manager", Name: "default",
		Err: statusErr(422, metav1.StatusReasonInvalid, "invalid", &metav1.StatusDetails{Causes: []metav1.StatusCause{
			{Field: "spec.istioCSRConfig.server.port", Message: "Invalid value: 0: should be greater than or equal to 1"}}})}
	summary, detail = explain(ns, "update the IstioCSR")
	if summary != "Cluster Rejected the Object" || !strings.Contains(detail, `IstioCSR "cert-manager/default"`) ||
		!strings.Contains(detail, `cluster "west"`) || !strings.Contains(detail, "spec.istioCSRConfig.server.port") {
		t.Errorf("invalid: %q\n%s", summary, detail)
	}
}

func TestConflictWarning(t *testing.T) {
	err := &OpError{Cluster: "west", Verb: "patch", Kind: ClusterFederatedTrustDomain, Name: "peer", Err: statusErr(409, metav1.StatusReasonConflict,
		"Apply failed with 2 conflicts: conflicts with \"drift-editor\" using spire.spiffe.io/v1alpha1:\n- .spec.bundleEndpointURL\n- .spec.className",
		&metav1.StatusDetails{Causes: []metav1.StatusCause{
			{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "drift-editor" using spire.spiffe.io/v1alpha1`, Field: ".spec.className"},
			{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "drift-editor" using spire.spiffe.io/v1alpha1`, Field: ".spec.bundleEndpointURL"},
		}})}
	if !IsFieldConflict(err) || IsRejected(err) {
		t.Fatal("a 409 with field-manager causes is a conflict, not a rejection")
	}
	d := ConflictWarning(err)
	if d.Severity() != diag.SeverityWarning {
		t.Errorf("severity = %v, want warning", d.Severity())
	}
	for _, want := range []string{`ClusterFederatedTrustDomain "peer"`, `cluster "west"`,
		`manager "drift-editor" owns .spec.bundleEndpointURL, .spec.className`, "force_conflicts = true", "Field Manager Conflict"} {
		if !strings.Contains(d.Detail(), want) {
			t.Errorf("warning lacks %q:\n%s", want, d.Detail())
		}
	}
}
