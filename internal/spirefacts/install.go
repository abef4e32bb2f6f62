package spirefacts

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// OperatorDefaults are what the operator's custom resources do not say of its
// install and the provider's `spire` configuration does.
type OperatorDefaults struct {
	Namespace, ClassName, Pod, Container string
}

// NotFoundError says that a cluster has none of the installs looked for, and
// what was looked for where.
type NotFoundError struct {
	Cluster string
	// Install is what was asked for: InstallAuto, InstallOperator or InstallHelm.
	Install string
	// HelmNamespace is where the chart's server ConfigMap was looked for.
	HelmNamespace string
}

func (e *NotFoundError) Error() string {
	var looked []string
	if e.Install != InstallHelm {
		looked = append(looked, "neither a ZeroTrustWorkloadIdentityManager nor a SpireServer named \"cluster\" "+
			"(operator.openshift.io/v1alpha1, the OpenShift Zero Trust Workload Identity Manager operator)")
	}
	if e.Install != InstallOperator {
		looked = append(looked, fmt.Sprintf("no ConfigMap labelled %s=%s with key %q in namespace %q (the SPIRE "+
			"server's configuration as the SPIFFE Helm chart spiffe/spire installs it)",
			OperatorManagedByLabel, HelmManagedByValue, HelmServerConfigKey, e.HelmNamespace))
	}
	return fmt.Sprintf("cluster %q has %s", e.Cluster, strings.Join(looked, ", and "))
}

// NoTrustDomainError says that the operator's objects exist but none sets a
// trust domain.
type NoTrustDomainError struct{ Cluster string }

func (e *NoTrustDomainError) Error() string {
	return fmt.Sprintf("cluster %q has a SpireServer \"cluster\" but no trust domain", e.Cluster)
}

// AmbiguousError says that a cluster has more than one chart release's SPIRE
// server, and which.
type AmbiguousError struct {
	Cluster string
	Servers []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("cluster %q has %d SPIRE servers installed by Helm in one namespace (%s)", e.Cluster, len(e.Servers),
		strings.Join(e.Servers, ", "))
}

// Installation converts the operator's objects into an Installation; the
// operator's Route gives bundleEndpointURL (BundleEndpointURL), d what the
// objects do not say.
func (f *Facts) Installation(cluster, bundleEndpointURL string, d OperatorDefaults) (*Installation, error) {
	td, _ := f.TrustDomain()
	if td == "" {
		return nil, &NoTrustDomainError{Cluster: cluster}
	}
	in := &Installation{
		Install:           InstallOperator,
		TrustDomain:       td,
		ClusterName:       f.ClusterName(),
		BundleConfigMap:   f.BundleConfigMap(),
		BundleNamespace:   d.Namespace,
		BundleKey:         NotifierBundleKey,
		FederationProfile: f.FederationProfile(),
		BundleEndpointURL: bundleEndpointURL,
		EndpointSPIFFEID:  EndpointSPIFFEID(td),
		ClassName:         d.ClassName,
		ServerNamespace:   d.Namespace,
		ServerPod:         d.Pod,
		ServerContainer:   d.Container,
	}
	if fed := f.Federation(); fed != nil {
		in.BundleEndpointPort, _, _ = unstructured.NestedInt64(fed, "bundleEndpoint", "port")
	}
	return in, nil
}

// Detect reads cluster c's SPIRE install of the kind asked for (Installs);
// with InstallAuto the operator's when its objects exist, else the chart's,
// whose server is looked for in helmNamespace.
// A cluster without it returns *NotFoundError; more than one chart release
// *AmbiguousError. A refused request is never taken for a missing install:
// when the chart's ConfigMaps may not be listed, the refusal is returned (a
// 403, kube.Diagnostic's "Forbidden by the Cluster's RBAC", which names the
// role that grants it), since the chart may be there.
func Detect(ctx context.Context, c *kube.Client, install, helmNamespace string, d OperatorDefaults) (*Installation, error) {
	if install != InstallHelm {
		facts, err := Lookup(ctx, c)
		if err != nil {
			return nil, err
		}
		if facts.Found() {
			url, err := facts.BundleEndpointURL(ctx, c)
			if err != nil {
				return nil, err
			}
			return facts.Installation(c.DisplayName(), url, d)
		}
		if install == InstallOperator {
			return nil, &NotFoundError{Cluster: c.DisplayName(), Install: install}
		}
	}
	objs, err := LookupHelm(ctx, c, helmNamespace)
	if install == InstallAuto && apierrors.IsForbidden(err) {
		return nil, refusedHelmLookup(c.DisplayName(), helmNamespace, err)
	}
	if err != nil {
		return nil, err
	}
	if objs == nil {
		return nil, &NotFoundError{Cluster: c.DisplayName(), Install: install, HelmNamespace: helmNamespace}
	}
	in, err := HelmInstallation(*objs)
	if err != nil {
		return nil, fmt.Errorf("cluster %q: %w", c.DisplayName(), err)
	}
	return in, nil
}

// refusedHelmLookup is Detect's error when auto found none of the operator's
// objects and the API server refused the look for the chart's: the refusal
// itself (still a 403 to apierrors.IsForbidden and kube.Diagnostic), with
// what was looked for before it.
func refusedHelmLookup(cluster, namespace string, refusal error) error {
	return fmt.Errorf("cluster %q has none of the operator's objects, and looking for the SPIFFE Helm chart's "+
		"SPIRE server in namespace %q was refused: %w", cluster, namespace, refusal)
}

// LookupHelm finds a chart release's SPIRE server ConfigMap in namespace
// and the controller manager's ConfigMap and federation Ingress beside it;
// nil when there is none. One namespace, not all: listing ConfigMaps
// cluster-wide would need a permission far wider than reading SPIRE. The chart labels its objects with nothing that
// says "SPIRE server" (app.kubernetes.io/name is nameOverride, "server" in
// the umbrella chart), so the server ConfigMap is told by its key.
func LookupHelm(ctx context.Context, c *kube.Client, namespace string) (*HelmObjects, error) {
	cms, err := c.ListSelected(ctx, kube.ConfigMap, namespace, OperatorManagedByLabel+"="+HelmManagedByValue)
	if err != nil {
		return nil, err
	}
	objs, err := pickHelm(c.DisplayName(), cms)
	if err != nil || objs == nil {
		return objs, err
	}
	served, err := c.Served(ctx, kube.Ingress)
	if err != nil {
		return nil, &kube.OpError{Cluster: c.DisplayName(), Verb: "list", Kind: kube.Ingress, Err: err}
	}
	if served {
		ing, err := c.Get(ctx, kube.Ingress, objs.Server.GetNamespace(), HelmFederationIngressName(objs.Server.GetName()))
		switch {
		case err == nil:
			objs.FederationIngress = ing
		case !kube.IsNotFound(err):
			return nil, err
		}
	}
	return objs, nil
}

// pickHelm chooses the server ConfigMap among Helm's ConfigMaps and the
// controller manager's ConfigMap of the same release.
func pickHelm(cluster string, cms []unstructured.Unstructured) (*HelmObjects, error) {
	var servers []*unstructured.Unstructured
	for i := range cms {
		if IsHelmServerConfigMap(&cms[i]) {
			servers = append(servers, &cms[i])
		}
	}
	switch len(servers) {
	case 0:
		return nil, nil
	case 1:
	default:
		names := make([]string, len(servers))
		for i, s := range servers {
			names[i] = s.GetNamespace() + "/" + s.GetName()
		}
		sort.Strings(names)
		return nil, &AmbiguousError{Cluster: cluster, Servers: names}
	}
	objs := &HelmObjects{Server: servers[0]}
	want := HelmControllerManagerName(servers[0].GetName())
	for i := range cms {
		if cms[i].GetNamespace() == servers[0].GetNamespace() && cms[i].GetName() == want {
			objs.ControllerManager = &cms[i]
		}
	}
	return objs, nil
}
