// Package spirefacts reads what the OpenShift Zero Trust Workload Identity
// Manager's custom resources say about one cluster's SPIRE installation:
// trust domain, cluster name, bundle ConfigMap and federation endpoint. The
// zerotrust_spire_federation resource and the zerotrust_spire_server data
// source share it so that both derive these facts the same way.
//
// Newer operators keep the trust domain, cluster name and bundle ConfigMap on
// the ZeroTrustWorkloadIdentityManager `cluster`; older ones keep them on the
// SpireServer `cluster`. The ZeroTrustWorkloadIdentityManager wins when both
// say something.
//
// A SPIRE installed by the SPIFFE project's Helm chart (spiffe/spire) has no
// such objects: helm.go reads the same facts from the server's configuration
// ConfigMap, and install.go gives both installs one shape, Installation, and
// tells which one a cluster has (Detect).
package spirefacts

import (
	"context"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

const (
	// ObjectName is the name of both singletons, ZeroTrustWorkloadIdentityManager and SpireServer.
	ObjectName = "cluster"
	// FederationRouteName is the Route the operator creates for the bundle
	// endpoint (managedRoute "true"), in RouteNamespace, with host
	// federation.<trust domain>. The released SpireServer has no field that
	// says where the endpoint is reachable (the enhancement proposal's
	// bundleEndpoint.address/port never shipped): this Route is the only
	// place the cluster's API says it.
	FederationRouteName = "spire-server-federation"
	// RouteNamespace is where the operator puts FederationRouteName: the
	// constant utils.OperatorNamespace (routes.go reconcileRoute), not the
	// OPERATOR_NAMESPACE every other operand object goes to, so the provider's
	// spire.namespace does not move it.
	RouteNamespace = "zero-trust-workload-identity-manager"
	// OperatorManagedByLabel is the label the operator puts on every object
	// it creates, the Route included (utils.SpireServerLabels); its routes
	// cache sees only Routes carrying it. A Route without it is someone
	// else's.
	OperatorManagedByLabel = "app.kubernetes.io/managed-by"
	// OperatorManagedByValue is OperatorManagedByLabel's value on the operator's objects.
	OperatorManagedByValue = "zero-trust-workload-identity-manager"
	// DefaultBundleConfigMap is the operator's default bundle ConfigMap name.
	DefaultBundleConfigMap = "spire-bundle"
	// NotifierBundleKey is the key SPIRE's Notifier "k8sbundle" writes PEM
	// certificates under when its config_map_key is unset; the operator
	// renders that notifier.
	NotifierBundleKey = "bundle.crt"
)

// Facts holds the two singletons as read; either may be nil (absent, or its
// CRD not installed).
type Facts struct {
	ZTWIM       *unstructured.Unstructured
	SpireServer *unstructured.Unstructured
}

// Lookup reads the ZeroTrustWorkloadIdentityManager and SpireServer `cluster`.
// A kind the cluster does not serve and a missing object are both absent, not
// errors: discovery is asked first, so a cluster without the operator does not
// wait out the client's grace period for freshly installed CRDs.
func Lookup(ctx context.Context, c *kube.Client) (*Facts, error) {
	f := &Facts{}
	var err error
	if f.ZTWIM, err = GetIfServed(ctx, c, kube.ZeroTrustWorkloadIdentityManager); err != nil {
		return nil, err
	}
	if f.SpireServer, err = GetIfServed(ctx, c, kube.SpireServer); err != nil {
		return nil, err
	}
	return f, nil
}

// GetIfServed reads the singleton of kind, or returns nil when the cluster
// does not serve the kind or the object does not exist.
func GetIfServed(ctx context.Context, c *kube.Client, kind kube.Kind) (*unstructured.Unstructured, error) {
	served, err := c.Served(ctx, kind)
	if err != nil {
		return nil, &kube.OpError{Cluster: c.DisplayName(), Verb: "list", Kind: kind, Err: err}
	}
	if !served {
		return nil, nil
	}
	obj, err := c.Get(ctx, kind, "", ObjectName)
	if kube.IsNotFound(err) || kube.IsCRDNotInstalled(err) {
		return nil, nil
	}
	return obj, err
}

// Found reports whether either singleton exists.
func (f *Facts) Found() bool { return f.ZTWIM != nil || f.SpireServer != nil }

// TrustDomain is the installation's trust domain and the kind that holds it,
// or "" when neither object sets one.
func (f *Facts) TrustDomain() (string, kube.Kind) {
	if v := specString(f.ZTWIM, "trustDomain"); v != "" {
		return v, kube.ZeroTrustWorkloadIdentityManager
	}
	if v := specString(f.SpireServer, "trustDomain"); v != "" {
		return v, kube.SpireServer
	}
	return "", kube.Kind{}
}

// ClusterName is the cluster name the SPIRE agents attest with, or "".
func (f *Facts) ClusterName() string {
	if v := specString(f.ZTWIM, "clusterName"); v != "" {
		return v
	}
	return specString(f.SpireServer, "clusterName")
}

// BundleConfigMap is the ConfigMap that receives the trust bundle.
func (f *Facts) BundleConfigMap() string {
	if v := specString(f.ZTWIM, "bundleConfigMap"); v != "" {
		return v
	}
	if v := specString(f.SpireServer, "bundleConfigMap"); v != "" {
		return v
	}
	return DefaultBundleConfigMap
}

// Federation is the SpireServer's spec.federation, or nil.
func (f *Facts) Federation() map[string]any {
	if f.SpireServer == nil {
		return nil
	}
	m, _, _ := unstructured.NestedMap(f.SpireServer.Object, "spec", "federation")
	return m
}

// FederationProfile is the bundle endpoint profile, or "" without federation.
func (f *Facts) FederationProfile() string {
	fed := f.Federation()
	if fed == nil {
		return ""
	}
	if v, _, _ := unstructured.NestedString(fed, "bundleEndpoint", "profile"); v != "" {
		return v
	}
	return "https_spiffe"
}

// ManagedRoute reports whether the SpireServer asks the operator for the
// federation Route (spec.federation.managedRoute, CRD default "true"; the
// operator compares the string with "true").
func (f *Facts) ManagedRoute() bool {
	fed := f.Federation()
	if fed == nil {
		return false
	}
	v, found, _ := unstructured.NestedString(fed, "managedRoute")
	return !found || v == "true"
}

// BundleEndpointURL is where peers reach the bundle endpoint: the
// federation Route's host when the SpireServer has federation, OpenShift
// serves Routes and the Route exists; else "" (unknown to the cluster's API).
// With managedRoute "false" a Route the operator made earlier is stale (the
// operator never deletes it, routes.go reconcileRoute), so it says nothing; a
// Route of the user's own under that name (without the operator's label)
// still counts.
func (f *Facts) BundleEndpointURL(ctx context.Context, c *kube.Client) (string, error) {
	if f.Federation() == nil {
		return "", nil
	}
	route, err := FederationRoute(ctx, c)
	if err != nil || route == nil {
		return "", err
	}
	if !f.ManagedRoute() && IsOperatorRoute(route) {
		return "", nil
	}
	return routeURL(route), nil
}

// FederationRoute reads the Route FederationRouteName in RouteNamespace, or
// returns nil when Routes are not served or the Route does not exist (yet).
func FederationRoute(ctx context.Context, c *kube.Client) (*unstructured.Unstructured, error) {
	served, err := c.Served(ctx, kube.Route)
	if err != nil {
		return nil, &kube.OpError{Cluster: c.DisplayName(), Verb: "list", Kind: kube.Route, Err: err}
	}
	if !served {
		return nil, nil
	}
	route, err := c.Get(ctx, kube.Route, RouteNamespace, FederationRouteName)
	if kube.IsNotFound(err) || kube.IsCRDNotInstalled(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return route, nil
}

// IsOperatorRoute reports whether route carries the operator's managed-by
// label, that is whether the operator made it (and would overwrite it).
func IsOperatorRoute(route *unstructured.Unstructured) bool {
	return route.GetLabels()[OperatorManagedByLabel] == OperatorManagedByValue
}

// RouteURL returns https://<host> of route, or "" while it has none.
func RouteURL(route *unstructured.Unstructured) string {
	if route == nil {
		return ""
	}
	return routeURL(route)
}

func routeURL(route *unstructured.Unstructured) string {
	host, _, _ := unstructured.NestedString(route.Object, "spec", "host")
	if host == "" {
		// The router admits a Route without spec.host under a generated name.
		ingress, _, _ := unstructured.NestedSlice(route.Object, "status", "ingress")
		for _, in := range ingress {
			if m, ok := in.(map[string]any); ok {
				if h, ok := m["host"].(string); ok && h != "" {
					host = h
					break
				}
			}
		}
	}
	if host == "" {
		return ""
	}
	return "https://" + host
}

// EndpointSPIFFEID is the SPIFFE ID a SPIRE server's bundle endpoint presents,
// spiffe://<trust domain>/spire/server, or "" for an invalid trust domain.
func EndpointSPIFFEID(trustDomain string) string {
	td, err := spiffeid.TrustDomainFromString(trustDomain)
	if err != nil {
		return ""
	}
	id, err := spiffeid.FromSegments(td, "spire", "server")
	if err != nil {
		return ""
	}
	return id.String()
}

func specString(obj *unstructured.Unstructured, field string) string {
	if obj == nil {
		return ""
	}
	v, _, _ := unstructured.NestedString(obj.Object, "spec", field)
	return v
}
