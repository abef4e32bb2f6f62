package leastprivilege_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/rbac"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// dirs are the working directories the lifecycles left, with their objects
// in place.
type dirs struct {
	spire, mesh, csr, domain string
}

func key(role, groupResource, verb string) string { return role + " " + groupResource + " " + verb }

// ftdProbeConfig is a ClusterFederatedTrustDomain without SPIRE features,
// for the rules of its kind alone.
func ftdProbeConfig(name, url string) string {
	return fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "probe" {
  name                = %[1]q
  trust_domain        = "%[1]s.zt.test"
  bundle_endpoint_url = %[2]q
  bundle_endpoint_profile = {
    type = "https_web"
  }
}
`, name, url)
}

// csidProbeConfig is a ClusterSPIFFEID without federation, for the rules
// of its kind alone.
func csidProbeConfig(name, ttl string) string {
	return fmt.Sprintf(`
resource "zerotrust_cluster_spiffe_id" "probe" {
  name               = %q
  spiffe_id_template = "spiffe://{{ .TrustDomain }}/probe"
  ttl                = %q
}
`, name, ttl)
}

func dvProbeConfig(domain string) string {
	return fmt.Sprintf(`
resource "zerotrust_domain_verification" "probe" {
  domain = %q
}
`, domain)
}

// keepConfig saves dir's main.tf; the returned function puts it back.
func keepConfig(t *testing.T, dir string) func() {
	t.Helper()
	old, err := os.ReadFile(filepath.Join(dir, "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), old, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// listConfig is one list block of typ.
func listConfig(typ string) string {
	return fmt.Sprintf(`
list %q "all" {
  provider = zerotrust
}
`, typ)
}

// exercises returns one exercise per rule of the table.
func (e *env) exercises(t *testing.T, d dirs) []exercise {
	// plan plans dir, with config instead of its configuration when given
	// (put back afterwards).
	plan := func(dir string, config ...string) func(*testing.T, *session) {
		return func(t *testing.T, s *session) {
			if len(config) > 0 {
				defer keepConfig(t, dir)()
				e.write(t, dir, "main.tf", config[0])
			}
			s.tf(t, dir, "plan")
		}
	}
	// apply plans config in dir and, when the plan succeeds, applies that
	// plan (two commands, so the audit log tells them apart); dir's
	// configuration is put back afterwards.
	apply := func(dir, config string) func(*testing.T, *session) {
		return func(t *testing.T, s *session) {
			defer keepConfig(t, dir)()
			e.write(t, dir, "main.tf", config)
			if _, code := s.tf(t, dir, "plan", "-out=tfplan"); code == 0 {
				s.tf(t, dir, "apply", "tfplan")
			}
		}
	}
	destroy := func(dir string) func(*testing.T, *session) {
		return func(t *testing.T, s *session) { s.tf(t, dir, "destroy", "-auto-approve") }
	}
	query := func(typ string) func(*testing.T, *session) {
		return func(t *testing.T, s *session) {
			dir := e.workdir(t, "")
			e.write(t, dir, "list.tfquery.hcl", listConfig(typ))
			s.tf(t, dir, "query")
		}
	}

	// Objects for the rules of one kind alone, created with every rule.
	probe := e.workdir(t, ftdProbeConfig("probe", "https://bundles.probe.zt.test"))
	e.mustTF(t, probe, "apply", "-auto-approve")
	fresh := e.workdir(t, ftdProbeConfig("fresh", "https://bundles.fresh.zt.test"))
	dvProbe := e.workdir(t, dvProbeConfig("probe."+dvDomain))
	e.mustTF(t, dvProbe, "apply", "-auto-approve")
	dvFresh := e.workdir(t, dvProbeConfig("fresh."+dvDomain))
	csidProbe := e.workdir(t, csidProbeConfig("probe", "1h"))
	e.mustTF(t, csidProbe, "apply", "-auto-approve")
	csidFresh := e.workdir(t, csidProbeConfig("fresh", "1h"))
	t.Cleanup(func() {
		for _, dir := range []string{probe, dvProbe, csidProbe, csidFresh} {
			e.tf(t, dir, "destroy", "-auto-approve")
		}
	})

	// A Kuma MeshTrust this configuration alone manages: its destroy
	// deletes it.
	meshFreshConfig := fmt.Sprintf(`
resource "zerotrust_mesh_trust_domain" "fresh" {
  mesh         = { kind = "kuma", namespace = %q }
  trust_domain = "fresh-peer.zt.test"
  ca_bundles   = [%q]
}
`, kumaNS, caPEM(t, "fresh-peer.zt.test"))
	meshFresh := e.workdir(t, meshFreshConfig)
	// A SPIRE server laid out as the SPIFFE Helm chart does, beside the
	// operator's, read with install = "helm" (auto would take the operator's).
	chart := e.workdir(t, `
data "zerotrust_spire_server" "chart" {
  install   = "helm"
  namespace = "`+harness.DefaultSpireNamespace+`"
}
`)
	chartLayout := func(t *testing.T) {
		meta := map[string]any{
			"name": "spire-server", "namespace": harness.DefaultSpireNamespace,
			"labels": map[string]any{"app.kubernetes.io/managed-by": "Helm"},
		}
		acctest.ApplyAs(t, e.c, kube.ConfigMap, "helm", map[string]any{"metadata": meta, "data": map[string]any{
			"server.conf": `{"server": {"trust_domain": "chart.zt.test", "federation": {"bundle_endpoint": {"port": 8443}}}}`,
		}})
	}
	chartGone := func(t *testing.T) {
		err := acctest.Dynamic(t, clusterName).Resource(kube.ConfigMap.GVR()).Namespace(harness.DefaultSpireNamespace).
			Delete(context.Background(), "spire-server", metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	// An operator-made federation Route that managed_route = false deletes.
	staleRoute := func(t *testing.T) {
		acctest.ApplyAs(t, e.c, kube.Route, acctest.OperatorManager, map[string]any{
			"metadata": map[string]any{
				"name": "spire-server-federation", "namespace": harness.DefaultSpireNamespace,
				"labels": map[string]any{"app.kubernetes.io/managed-by": "zero-trust-workload-identity-manager"},
			},
			"spec": map[string]any{"host": "federation.rbac.zt.test", "to": map[string]any{"kind": "Service", "name": "spire-server"}},
		})
	}
	// The SPIRE lifecycle's objects as its configuration has them, for the
	// exercises after one that changed them.
	spireBack := func(t *testing.T) { e.mustTF(t, d.spire, "apply", "-auto-approve") }
	// The IstioCSR exercises that need it gone, or put it back.
	csrGone := func(t *testing.T) { e.mustTF(t, d.csr, "destroy", "-auto-approve") }
	csrBack := func(t *testing.T) {
		// What a refused destroy left behind would make the operator fail
		// (a new ClusterRole cannot replace the roleRef of the old
		// binding): an administrator removes it first.
		removeIstioCSROperands(t)
		e.mustTF(t, d.csr, "apply", "-auto-approve")
	}
	pems := e.meshPEMs(t)
	mesh := func(v meshVersions) string { return e.meshConfigOf(v, pems) }

	const (
		ftd    = "clusterfederatedtrustdomains.spire.spiffe.io"
		csid   = "clusterspiffeids.spire.spiffe.io"
		ss     = "spireservers.operator.openshift.io"
		dv     = "domainverifications.kuadrant.dev"
		csr    = "istiocsrs.operator.openshift.io"
		sail   = "istios.sailoperator.io"
		kyma   = "istios.operator.kyma-project.io"
		mtrust = "meshtrusts.kuma.io"
		msvc   = "meshservices.kuma.io"
		spNS   = harness.DefaultSpireNamespace
		cftdP  = `ClusterFederatedTrustDomain "probe"`
		pod    = `Pod "` + spNS + `/spire-server-0"`
		kumaMT = `MeshTrust "` + kumaNS + `/mesh-peer-zt-test"`
		agent  = `"` + csrNS + `/cert-manager-istio-csr"`
	)
	// operands are the IstioCSR destroy's rules: it lists, by label, what
	// the operator created and deletes each; a refusal leaves them behind
	// with a warning.
	operand := func(role, resource, verb, object, ns string) exercise {
		return exercise{rule: key(role, resource, verb), ns: ns, object: object, warns: true, run: destroy(d.csr), after: csrBack}
	}
	return []exercise{
		// ClusterFederatedTrustDomain
		{rule: key(rbac.Cluster, ftd, "get"), object: cftdP, run: plan(probe)},
		{rule: key(rbac.Cluster, ftd, "list"), object: "ClusterFederatedTrustDomain objects", run: apply(fresh, ftdProbeConfig("fresh", "https://bundles.fresh.zt.test"))},
		{rule: key(rbac.Cluster, ftd, "create"), object: `ClusterFederatedTrustDomain "fresh"`, run: apply(fresh, ftdProbeConfig("fresh", "https://bundles.fresh.zt.test"))},
		{rule: key(rbac.Cluster, ftd, "patch"), object: cftdP, run: apply(probe, ftdProbeConfig("probe", "https://bundles2.probe.zt.test"))},
		{rule: key(rbac.Cluster, ftd, "delete"), object: cftdP, run: destroy(probe)},
		// ClusterSPIFFEID, and what its wait lists
		{rule: key(rbac.Cluster, csid, "get"), object: `ClusterSPIFFEID "peer"`, run: plan(d.spire)},
		{rule: key(rbac.Cluster, csid, "list"), object: "ClusterSPIFFEID objects", run: query("zerotrust_cluster_spiffe_id")},
		{rule: key(rbac.Cluster, csid, "create"), object: `ClusterSPIFFEID "fresh"`, run: apply(csidFresh, csidProbeConfig("fresh", "1h"))},
		{rule: key(rbac.Cluster, csid, "patch"), object: `ClusterSPIFFEID "probe"`, run: apply(csidProbe, csidProbeConfig("probe", "2h"))},
		{rule: key(rbac.Cluster, csid, "delete"), object: `ClusterSPIFFEID "probe"`, run: destroy(csidProbe)},
		{rule: key(rbac.Cluster, "namespaces", "list"), object: "Namespace objects", run: apply(d.spire, e.spireConfig("", "2h")), after: spireBack},
		{rule: key(rbac.Cluster, "pods", "list"), object: "Pod objects", run: apply(d.spire, e.spireConfig("", "3h")), after: spireBack},
		// SpireServer, ZeroTrustWorkloadIdentityManager
		{rule: key(rbac.Cluster, ss, "get"), object: `SpireServer "cluster"`, run: plan(d.spire)},
		{rule: key(rbac.Cluster, ss, "list"), object: "SpireServer objects", run: query("zerotrust_spire_federation")},
		{rule: key(rbac.Cluster, ss, "patch"), object: `SpireServer "cluster"`, run: apply(d.spire, e.spireConfig(spireExtraPeer+spireExtraPeer2))},
		{rule: key(rbac.Cluster, "zerotrustworkloadidentitymanagers.operator.openshift.io", "get"), object: `ZeroTrustWorkloadIdentityManager "cluster"`, run: plan(d.spire)},
		// A SPIRE installed by the Helm chart (zerotrust_spire_server, install = "helm")
		{rule: key(rbac.Spire, "configmaps", "list"), ns: spNS, object: "ConfigMap objects", run: plan(chart)},
		{rule: key(rbac.Spire, "ingresses.networking.k8s.io", "get"), ns: spNS, object: `Ingress "` + spNS + `/spire-server-federation"`,
			before: chartLayout, after: chartGone, run: plan(chart)},
		// IstioCSR, cluster-wide
		{rule: key(rbac.IstioCSRCluster, csr, "list"), object: "IstioCSR objects", run: query("zerotrust_istio_csr")},
		// Meshes, cluster-wide
		{rule: key(rbac.Cluster, sail, "get"), object: `Istio "default"`, run: plan(d.mesh)},
		{rule: key(rbac.Cluster, sail, "list"), object: "Istio objects", run: query("zerotrust_mesh_trust_domain")},
		{rule: key(rbac.Cluster, sail, "patch"), object: `Istio "default"`, run: apply(d.mesh, mesh(meshVersions{3, 2, 2, 2}))},
		{rule: key(rbac.Cluster, kyma, "list"), object: "Istio objects", run: query("zerotrust_mesh_trust_domain")},
		{rule: key(rbac.Cluster, mtrust, "list"), object: "MeshTrust objects", run: query("zerotrust_mesh_trust_domain")},
		{rule: key(rbac.Cluster, msvc, "list"), object: "MeshService objects", run: query("zerotrust_mesh_service_identities")},
		// DomainVerification
		{rule: key(rbac.Cluster, dv, "get"), object: `DomainVerification "` + dvDomain + `"`, run: plan(d.domain)},
		{rule: key(rbac.Cluster, dv, "list"), object: "DomainVerification objects", run: query("zerotrust_domain_verification")},
		{rule: key(rbac.Cluster, dv, "create"), object: `DomainVerification "fresh.` + dvDomain + `"`, run: apply(dvFresh, dvProbeConfig("fresh."+dvDomain))},
		{rule: key(rbac.Cluster, dv, "patch"), object: `DomainVerification "fresh.` + dvDomain + `"`, run: apply(dvFresh, dvProbeConfig("fresh."+dvDomain))},
		{rule: key(rbac.Cluster, dv, "delete"), object: `DomainVerification "probe.` + dvDomain + `"`, run: destroy(dvProbe)},
		// cert-manager, read at plan: a replacement checks the issuer.
		{rule: key(rbac.IstioCSRCluster, "clusterissuers.cert-manager.io", "get"), object: `ClusterIssuer "` + csrOtherIssuer + `"`, warns: true, run: plan(d.csr, istioCSRConfig(6))},
		// SPIRE namespace
		{rule: key(rbac.Spire, "pods", "get"), ns: spNS, object: pod, run: plan(d.spire)},
		{rule: key(rbac.Spire, "pods/exec", "get"), ns: spNS, object: pod, run: plan(d.spire)},
		{rule: key(rbac.Spire, "pods/exec", "create"), ns: spNS, object: pod, run: plan(d.spire)},
		{rule: key(rbac.Spire, "configmaps", "get"), ns: spNS, object: `ConfigMap "` + spNS + `/spire-bundle"`, run: plan(d.spire)},
		{rule: key(rbac.Spire, "routes.route.openshift.io", "get"), ns: spNS, object: `Route "` + spNS + `/spire-server-federation"`, run: plan(d.spire)},
		{rule: key(rbac.Spire, "routes.route.openshift.io", "delete"), ns: spNS, object: `Route "` + spNS + `/spire-server-federation"`,
			before: staleRoute, after: func(t *testing.T) { deleteRoute(t, e) }, run: apply(d.spire, e.spireConfig(spireExtraPeer+spireExtraPeer2))},
		// IstioCSR namespaces
		{rule: key(rbac.IstioCSR, csr, "get"), ns: csrNS, object: `IstioCSR "` + csrNS + `/default"`, run: plan(d.csr)},
		{rule: key(rbac.IstioCSR, csr, "create"), ns: csrNS, object: `IstioCSR "` + csrNS + `/default"`, before: csrGone, after: csrBack, run: apply(d.csr, istioCSRConfig(3))},
		{rule: key(rbac.IstioCSR, csr, "patch"), ns: csrNS, object: `IstioCSR "` + csrNS + `/default"`, run: apply(d.csr, istioCSRConfig(5))},
		{rule: key(rbac.IstioCSR, csr, "delete"), ns: csrNS, object: `IstioCSR "` + csrNS + `/default"`, run: destroy(d.csr)},
		{rule: key(rbac.IstioCSR, "deployments.apps", "get"), ns: csrNS, object: "Deployment " + agent, run: apply(d.csr, istioCSRConfig(5)), after: csrBack},
		{rule: key(rbac.IstioCSR, "certificates.cert-manager.io", "get"), ns: istioNS, object: `Certificate "` + istioNS + `/istiod"`, run: apply(d.csr, istioCSRConfig(5)), after: csrBack},
		{rule: key(rbac.IstioCSR, "configmaps", "get"), ns: csrNS, object: `ConfigMap "` + csrNS + `/` + csrCAConfigMap + `"`, warns: true, run: plan(d.csr, istioCSRConfig(4))},
		{rule: key(rbac.IstioCSR, "issuers.cert-manager.io", "get"), ns: istioNS, object: `Issuer "` + istioNS + `/` + csrIssuer + `"`, warns: true, run: plan(d.csr, istioCSRConfig(1))},
		{rule: key(rbac.IstioCSR, "secrets", "get"), ns: istioNS, object: `Secret "` + istioNS + `/` + csrCASecret + `"`, warns: true, run: plan(d.csr, istioCSRConfig(1))},
		operand(rbac.IstioCSR, "deployments.apps", "list", "Deployment objects", csrNS),
		operand(rbac.IstioCSR, "deployments.apps", "delete", "Deployment "+agent, csrNS),
		operand(rbac.IstioCSR, "services", "list", "Service objects", csrNS),
		operand(rbac.IstioCSR, "services", "delete", `Service "`+csrNS+`/`, csrNS),
		operand(rbac.IstioCSR, "serviceaccounts", "list", "ServiceAccount objects", csrNS),
		operand(rbac.IstioCSR, "serviceaccounts", "delete", `ServiceAccount "`+csrNS+`/`, csrNS),
		operand(rbac.IstioCSR, "networkpolicies.networking.k8s.io", "list", "NetworkPolicy objects", csrNS),
		operand(rbac.IstioCSR, "networkpolicies.networking.k8s.io", "delete", `NetworkPolicy "`+csrNS+`/`, csrNS),
		operand(rbac.IstioCSR, "configmaps", "list", "ConfigMap objects", csrNS),
		operand(rbac.IstioCSR, "configmaps", "delete", `ConfigMap "`+csrNS+`/`, csrNS),
		operand(rbac.IstioCSR, "certificates.cert-manager.io", "list", "Certificate objects", istioNS),
		operand(rbac.IstioCSR, "certificates.cert-manager.io", "delete", `Certificate "`+istioNS+`/`, istioNS),
		operand(rbac.IstioCSR, "roles.rbac.authorization.k8s.io", "list", "Role objects", istioNS),
		operand(rbac.IstioCSR, "roles.rbac.authorization.k8s.io", "delete", `Role "`+istioNS+`/`, istioNS),
		operand(rbac.IstioCSR, "rolebindings.rbac.authorization.k8s.io", "list", "RoleBinding objects", istioNS),
		operand(rbac.IstioCSR, "rolebindings.rbac.authorization.k8s.io", "delete", `RoleBinding "`+istioNS+`/`, istioNS),
		operand(rbac.IstioCSRCluster, "clusterroles.rbac.authorization.k8s.io", "list", "ClusterRole objects", ""),
		operand(rbac.IstioCSRCluster, "clusterroles.rbac.authorization.k8s.io", "delete", `ClusterRole "cert-manager-istio-csr`, ""),
		operand(rbac.IstioCSRCluster, "clusterrolebindings.rbac.authorization.k8s.io", "list", "ClusterRoleBinding objects", ""),
		operand(rbac.IstioCSRCluster, "clusterrolebindings.rbac.authorization.k8s.io", "delete", `ClusterRoleBinding "cert-manager-istio-csr`, ""),
		// Mesh namespaces
		{rule: key(rbac.Mesh, kyma, "get"), ns: kymaNS, object: `Istio "` + kymaNS + `/default"`, run: plan(d.mesh)},
		{rule: key(rbac.Mesh, kyma, "patch"), ns: kymaNS, object: `Istio "` + kymaNS + `/default"`, run: apply(d.mesh, mesh(meshVersions{2, 3, 2, 2}))},
		{rule: key(rbac.Mesh, mtrust, "get"), ns: kumaNS, object: kumaMT, run: plan(d.mesh)},
		{rule: key(rbac.Mesh, mtrust, "create"), ns: kumaNS, object: `MeshTrust "` + kumaNS + `/fresh-peer-zt-test"`, run: apply(meshFresh, meshFreshConfig)},
		{rule: key(rbac.Mesh, mtrust, "patch"), ns: kumaNS, object: kumaMT, run: apply(d.mesh, mesh(meshVersions{2, 2, 3, 2}))},
		{rule: key(rbac.Mesh, mtrust, "delete"), ns: kumaNS, object: `MeshTrust "` + kumaNS + `/fresh-peer-zt-test"`,
			before: func(t *testing.T) { e.mustTF(t, meshFresh, "apply", "-auto-approve") },
			after:  func(t *testing.T) { e.mustTF(t, meshFresh, "destroy", "-auto-approve") }, run: destroy(meshFresh)},
		{rule: key(rbac.Mesh, msvc, "get"), ns: kumaNS, object: `MeshService "` + kumaNS + `/cart"`, run: plan(d.mesh)},
		{rule: key(rbac.Mesh, msvc, "patch"), ns: kumaNS, object: `MeshService "` + kumaNS + `/cart"`, run: apply(d.mesh, mesh(meshVersions{2, 2, 2, 3}))},
	}
}

// removeIstioCSROperands deletes, as an administrator, what the operator
// stand-in created for the IstioCSR in csrNS.
func removeIstioCSROperands(t *testing.T) {
	t.Helper()
	dyn := acctest.Dynamic(t, clusterName)
	ctx := context.Background()
	for _, op := range acctest.IstioCSROperands {
		ri := dyn.Resource(op.GVR)
		list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: "app=cert-manager-istio-csr"})
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range list.Items {
			if ns := item.GetNamespace(); ns != "" && ns != csrNS && ns != istioNS {
				continue
			}
			err := ri.Namespace(item.GetNamespace()).Delete(ctx, item.GetName(), metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
		}
	}
}

// deleteRoute removes the federation Route staleRoute made, as an administrator.
func deleteRoute(t *testing.T, e *env) {
	t.Helper()
	err := acctest.Dynamic(t, clusterName).Resource(kube.Route.GVR()).Namespace(harness.DefaultSpireNamespace).
		Delete(context.Background(), "spire-server-federation", metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

const spireExtraPeer2 = `
    "extra2.zt.test" = {
      bundle_endpoint_url     = "https://bundles.extra2.zt.test"
      bundle_endpoint_profile = "https_web"
    }
`
