package datasources

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/spirefacts"
)

func TestSpireServerDiagnostic(t *testing.T) {
	cases := map[string]struct {
		err                  error
		summary, detailHolds string
	}{
		"none found": {&spirefacts.NotFoundError{Cluster: "east", Install: spirefacts.InstallAuto},
			"SPIRE Installation Not Found", `Cluster "east" has neither a ZeroTrustWorkloadIdentityManager`},
		"chart only": {&spirefacts.NotFoundError{Cluster: "east", Install: spirefacts.InstallHelm},
			"SPIRE Installation Not Found", `Cluster "east" has no ConfigMap labelled app.kubernetes.io/managed-by=Helm`},
		"no trust domain": {&spirefacts.NoTrustDomainError{Cluster: "east"}, "Trust Domain Not Set", "ZeroTrustWorkloadIdentityManager"},
		"two releases": {&spirefacts.AmbiguousError{Cluster: "east", Servers: []string{"a/spire-server", "b/spire-server"}},
			"More Than One SPIRE Installation", "a/spire-server, b/spire-server"},
		"wrapped": {fmt.Errorf("x: %w", &spirefacts.NotFoundError{Cluster: "east", Install: spirefacts.InstallOperator}),
			"SPIRE Installation Not Found", "Zero Trust Workload Identity Manager operator"},
	}
	for name, tc := range cases {
		d := spireServerDiagnostic(tc.err, "east")
		if d.Summary() != tc.summary || !strings.Contains(d.Detail(), tc.detailHolds) {
			t.Errorf("%s: %q: %q; want %q holding %q", name, d.Summary(), d.Detail(), tc.summary, tc.detailHolds)
		}
	}
	if d := spireServerDiagnostic(errors.New("boom"), "east"); d.Summary() == "SPIRE Installation Not Found" {
		t.Errorf("an API error reads as not found: %q", d.Detail())
	}
}

// TestSpireServerRefusalIsAPermissionProblem: Detect's error when auto found
// none of the operator's objects and the chart's ConfigMaps may not be
// listed reads as a permission problem naming the verb, the resource, the
// namespace and the role of the RBAC manifests that grants it, never as a
// missing installation.
func TestSpireServerRefusalIsAPermissionProblem(t *testing.T) {
	refusal := &kube.OpError{Cluster: "west", Verb: "list", Kind: kube.ConfigMap, Namespace: "spire-server",
		Err: apierrors.NewForbidden(k8sschema.GroupResource{Resource: "configmaps"}, "", errors.New(
			`User "system:serviceaccount:terraform:zerotrust" cannot list resource "configmaps" in API group "" in the namespace "spire-server"`))}
	err := fmt.Errorf("cluster %q has none of the operator's objects, and looking for the chart's was refused: %w", "west", refusal)
	d := spireServerDiagnostic(err, "west")
	if d.Summary() != "Forbidden by the Cluster's RBAC" {
		t.Errorf("summary %q, want \"Forbidden by the Cluster's RBAC\": %s", d.Summary(), d.Detail())
	}
	for _, w := range []string{`may not "list" the resource "configmaps"`, `ClusterRole "zerotrust-spire", bound in namespace "spire-server"`,
		"examples/rbac/helm-chart.yaml", "none of the operator's objects"} {
		if !strings.Contains(d.Detail(), w) {
			t.Errorf("the diagnostic does not say %q:\n%s", w, d.Detail())
		}
	}
}

func TestSpireServerInstallAttribute(t *testing.T) {
	var resp datasource.SchemaResponse
	NewSpireServerDataSource().Schema(context.Background(), datasource.SchemaRequest{}, &resp)
	a, ok := resp.Schema.Attributes["install"].(schema.StringAttribute)
	if !ok || !a.Optional || a.Computed || len(a.Validators) == 0 {
		t.Fatalf("install = %+v, want Optional, not Computed (a read must keep what was configured), and validated", resp.Schema.Attributes["install"])
	}
	for _, v := range spirefacts.Installs {
		if !strings.Contains(a.MarkdownDescription, "`"+v+"`") {
			t.Errorf("install's description does not name %q", v)
		}
	}
}
