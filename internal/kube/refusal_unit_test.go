package kube

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/httpstream"
)

// TestRefusedNamesWhatRBACChecked: the sentence takes the verb and resource
// from the authorizer's reason, which differs from the request's for a
// server-side apply that creates (PATCH checked as create) and names the
// subresource for exec.
func TestRefusedNamesWhatRBACChecked(t *testing.T) {
	createdByApply := apierrors.NewForbidden(schema.GroupResource{Group: "spire.spiffe.io", Resource: "clusterfederatedtrustdomains"}, "fresh",
		errors.New(`User "system:serviceaccount:terraform:zerotrust" cannot create resource "clusterfederatedtrustdomains" in API group "spire.spiffe.io" at the cluster scope`))
	exec := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "spire-server-0",
		errors.New(`User "u" cannot get resource "pods/exec" in API group "" in the namespace "spire"`))
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"apply that creates", &OpError{Cluster: "east", Verb: "patch", Kind: ClusterFederatedTrustDomain, Name: "fresh", Err: createdByApply},
			`the credentials used for cluster "east" may not "create" the resource "clusterfederatedtrustdomains.spire.spiffe.io" (object: ClusterFederatedTrustDomain "fresh")`},
		{"exec", &OpError{Cluster: "default", Verb: "create", Kind: podExec, Namespace: "spire", Name: "spire-server-0", Err: fmt.Errorf("exec: %w", exec)},
			`the credentials used for cluster "default" may not "get" the resource "pods/exec" (object: Pod "spire/spire-server-0")`},
		{"list", &OpError{Cluster: "west", Verb: "list", Kind: SpireServer, Err: apierrors.NewForbidden(schema.GroupResource{}, "", errors.New("no reason given"))},
			`the credentials used for cluster "west" may not "list" the resource "spireservers.operator.openshift.io" (object: SpireServer objects)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Refused(tc.err)
			if !ok || got != tc.want {
				t.Errorf("Refused = %q, %v\nwant    %q", got, ok, tc.want)
			}
			if _, detail := explain(tc.err, "act"); !strings.Contains(detail, tc.want) {
				t.Errorf("the Forbidden diagnostic does not say %q:\n%s", tc.want, detail)
			}
		})
	}
	if _, ok := Refused(errors.New("boom")); ok {
		t.Error("Refused is true for an error that is not a 403")
	}
	if _, ok := NotCheckedWarning(apierrors.NewNotFound(schema.GroupResource{}, "x"), "that x exists"); ok {
		t.Error("NotCheckedWarning warns for a 404")
	}
}

// TestForbiddenNamesTheGrantingRole: the Forbidden diagnostic names the
// ClusterRole of the RBAC manifests that grants what was refused, and where
// it is bound, for the namespace the refusal names (the authorizer's reason,
// or the call's) and for a cluster-wide request.
func TestForbiddenNamesTheGrantingRole(t *testing.T) {
	listCMs := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "",
		errors.New(`User "system:serviceaccount:terraform:zerotrust" cannot list resource "configmaps" in API group "" in the namespace "spire-server"`))
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"the chart's server ConfigMaps", &OpError{Cluster: "west", Verb: "list", Kind: ConfigMap, Namespace: "spire-server", Err: listCMs},
			`The provider's RBAC manifests grant it with the ClusterRole "zerotrust-spire", bound in namespace "spire-server" by a RoleBinding (examples/rbac/helm-chart.yaml).`},
		{"the chart's bundle, no reason given", &OpError{Cluster: "west", Verb: "get", Kind: ConfigMap, Namespace: "spire-system", Name: "spire-bundle",
			Err: apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "spire-bundle", errors.New("no reason given"))},
			`the ClusterRole "zerotrust-spire-bundle", bound in namespace "spire-system" by a RoleBinding (examples/rbac/helm-chart.yaml)`},
		{"cluster-wide", &OpError{Cluster: "east", Verb: "list", Kind: SpireServer, Err: apierrors.NewForbidden(schema.GroupResource{}, "", errors.New("no reason given"))},
			`the ClusterRole "zerotrust", bound cluster-wide by a ClusterRoleBinding (examples/rbac/operator.yaml, examples/rbac/helm-chart.yaml)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			summary, detail := explain(tc.err, "act")
			if summary != "Forbidden by the Cluster's RBAC" || !strings.Contains(detail, tc.want) {
				t.Errorf("%s:\n%s\nwant it to say %q", summary, detail, tc.want)
			}
		})
	}
}

// TestRefusedOnce: a 403 is remembered for the client's life and answered
// again without a request; other answers are asked again.
func TestRefusedOnce(t *testing.T) {
	c := &Client{}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New("no"))
	calls := 0
	call := func(err error) func() error {
		return func() error {
			calls++
			return err
		}
	}
	for range 3 {
		if err := c.refusedOnce("get pods ns/p", call(forbidden)); !apierrors.IsForbidden(err) {
			t.Fatalf("err = %v, want the 403", err)
		}
	}
	if calls != 1 {
		t.Errorf("a refused request was sent %d times, want 1", calls)
	}
	calls = 0
	for range 2 {
		_ = c.refusedOnce("get pods ns/q", call(errors.New("connection reset")))
	}
	if calls != 2 {
		t.Errorf("a request that failed otherwise was sent %d times, want 2 (only refusals are remembered)", calls)
	}
}

// TestRefusedUpgrade: a WebSocket upgrade the API server refused yields its
// answer (and no SPDY fallback); other upgrade failures do not.
func TestRefusedUpgrade(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New("no"))
	if got := refusedUpgrade(&httpstream.UpgradeFailureError{Cause: forbidden}); !apierrors.IsForbidden(got) {
		t.Errorf("refusedUpgrade(403) = %v, want the 403", got)
	}
	if got := refusedUpgrade(&httpstream.UpgradeFailureError{Cause: errors.New("bad handshake")}); got != nil {
		t.Errorf("refusedUpgrade(bad handshake) = %v, want nil (fall back to SPDY)", got)
	}
	if got := refusedUpgrade(forbidden); got != nil {
		t.Errorf("refusedUpgrade(not an upgrade failure) = %v, want nil", got)
	}
}
