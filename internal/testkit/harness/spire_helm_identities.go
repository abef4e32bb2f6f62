package harness

import (
	"context"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// What the SPIFFE Helm chart (spire 0.30.0) makes of its default values
// under controllerManager.identities, as facts read from the chart's
// values.yaml and templates controller-manager-cluster-ids.yaml and
// controller-manager-ftd.yaml: every object is named
// <release namespace>-<release>-<key> (HelmObjectName), carries the class
// name in spec.className, and, as everything Helm installs, Helm's label and
// release annotations (helmMeta).

// HelmFederatedTrustDomain is one entry of the chart's
// controllerManager.identities.clusterFederatedTrustDomains.
type HelmFederatedTrustDomain struct {
	TrustDomain       string
	BundleEndpointURL string
	// EndpointSPIFFEID set: bundleEndpointProfile https_spiffe with it;
	// empty: https_web.
	EndpointSPIFFEID string
	// TrustDomainBundle is the peer's bundle (SPIFFE JSON), optional.
	TrustDomainBundle string
}

// The chart's ClusterSPIFFEIDs enabled by default (keys of
// controllerManager.identities.clusterSPIFFEIDs): the fallback identity of
// every workload, and those of the chart's OIDC discovery provider and test
// keys pods.
const (
	HelmDefaultClusterSPIFFEID       = "default"
	HelmOIDCDiscoveryClusterSPIFFEID = "oidc-discovery-provider"
	HelmTestKeysClusterSPIFFEID      = "test-keys"
)

// HelmClusterSPIFFEIDs are the keys above, in the order they are applied.
var HelmClusterSPIFFEIDs = []string{HelmDefaultClusterSPIFFEID, HelmOIDCDiscoveryClusterSPIFFEID, HelmTestKeysClusterSPIFFEID}

// HelmSPIFFEIDTemplate is the chart's default spiffeIDTemplate, which every
// ClusterSPIFFEID without one of its own uses.
const HelmSPIFFEIDTemplate = "spiffe://{{ .TrustDomain }}/ns/{{ .PodMeta.Namespace }}/sa/{{ .PodSpec.ServiceAccountName }}"

// HelmClassNameLabel is the label the chart puts on its ClusterSPIFFEIDs
// (not on its ClusterFederatedTrustDomains), holding the class name.
const HelmClassNameLabel = "spire.spiffe.io/class-name"

// HelmObjectName is the name the chart gives the object of key in
// controllerManager.identities for release HelmSpireRelease installed in
// releaseNamespace (crNameOverride unset).
func HelmObjectName(releaseNamespace, key string) string {
	return releaseNamespace + "-" + HelmSpireRelease + "-" + key
}

// helmMeta is the metadata Helm gives an object of release HelmSpireRelease
// installed in s.Namespace (the release namespace).
func (s *Spire) helmMeta(name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: namespace,
		Labels: map[string]string{"app.kubernetes.io/managed-by": "Helm"},
		Annotations: map[string]string{
			"meta.helm.sh/release-name": HelmSpireRelease, "meta.helm.sh/release-namespace": s.Namespace,
		},
	}
}

// helmClusterSPIFFEIDSpec is the spec the chart renders for key. The chart
// adds to each a namespace selector on kubernetes.io/metadata.name over its
// own namespaces (the release's and global.spire.namespaces' server and
// system ones): NotIn for the default type ("base"), In for the others;
// and a pod selector by release and component for the typed ones. Empty
// lists, false and "" values are left out, as the templates' `with` does.
func (s *Spire) helmClusterSPIFFEIDSpec(key string) map[string]any {
	namespaces := []any{s.Namespace}
	if s.BundleNamespace != s.Namespace {
		namespaces = append(namespaces, s.BundleNamespace)
	}
	nsSelector := func(op string) map[string]any {
		return map[string]any{"matchExpressions": []any{map[string]any{
			"key": "kubernetes.io/metadata.name", "operator": op, "values": namespaces,
		}}}
	}
	component := func(c string) map[string]any {
		return map[string]any{"matchLabels": map[string]any{
			"release": HelmSpireRelease, "release-namespace": s.Namespace, "component": c,
		}}
	}
	spec := map[string]any{"className": s.ClassName, "hint": key, "spiffeIDTemplate": HelmSPIFFEIDTemplate}
	switch key {
	case HelmDefaultClusterSPIFFEID:
		spec["namespaceSelector"] = nsSelector("NotIn")
		spec["fallback"] = true
	case HelmOIDCDiscoveryClusterSPIFFEID:
		spec["namespaceSelector"] = nsSelector("In")
		spec["podSelector"] = component("oidc-discovery-provider")
		spec["autoPopulateDNSNames"] = true
		spec["dnsNameTemplates"] = []any{"oidc-discovery.{{ .TrustDomain }}"}
	case HelmTestKeysClusterSPIFFEID:
		spec["namespaceSelector"] = nsSelector("In")
		spec["podSelector"] = component("test-keys")
	}
	return spec
}

// applyHelmIdentities creates, as Helm installs them, the chart's default
// ClusterSPIFFEIDs (but SpireOptions.HelmDisabledClusterSPIFFEIDs) and the ClusterFederatedTrustDomains of
// SpireOptions.HelmFederatedTrustDomains. An object left by an earlier
// server of the same release is written over.
func (s *Spire) applyHelmIdentities(ctx context.Context) error {
	dyn, err := dynamic.NewForConfig(s.Cluster.RESTConfig())
	if err != nil {
		return err
	}
	var objs []*unstructured.Unstructured
	for _, key := range HelmClusterSPIFFEIDs {
		if slices.Contains(s.opts.HelmDisabledClusterSPIFFEIDs, key) {
			continue
		}
		meta := s.helmMeta(HelmObjectName(s.Namespace, key), "")
		meta.Labels[HelmClassNameLabel] = s.ClassName
		objs = append(objs, helmObject("ClusterSPIFFEID", meta, s.helmClusterSPIFFEIDSpec(key)))
	}
	for _, key := range slices.Sorted(maps.Keys(s.opts.HelmFederatedTrustDomains)) {
		ftd := s.opts.HelmFederatedTrustDomains[key]
		profile := map[string]any{"type": "https_web"}
		if ftd.EndpointSPIFFEID != "" {
			profile = map[string]any{"type": "https_spiffe", "endpointSPIFFEID": ftd.EndpointSPIFFEID}
		}
		spec := map[string]any{
			"className": s.ClassName, "trustDomain": ftd.TrustDomain,
			"bundleEndpointURL": ftd.BundleEndpointURL, "bundleEndpointProfile": profile,
		}
		if ftd.TrustDomainBundle != "" {
			spec["trustDomainBundle"] = ftd.TrustDomainBundle
		}
		objs = append(objs, helmObject("ClusterFederatedTrustDomain", s.helmMeta(HelmObjectName(s.Namespace, key), ""), spec))
	}
	for _, obj := range objs {
		res := dyn.Resource(schema.GroupVersionResource{
			Group: "spire.spiffe.io", Version: "v1alpha1", Resource: map[string]string{
				"ClusterSPIFFEID": "clusterspiffeids", "ClusterFederatedTrustDomain": "clusterfederatedtrustdomains",
			}[obj.GetKind()],
		})
		_, err := res.Create(ctx, obj, metav1.CreateOptions{FieldManager: HelmFieldManager})
		if apierrors.IsAlreadyExists(err) {
			var cur *unstructured.Unstructured
			if cur, err = res.Get(ctx, obj.GetName(), metav1.GetOptions{}); err == nil {
				obj.SetResourceVersion(cur.GetResourceVersion())
				_, err = res.Update(ctx, obj, metav1.UpdateOptions{FieldManager: HelmFieldManager})
			}
		}
		if err != nil {
			return fmt.Errorf("writing %s %s as Helm would (are the spire.spiffe.io CRDs installed?): %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

func helmObject(kind string, meta metav1.ObjectMeta, spec map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "spire.spiffe.io/v1alpha1", "kind": kind, "spec": spec}}
	obj.SetName(meta.Name)
	obj.SetLabels(meta.Labels)
	obj.SetAnnotations(meta.Annotations)
	return obj
}
