package leastprivilege_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/rbac"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

var roleBindingGVR = clusterRoleGVR.GroupVersion().WithResource("rolebindings")

// TestAccLeastPrivilegeChart applies examples/rbac/helm-chart.yaml unchanged
// to a cluster whose SPIRE is laid out as the SPIFFE Helm chart's
// recommended layout does (server in spire-server, bundle in spire-system),
// then reads the install, its bundle ConfigMap and, through pod exec, the
// bundle SPIRE holds, with the token of the ServiceAccount the file creates
// and binds: no word of a missing permission. Then it removes each of the
// file's RoleBindings in turn, as a cluster set up by hand might lack them:
// the read fails as a permission problem ("Forbidden by the Cluster's RBAC")
// naming the verb, the resource, the namespace and the role of the file that
// grants it, never as a missing installation.
func TestAccLeastPrivilegeChart(t *testing.T) {
	ctx := context.Background()
	s := acctest.HelmSpire(t, "lpchart")
	c := s.Cluster
	start := time.Now()
	kubeconfig, err := c.ManifestKubeconfig(ctx, readFiles(t, rbac.HelmFile)...)
	if err != nil {
		t.Fatalf("applying %s as shipped: %v", rbac.HelmFile.Path, err)
	}
	t.Logf("%s applied unchanged to cluster %s (SPIRE in %s, bundle in %s) in %s", rbac.HelmFile.Path, c.Name,
		s.Namespace, s.BundleNamespace, time.Since(start).Round(time.Millisecond))
	token, err := harness.ServiceAccountToken(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{kubeconfig: kubeconfig, helm: true, reattach: acctest.ServeProvider(t)}
	dir := e.workdir(t, `
data "zerotrust_spire_server" "this" {}

data "zerotrust_trust_bundle" "this" {
  trust_domain = data.zerotrust_spire_server.this.trust_domain
  config_map   = { namespace = data.zerotrust_spire_server.this.bundle_namespace }
}

data "zerotrust_trust_bundle" "from_spire" {
  trust_domain = data.zerotrust_spire_server.this.trust_domain
  spire_server = {}
}

output "installed_by" {
  value = data.zerotrust_spire_server.this.installed_by
}

output "same_bundle" {
  value = data.zerotrust_trust_bundle.this.x509_fingerprints_sha256 == data.zerotrust_trust_bundle.from_spire.x509_fingerprints_sha256
}
`)
	out := e.mustTF(t, dir, "apply", "-auto-approve")
	expect(t, "apply with the chart's file", out, `installed_by = "helm"`, "same_bundle = true")

	admin, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		role, ns, verb, object string
	}{
		{rbac.Spire, s.Namespace, "list", "ConfigMap objects"},
		{rbac.SpireBundle, s.BundleNamespace, "get", fmt.Sprintf(`ConfigMap "%s/%s"`, s.BundleNamespace, s.BundleConfigMap)},
	} {
		t.Run("without RoleBinding "+tc.ns+"/"+tc.role, func(t *testing.T) {
			if err := admin.Resource(roleBindingGVR).Namespace(tc.ns).Delete(ctx, tc.role, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			access := harness.Access{Verb: tc.verb, Resource: "configmaps", Namespace: tc.ns}
			if err := c.WaitAccess(ctx, token, access, false); err != nil {
				t.Fatal(err)
			}
			out, code := e.tf(t, dir, "plan")
			if code == 0 {
				t.Fatalf("plan succeeded without the binding:\n%s", out)
			}
			expect(t, "plan without "+tc.role, out, "Forbidden by the Cluster's RBAC",
				fmt.Sprintf(`may not %q the resource "configmaps" (object: %s)`, tc.verb, tc.object),
				fmt.Sprintf(`the ClusterRole %q, bound in namespace %q by a RoleBinding (%s)`, tc.role, tc.ns, rbac.HelmFile.Path))
			if strings.Contains(out, "Installation Not Found") {
				t.Errorf("a refusal is reported as a missing installation:\n%s", out)
			}
			t.Logf("plan without the binding:\n%s", out)
			// The file as shipped puts the binding back.
			if _, err := c.ManifestKubeconfig(ctx, readFiles(t, rbac.HelmFile)...); err != nil {
				t.Fatal(err)
			}
			if err := c.WaitAccess(ctx, token, access, true); err != nil {
				t.Fatal(err)
			}
		})
	}
	e.mustTF(t, dir, "plan")
}
