// Package rbac is the provider's least-privilege table: every API group,
// resource and verb a resource, data source, list resource or action of this
// provider uses, with the Terraform types that use it and when. The
// manifests in examples/rbac (one per SPIRE install, one per optional
// product; File) and the guide templates/guides/least-privilege.md.tmpl are
// rendered from it (cmd/rbacgen, run by scripts/docs.sh); a unit test fails
// when they differ from what the table renders. The acceptance tests of
// internal/leastprivilege apply the manifests unchanged, run every type with
// the token of the ServiceAccount they bind and nothing else, and take each
// rule out in turn to show it is needed. Grant names, for a refusal's
// diagnostic, the role of the manifests that grants what was refused.
package rbac

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
)

// Role names of the manifests. Cluster and IstioCSRCluster are bound
// cluster-wide (a ClusterRoleBinding); the others are ClusterRoles granted
// per namespace by a RoleBinding (a ClusterRole bound by a RoleBinding grants
// only in that namespace), so pod exec and the operator-owned objects it
// deletes are never granted cluster-wide. SpireBundle is apart from Spire
// because the SPIFFE Helm chart's recommended layout publishes the trust
// bundle in the agents' namespace, where the provider reads one ConfigMap and
// execs into nothing. What only zerotrust_istio_csr needs, the deletion of
// the ClusterRoles the cert-manager Operator leaves behind among it, is in
// roles of their own, in a file of their own: a fleet without IstioCSRs
// never grants it.
const (
	Cluster         = "zerotrust"
	Spire           = "zerotrust-spire"
	SpireBundle     = "zerotrust-spire-bundle"
	IstioCSR        = "zerotrust-istio-csr"
	IstioCSRCluster = "zerotrust-istio-csr-cluster"
	Mesh            = "zerotrust-mesh"
)

// RoleSpec describes one ClusterRole of the manifests.
type RoleSpec struct {
	Name string
	// Namespaced roles are bound by a RoleBinding in each namespace BindIn
	// names; the cluster-wide ones by a ClusterRoleBinding.
	Namespaced bool
	// BindIn says in which namespaces the role must be bound.
	BindIn string
}

// Roles lists the ClusterRoles in manifest order.
var Roles = []RoleSpec{
	{Name: Cluster, BindIn: "cluster-wide (ClusterRoleBinding): cluster-scoped kinds, and lists across all namespaces"},
	{Name: Spire, Namespaced: true, BindIn: "the SPIRE server's namespace (each cluster's `spire.namespace`: default " +
		"`" + OperatorSpireNamespace + "`, or `" + HelmSpireNamespace + "` with `spire.install = \"helm\"`, the SPIFFE Helm chart's " +
		"recommended layout), and any other `spire_server.namespace` or `config_map.namespace` used where a SPIRE server runs; " +
		"the federation Route is always read in `" + OperatorSpireNamespace + "`, so bind it there too when an " +
		"operator's SPIRE namespace differs"},
	{Name: SpireBundle, Namespaced: true, BindIn: "each cluster's `spire.bundle_namespace` where it is not its " +
		"`spire.namespace`: `" + HelmSpireBundleNamespace + "` with `spire.install = \"helm\"` (the chart's recommended layout publishes the " +
		"trust bundle apart from the server), where `zerotrust_trust_bundle` reads the bundle ConfigMap; not needed for " +
		"the operator, which publishes it beside the server"},
	{Name: IstioCSR, Namespaced: true, BindIn: "each namespace of a `zerotrust_istio_csr` (`namespace`) and its `istio.namespace`"},
	{Name: IstioCSRCluster, BindIn: "cluster-wide (ClusterRoleBinding), only where a `zerotrust_istio_csr` is managed: the " +
		"IstioCSRs of the cluster, the ClusterIssuer it names and the ClusterRoles the cert-manager Operator leaves behind"},
	{Name: Mesh, Namespaced: true, BindIn: "each namespace of a Kyma `Istio`, Kuma `MeshTrust` or `MeshService` the configuration manages or reads"},
}

// Use is one Terraform type's use of a rule.
type Use struct {
	// Type is "resource zerotrust_x", "data source zerotrust_x",
	// "list zerotrust_x" or "action zerotrust_x".
	Type string
	// When says which operations or settings need the rule.
	When string
}

// Rule is one verb on one resource (with subresource: "pods/exec") of one API
// group, in one role.
type Rule struct {
	Role     string
	Group    string
	Resource string
	Verb     string
	Uses     []Use
}

// Key names a rule uniquely: "zerotrust-spire pods/exec create".
func (r Rule) Key() string {
	return fmt.Sprintf("%s %s %s", r.Role, r.GroupResource(), r.Verb)
}

// GroupResource is "resource.group" ("pods" for the core group), as RBAC
// errors and `kubectl auth can-i` name it.
func (r Rule) GroupResource() string {
	if r.Group == "" {
		return r.Resource
	}
	return r.Resource + "." + r.Group
}

// Type prefixes of Use.Type.
const (
	res  = "resource "
	ds   = "data source "
	list = "list "
	act  = "action "
)

// z is the provider's prefix of every type name.
const z = typename.Provider + "_"

// Terraform types, as Use.Type spells them; the names are internal/typename's.
const (
	rFTD   = res + z + string(typename.FederatedTrustDomain)
	rFed   = res + z + string(typename.SpireFederation)
	rCSR   = res + z + string(typename.IstioCSR)
	rMesh  = res + z + string(typename.MeshTrustDomain)
	rMSI   = res + z + string(typename.MeshServiceIdentities)
	rDV    = res + z + string(typename.DomainVerification)
	rCSID  = res + z + string(typename.ClusterSPIFFEID)
	rCSF   = res + z + string(typename.ClusterSPIFFEIDFederation)
	rSB    = res + z + string(typename.SpireBundle)
	dTB    = ds + z + string(typename.TrustBundle)
	dSS    = ds + z + string(typename.SpireServer)
	dFS    = ds + z + string(typename.FederationStatus)
	dDV    = ds + z + string(typename.DomainVerification)
	dMS    = ds + z + string(typename.MeshService)
	dCSID  = ds + z + string(typename.ClusterSPIFFEID)
	lFTD   = list + z + string(typename.FederatedTrustDomain)
	lFed   = list + z + string(typename.SpireFederation)
	lCSR   = list + z + string(typename.IstioCSR)
	lMesh  = list + z + string(typename.MeshTrustDomain)
	lMSI   = list + z + string(typename.MeshServiceIdentities)
	lDV    = list + z + string(typename.DomainVerification)
	lCSID  = list + z + string(typename.ClusterSPIFFEID)
	lCSF   = list + z + string(typename.ClusterSPIFFEIDFederation)
	lSB    = list + z + string(typename.SpireBundle)
	aRefr  = act + z + string(typename.SpireBundleRefresh)
	aCheck = act + z + string(typename.DomainVerificationCheck)
)

// spireExec is what the pod-exec features share: the pod is read first (a
// missing pod or container gives a clear error), then exec runs spire-server.
var spireExec = []Use{
	{rFTD, "only with `wait_for_bundle`, `check_spire` (refresh; refused, it warns \"SPIRE Not Asked\") or `delete_bundle_on_destroy`"},
	{dTB, "with the `spire_server` source, and with `config_map` unless `config_map.check_spire = false` (refused, it warns \"Bundle ConfigMap Not Checked Against SPIRE\")"},
	{dFS, "always (asks every checked cluster's SPIRE server)"},
	{aRefr, "always"},
	{rCSID, "with `federates_with`: create and update (wait until the entries federate), refresh (`federation_problems`; refused, the prior value is kept)"},
	{rCSF, "create and update (wait until the entries federate)"},
	{rSB, "always: create and update (`bundle set`), refresh and plan (`bundle list`, `federation list`; refused, it warns \"SPIRE Bundles Not Read\" and keeps the prior state), destroy (`bundle delete`), import"},
	{lSB, "always (`bundle list`, `federation list`)"},
}

// selectedPods is what a ClusterSPIFFEID's wait lists to find the pods it
// selects, as spire-controller-manager does.
const selectedPods = "with `federates_with`: create and update (wait until the selected pods' entries federate), refresh (`federation_problems`; refused, the prior value is kept)"

// istioCSROperands is what the cert-manager Operator creates for an IstioCSR
// and never removes: the resource's destroy lists them by label and deletes
// them (resources/istio_csr_operator.go cleanUpIstioCSROperands).
const istioCSROperands = "destroy: lists and deletes what the cert-manager Operator created for the IstioCSR and leaves behind (a refusal only warns: \"Agent Objects Left Behind\")"

// Rules is the table. Order: role, group, resource, verb (the manifest and
// the guide keep it).
var Rules = []Rule{
	// Cluster-scoped kinds.
	{Cluster, "spire.spiffe.io", "clusterfederatedtrustdomains", "get", []Use{
		{rFTD, "refresh, import, create (an object of that name already there), destroy"},
	}},
	{Cluster, "spire.spiffe.io", "clusterfederatedtrustdomains", "list", []Use{
		{rFTD, "plan and create: the duplicate trust-domain check (refused, the plan warns and the create fails); a refresh of many objects reads one list instead of one get each"},
		{lFTD, "always"},
		{dFS, "always"},
		{rCSID, "plan with `federates_with`, create, and an update that changes it: every trust domain must be declared by a federation of the cluster; the plan warns, the apply refuses before it writes (refused, both skip the check)"},
		{rCSF, "plan, create, and an update that changes `federates_with`: every trust domain must be declared by a federation of the cluster; the plan warns, the apply refuses before it writes (refused, both skip the check)"},
		{rFed, "plan with `federates_with`: whether a ClusterFederatedTrustDomain this configuration did not write federates with one of its trust domains, which the SPIRE server's configuration file would override (refused, the plan warns \"Plan-Time Check Skipped\")"},
	}},
	{Cluster, "spire.spiffe.io", "clusterfederatedtrustdomains", "create", []Use{
		{rFTD, "create (server-side apply of an object that does not exist yet is authorized as create too)"},
	}},
	{Cluster, "spire.spiffe.io", "clusterfederatedtrustdomains", "patch", []Use{
		{rFTD, "create and update (server-side apply), plan of an update (dry run)"},
	}},
	{Cluster, "spire.spiffe.io", "clusterfederatedtrustdomains", "delete", []Use{
		{rFTD, "destroy"},
	}},
	{Cluster, "spire.spiffe.io", "clusterspiffeids", "get", []Use{
		{rCSID, "create (an object of that name already there), refresh, import, the wait of create and update (`status.stats`)"},
		{rCSF, "plan of a create (the object must exist; refused, the plan skips the check), create, update, refresh, import, destroy"},
		{dCSID, "always"},
		{dFS, "always (each ClusterSPIFFEID that federates)"},
	}},
	{Cluster, "spire.spiffe.io", "clusterspiffeids", "list", []Use{
		{lCSID, "always"},
		{lCSF, "always"},
		{rCSID, "plan of a new object or a new `class_name` that is not the cluster's `spire.class_name` (whether a controller serves it; refused, no warning)"},
		{rFTD, "plan of a new object or a new `class_name` that is not the cluster's `spire.class_name` (whether a controller serves it; refused, no warning)"},
		{dFS, "always (`workloads`; refused, a problem of the cluster)"},
	}},
	{Cluster, "spire.spiffe.io", "clusterspiffeids", "create", []Use{
		{rCSID, "create (server-side apply of an object that does not exist yet is authorized as create too)"},
	}},
	{Cluster, "spire.spiffe.io", "clusterspiffeids", "patch", []Use{
		{rCSID, "create and update (server-side apply)"},
		{rCSF, "create and update (server-side apply of `spec.federatesWith`), plan of an update (dry run), destroy (gives the field up; a merge patch writes back other managers' trust domains)"},
	}},
	{Cluster, "spire.spiffe.io", "clusterspiffeids", "delete", []Use{
		{rCSID, "destroy"},
	}},
	{Cluster, "", "namespaces", "list", []Use{{rCSID, selectedPods}, {rCSF, "create and update (wait until the selected pods' entries federate)"},
		{dFS, "when a ClusterSPIFFEID federates (`workloads`; refused, a problem of the cluster)"}}},
	{Cluster, "", "pods", "list", []Use{{rCSID, selectedPods}, {rCSF, "create and update (wait until the selected pods' entries federate)"},
		{dFS, "when a ClusterSPIFFEID federates (`workloads`; refused, a problem of the cluster)"}}},
	{Cluster, "operator.openshift.io", "spireservers", "get", []Use{
		{rFed, "plan, apply, refresh, import, destroy"},
		{dSS, "always"},
		{rCSID, "plan (the cluster's own trust domain, on operators that keep it there; refused, the plan skips the check)"},
		{rCSF, "plan (the cluster's own trust domain, on operators that keep it there; refused, the plan skips the check)"},
		{rFTD, "plan, unless the cluster's `spire.install` is \"helm\": whether the SpireServer's `federatesWith`, which this configuration does not manage, lists the trust domain (refused, the plan skips the check)"},
	}},
	{Cluster, "operator.openshift.io", "spireservers", "list", []Use{
		{lFed, "always"},
	}},
	{Cluster, "operator.openshift.io", "spireservers", "patch", []Use{
		{rFed, "apply and destroy (server-side apply of spec.federation; the SpireServer is the operator's, never created)"},
	}},
	{Cluster, "operator.openshift.io", "zerotrustworkloadidentitymanagers", "get", []Use{
		{rFed, "plan and apply (the cluster's own trust domain)"},
		{dSS, "always"},
		{rCSID, "plan (the cluster's own trust domain; refused, the plan skips the check)"},
		{rCSF, "plan (the cluster's own trust domain; refused, the plan skips the check)"},
	}},
	{Cluster, "sailoperator.io", "istios", "get", []Use{
		{rMesh, "only with `mesh.kind = \"istio_sail\"`: plan, apply, refresh, import, destroy"},
	}},
	{Cluster, "sailoperator.io", "istios", "list", []Use{
		{lMesh, "always"},
	}},
	{Cluster, "sailoperator.io", "istios", "patch", []Use{
		{rMesh, "only with `mesh.kind = \"istio_sail\"`: apply and destroy (server-side apply; the Istio is the operator's, never created)"},
	}},
	{Cluster, "operator.kyma-project.io", "istios", "list", []Use{
		{lMesh, "always, across all namespaces"},
	}},
	{Cluster, "kuma.io", "meshtrusts", "list", []Use{
		{lMesh, "always, across all namespaces"},
	}},
	{Cluster, "kuma.io", "meshservices", "list", []Use{
		{lMSI, "always, across all namespaces"},
	}},
	{Cluster, "kuadrant.dev", "domainverifications", "get", []Use{
		{rDV, "plan, apply (waits for the controller's token), refresh, import, destroy"},
		{dDV, "always"},
		{aCheck, "only with `name` (the token the controller issued)"},
	}},
	{Cluster, "kuadrant.dev", "domainverifications", "list", []Use{
		{rDV, "plan with `adopt_existing` and no `name` (finds the object by domain; refused, the plan warns and the apply creates an object named after the domain)"},
		{dDV, "always (a subdomain of a verified domain needs no check of its own; refused, it warns and `covered_by` stays null)"},
		{lDV, "always"},
	}},
	{Cluster, "kuadrant.dev", "domainverifications", "create", []Use{
		{rDV, "create of an object nobody created before"},
	}},
	{Cluster, "kuadrant.dev", "domainverifications", "patch", []Use{
		{rDV, "create and update (server-side apply), destroy of an adopted object (releases its fields)"},
	}},
	{Cluster, "kuadrant.dev", "domainverifications", "delete", []Use{
		{rDV, "destroy of an object the resource created"},
	}},

	// The SPIRE namespace.
	{Spire, "", "pods", "get", spireExec},
	// Exec goes over WebSocket, an HTTP GET that RBAC checks as get on
	// pods/exec; Kubernetes 1.35 (AuthorizePodWebsocketUpgradeCreatePermission)
	// also checks create, which SPDY, the POST fallback for API servers
	// without WebSocket exec, needs alone. A refusal is final: the provider
	// does not fall back to SPDY after a 403.
	{Spire, "", "pods/exec", "get", spireExec},
	{Spire, "", "pods/exec", "create", spireExec},
	{Spire, "", "configmaps", "get", []Use{
		{dTB, "only with the `config_map` source (in `config_map.namespace`)"},
	}},
	// The bundle namespace apart from the server's.
	{SpireBundle, "", "configmaps", "get", []Use{
		{dTB, "only with the `config_map` source in the cluster's `spire.bundle_namespace` (its default `namespace`) where that is not its `spire.namespace` (the chart's `spire-system`)"},
	}},
	{Spire, "", "configmaps", "list", []Use{
		{dSS, "with `install = \"helm\"`, and with `auto` on a cluster without the operator's objects, in its " +
			"`namespace` (finds the Helm chart's SPIRE server ConfigMap; refused, the read fails with \"Forbidden by the " +
			"Cluster's RBAC\", never as not found)"},
	}},
	{Spire, "networking.k8s.io", "ingresses", "get", []Use{
		{dSS, "when it reads a Helm-installed SPIRE (`bundle_endpoint_url`, the chart's federation Ingress)"},
	}},
	{Spire, "route.openshift.io", "routes", "get", []Use{
		{rFed, "apply (waits for the operator's federation Route), refresh (`bundle_endpoint_url`)"},
		{dSS, "always (`bundle_endpoint_url`)"},
	}},
	{Spire, "route.openshift.io", "routes", "delete", []Use{
		{rFed, "only with `managed_route = false`: apply deletes the Route the operator made earlier and never removes"},
	}},

	// The IstioCSR's namespace and its istio.namespace.
	{IstioCSR, "operator.openshift.io", "istiocsrs", "get", []Use{{rCSR, "plan, apply, refresh, import, destroy"}}},
	{IstioCSR, "operator.openshift.io", "istiocsrs", "create", []Use{{rCSR, "create"}}},
	{IstioCSR, "operator.openshift.io", "istiocsrs", "patch", []Use{{rCSR, "create and update (server-side apply), plan of an update (dry run)"}}},
	{IstioCSR, "operator.openshift.io", "istiocsrs", "delete", []Use{{rCSR, "destroy"}}},
	{IstioCSR, "apps", "deployments", "get", []Use{{rCSR, "apply (waits until the operator's istio-csr agent is available)"}}},
	{IstioCSR, "apps", "deployments", "list", []Use{{rCSR, istioCSROperands}}},
	{IstioCSR, "apps", "deployments", "delete", []Use{{rCSR, istioCSROperands}}},
	{IstioCSR, "", "services", "list", []Use{{rCSR, istioCSROperands}}},
	{IstioCSR, "", "services", "delete", []Use{{rCSR, istioCSROperands}}},
	{IstioCSR, "", "serviceaccounts", "list", []Use{{rCSR, istioCSROperands}}},
	{IstioCSR, "", "serviceaccounts", "delete", []Use{{rCSR, istioCSROperands}}},
	{IstioCSR, "networking.k8s.io", "networkpolicies", "list", []Use{{rCSR, istioCSROperands}}},
	{IstioCSR, "networking.k8s.io", "networkpolicies", "delete", []Use{{rCSR, istioCSROperands}}},
	{IstioCSR, "", "configmaps", "get", []Use{{rCSR, "plan, only with `istio_ca_certificate` (the CA ConfigMap must exist and hold a CA); refused, the plan warns and skips the check"}}},
	{IstioCSR, "", "configmaps", "list", []Use{{rCSR, istioCSROperands}}},
	{IstioCSR, "", "configmaps", "delete", []Use{{rCSR, istioCSROperands}}},
	{IstioCSR, "", "secrets", "get", []Use{{rCSR, "plan of a create or replacement, when the issuer is a CA issuer: its CA Secret in `istio.namespace` must hold ca.crt (as the operator requires); refused, the plan warns and skips the check"}}},
	{IstioCSR, "cert-manager.io", "issuers", "get", []Use{{rCSR, "plan of a create or replacement, when `cert_manager.issuer_ref.kind` is Issuer (in `istio.namespace`); refused, the plan warns and skips the check"}}},
	{IstioCSR, "cert-manager.io", "certificates", "get", []Use{{rCSR, "apply (waits until istiod's Certificate is Ready)"}}},
	{IstioCSR, "cert-manager.io", "certificates", "list", []Use{{rCSR, istioCSROperands}}},
	{IstioCSR, "cert-manager.io", "certificates", "delete", []Use{{rCSR, istioCSROperands}}},
	{IstioCSR, "rbac.authorization.k8s.io", "roles", "list", []Use{{rCSR, istioCSROperands}}},
	{IstioCSR, "rbac.authorization.k8s.io", "roles", "delete", []Use{{rCSR, istioCSROperands}}},
	{IstioCSR, "rbac.authorization.k8s.io", "rolebindings", "list", []Use{{rCSR, istioCSROperands}}},
	{IstioCSR, "rbac.authorization.k8s.io", "rolebindings", "delete", []Use{{rCSR, istioCSROperands}}},

	// Cluster-wide, for the IstioCSR alone.
	{IstioCSRCluster, "operator.openshift.io", "istiocsrs", "list", []Use{
		{rCSR, "plan of a create or replacement (the operator serves one IstioCSR per cluster), across all namespaces; refused, the plan warns and skips the check"},
		{lCSR, "always, across all namespaces"},
	}},
	{IstioCSRCluster, "cert-manager.io", "clusterissuers", "get", []Use{
		{rCSR, "plan of a create or replacement, when `cert_manager.issuer_ref.kind` is ClusterIssuer; refused, the plan warns and skips the check"},
	}},
	{IstioCSRCluster, "rbac.authorization.k8s.io", "clusterroles", "list", []Use{{rCSR, istioCSROperands}}},
	{IstioCSRCluster, "rbac.authorization.k8s.io", "clusterroles", "delete", []Use{{rCSR, istioCSROperands}}},
	{IstioCSRCluster, "rbac.authorization.k8s.io", "clusterrolebindings", "list", []Use{{rCSR, istioCSROperands}}},
	{IstioCSRCluster, "rbac.authorization.k8s.io", "clusterrolebindings", "delete", []Use{{rCSR, istioCSROperands}}},

	// The mesh namespaces.
	{Mesh, "operator.kyma-project.io", "istios", "get", []Use{
		{rMesh, "only with `mesh.kind = \"istio_kyma\"`: plan, apply, refresh, import, destroy"},
	}},
	{Mesh, "operator.kyma-project.io", "istios", "patch", []Use{
		{rMesh, "only with `mesh.kind = \"istio_kyma\"`: apply and destroy (server-side apply; never created)"},
	}},
	{Mesh, "kuma.io", "meshtrusts", "get", []Use{
		{rMesh, "only with `mesh.kind = \"kuma\"`: plan, apply, refresh, import, destroy"},
	}},
	{Mesh, "kuma.io", "meshtrusts", "create", []Use{
		{rMesh, "only with `mesh.kind = \"kuma\"`: create of a MeshTrust that does not exist"},
	}},
	{Mesh, "kuma.io", "meshtrusts", "patch", []Use{
		{rMesh, "only with `mesh.kind = \"kuma\"`: apply, and destroy of a MeshTrust others also manage (releases the fields)"},
	}},
	{Mesh, "kuma.io", "meshtrusts", "delete", []Use{
		{rMesh, "only with `mesh.kind = \"kuma\"`: destroy of a MeshTrust only this resource manages"},
	}},
	{Mesh, "kuma.io", "meshservices", "get", []Use{
		{rMSI, "plan, apply, refresh, import, destroy"},
		{dMS, "always"},
	}},
	{Mesh, "kuma.io", "meshservices", "patch", []Use{
		{rMSI, "apply and destroy (server-side apply of spec.identities; the MeshService is Kuma's, never created)"},
	}},
}

// Verbs of one role on one group resource, in table order.
type GroupResourceVerbs struct {
	Group, Resource string
	Verbs           []string
}

// RoleRules groups the rules of role by group and resource, in table order.
func RoleRules(role string) []GroupResourceVerbs {
	var out []GroupResourceVerbs
	for _, r := range Rules {
		if r.Role != role {
			continue
		}
		i := slices.IndexFunc(out, func(g GroupResourceVerbs) bool { return g.Group == r.Group && g.Resource == r.Resource })
		if i < 0 {
			out = append(out, GroupResourceVerbs{Group: r.Group, Resource: r.Resource})
			i = len(out) - 1
		}
		out[i].Verbs = append(out[i].Verbs, r.Verb)
	}
	return out
}

// Types lists every Terraform type the table names, sorted by kind of type
// (resources, data sources, list resources, actions) and name.
func Types() []string {
	var out []string
	for _, r := range Rules {
		for _, u := range r.Uses {
			if !slices.Contains(out, u.Type) {
				out = append(out, u.Type)
			}
		}
	}
	order := func(t string) int {
		for i, p := range []string{res, ds, list, act} {
			if strings.HasPrefix(t, p) {
				return i
			}
		}
		return 4
	}
	slices.SortFunc(out, func(a, b string) int {
		if oa, ob := order(a), order(b); oa != ob {
			return oa - ob
		}
		return strings.Compare(a, b)
	})
	return out
}
