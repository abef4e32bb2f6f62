package spirefacts

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// What the SPIFFE project's hardened Helm chart (spiffe/helm-charts-hardened,
// chart `spire`, subchart `spire-server`) puts in a cluster, as its templates
// name it. The chart keeps no custom resource describing the install: the
// trust domain and the federation bundle endpoint are only in the server's
// configuration, a ConfigMap.
const (
	// HelmManagedByValue is the app.kubernetes.io/managed-by label Helm puts
	// on every object of a release (OperatorManagedByLabel is the same key).
	HelmManagedByValue = "Helm"
	// HelmReleaseNameAnnotation and HelmReleaseNamespaceAnnotation are the
	// annotations Helm puts on every object of a release.
	HelmReleaseNameAnnotation      = "meta.helm.sh/release-name"
	HelmReleaseNamespaceAnnotation = "meta.helm.sh/release-namespace"
	// HelmServerConfigKey is the key of the server ConfigMap (named as the
	// server StatefulSet, the chart's server fullname) that holds SPIRE's
	// configuration, rendered as JSON.
	HelmServerConfigKey = "server.conf"
	// HelmControllerManagerConfigKey is the key of the controller manager's
	// ConfigMap (<fullname without "-server">-controller-manager) that holds
	// its ControllerManagerConfig, className included.
	HelmControllerManagerConfigKey = "controller-manager-config.yaml"
	// HelmServerContainer is the server container: the subchart's name,
	// which nameOverride does not change.
	HelmServerContainer = "spire-server"
	// HelmClassNameLabel is the label the chart puts on the ClusterSPIFFEIDs it creates.
	HelmClassNameLabel = "spire.spiffe.io/class-name"
	// HelmDefaultNamespace is where the chart's documentation installs it
	// (`helm upgrade --install -n spire-server spire spire`) and where its
	// recommended layout puts the server whatever the release's namespace.
	HelmDefaultNamespace = "spire-server"
	// helmDefaultBundleEndpointPort is federation.bundleEndpoint.port's default.
	helmDefaultBundleEndpointPort = 8443
)

// The install kinds an Installation comes from, and "auto", which asks for
// whichever the cluster has.
const (
	InstallAuto     = "auto"
	InstallOperator = "operator"
	InstallHelm     = "helm"
)

// Installs lists the values a configuration may choose, auto first.
var Installs = []string{InstallAuto, InstallOperator, InstallHelm}

// Installation is what a peer and the provider's SPIRE resources need to know
// of one cluster's SPIRE server, the same whichever way SPIRE was installed.
// Strings are "" and BundleEndpointPort 0 where the install does not say.
type Installation struct {
	// Install is InstallOperator or InstallHelm.
	Install string
	// Release and ReleaseNamespace name the Helm release; "" for the operator.
	Release, ReleaseNamespace string

	TrustDomain, ClusterName string
	// BundleConfigMap is the ConfigMap SPIRE publishes its trust bundle to,
	// in BundleNamespace, under BundleKey: the BundlePublisher
	// "k8s_configmap"'s configmap_key (bundle.spiffe, SPIFFE bundle JSON,
	// with the chart's defaults) or the Notifier "k8sbundle"'s config_map_key
	// (bundle.crt, PEM, by default; the operator renders this notifier).
	BundleConfigMap, BundleNamespace, BundleKey string
	// FederationProfile is https_spiffe or https_web; "" without federation.
	FederationProfile  string
	BundleEndpointPort int64
	BundleEndpointURL  string
	EndpointSPIFFEID   string
	// ClassName is spire-controller-manager's className: it ignores
	// ClusterFederatedTrustDomains and ClusterSPIFFEIDs of other classes.
	ClassName string
	// ServerNamespace, ServerPod and ServerContainer are where `spire-server`
	// commands run.
	ServerNamespace, ServerPod, ServerContainer string
	// Publishers are the server's object-storage BundlePublishers; none
	// for the operator, whose server.conf renders no BundlePublisher.
	Publishers []Publisher
}

// HelmObjects are the objects of one chart release that Helm facts are read
// from. Server is required; the others may be nil.
type HelmObjects struct {
	// Server is the ConfigMap holding HelmServerConfigKey.
	Server *unstructured.Unstructured
	// ControllerManager is the ConfigMap holding HelmControllerManagerConfigKey.
	ControllerManager *unstructured.Unstructured
	// FederationIngress is the Ingress <fullname>-federation the chart
	// creates with federation.ingress.enabled.
	FederationIngress *unstructured.Unstructured
}

// HelmControllerManagerName is the name of the controller manager's ConfigMap
// for the server fullname server: the chart trims a "-server" suffix first.
func HelmControllerManagerName(server string) string {
	return strings.TrimSuffix(server, "-server") + "-controller-manager"
}

// HelmFederationIngressName is the name of the federation Ingress for the
// server fullname server.
func HelmFederationIngressName(server string) string { return server + "-federation" }

// IsHelmServerConfigMap reports whether cm is a chart's server ConfigMap:
// it holds HelmServerConfigKey and Helm manages it.
func IsHelmServerConfigMap(cm *unstructured.Unstructured) bool {
	if cm == nil || cm.GetLabels()[OperatorManagedByLabel] != HelmManagedByValue {
		return false
	}
	_, ok, _ := unstructured.NestedString(cm.Object, "data", HelmServerConfigKey)
	return ok
}

// serverConf is the part of SPIRE's server configuration the facts come from.
type serverConf struct {
	Server struct {
		TrustDomain string `json:"trust_domain"`
		Federation  *struct {
			BundleEndpoint *struct {
				Port    int64           `json:"port"`
				Profile json.RawMessage `json:"profile"`
			} `json:"bundle_endpoint"`
		} `json:"federation"`
	} `json:"server"`
	Plugins map[string]json.RawMessage `json:"plugins"`
}

type controllerManagerConf struct {
	ClassName   string `json:"className"`
	TrustDomain string `json:"trustDomain"`
	ClusterName string `json:"clusterName"`
}

// HelmInstallation reads the facts of a chart release from its objects.
// Errors name the object and key at fault.
func HelmInstallation(objs HelmObjects) (*Installation, error) {
	cm := objs.Server
	if cm == nil {
		return nil, fmt.Errorf("no server ConfigMap with key %q", HelmServerConfigKey)
	}
	where := fmt.Sprintf("ConfigMap %s/%s key %q", cm.GetNamespace(), cm.GetName(), HelmServerConfigKey)
	raw, _, _ := unstructured.NestedString(cm.Object, "data", HelmServerConfigKey)
	var conf serverConf
	if err := json.Unmarshal([]byte(raw), &conf); err != nil {
		return nil, fmt.Errorf("%s is not the JSON the chart renders: %w", where, err)
	}
	in := &Installation{
		Install:          InstallHelm,
		Release:          cm.GetAnnotations()[HelmReleaseNameAnnotation],
		ReleaseNamespace: cm.GetAnnotations()[HelmReleaseNamespaceAnnotation],
		TrustDomain:      conf.Server.TrustDomain,
		ServerNamespace:  cm.GetNamespace(),
		// The chart names ConfigMap and StatefulSet alike; a StatefulSet's
		// first pod is <name>-0.
		ServerPod:       cm.GetName() + "-0",
		ServerContainer: HelmServerContainer,
	}
	if fed := conf.Server.Federation; fed != nil && fed.BundleEndpoint != nil {
		in.BundleEndpointPort = fed.BundleEndpoint.Port
		if in.BundleEndpointPort == 0 {
			in.BundleEndpointPort = helmDefaultBundleEndpointPort
		}
		profile, err := bundleEndpointProfile(fed.BundleEndpoint.Profile)
		if err != nil {
			return nil, fmt.Errorf("%s: server.federation.bundle_endpoint.profile: %w", where, err)
		}
		in.FederationProfile = profile
	}
	in.BundleConfigMap, in.BundleNamespace, in.BundleKey = bundlePublished(conf.Plugins)
	in.Publishers = publishers(conf.Plugins)
	if in.BundleNamespace == "" && in.BundleConfigMap != "" {
		in.BundleNamespace = cm.GetNamespace()
	}
	if cmc := objs.ControllerManager; cmc != nil {
		rawCM, _, _ := unstructured.NestedString(cmc.Object, "data", HelmControllerManagerConfigKey)
		var cmConf controllerManagerConf
		if err := yaml.Unmarshal([]byte(rawCM), &cmConf); err != nil {
			return nil, fmt.Errorf("ConfigMap %s/%s key %q: %w", cmc.GetNamespace(), cmc.GetName(), HelmControllerManagerConfigKey, err)
		}
		in.ClassName = cmConf.ClassName
		in.ClusterName = cmConf.ClusterName
		if in.TrustDomain == "" {
			in.TrustDomain = cmConf.TrustDomain
		}
	}
	if in.ClassName == "" && in.Release != "" && in.ReleaseNamespace != "" {
		// The chart's default className when controllerManager.className is
		// unset: <release namespace>-<release name> (crNameOverride aside).
		in.ClassName = in.ReleaseNamespace + "-" + in.Release
	}
	if in.TrustDomain == "" {
		return nil, fmt.Errorf("%s sets no server.trust_domain", where)
	}
	in.EndpointSPIFFEID = EndpointSPIFFEID(in.TrustDomain)
	if in.FederationProfile != "" {
		in.BundleEndpointURL = ingressURL(objs.FederationIngress)
	}
	return in, nil
}

// bundleEndpointProfile reads the profile as the chart renders it (a list
// of one-key objects) or as one object; it is https_spiffe when unset, as
// in SPIRE.
func bundleEndpointProfile(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "https_spiffe", nil
	}
	var blocks []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &blocks); err != nil {
		var one map[string]json.RawMessage
		if err := json.Unmarshal(raw, &one); err != nil {
			return "", err
		}
		blocks = []map[string]json.RawMessage{one}
	}
	for _, b := range blocks {
		for name := range b {
			return name, nil
		}
	}
	return "https_spiffe", nil
}

// bundlePublished is the ConfigMap the server's BundlePublisher
// "k8s_configmap" (the chart's default, cluster "chart-internal") or its
// Notifier "k8sbundle" writes the bundle to, its namespace ("" for the
// plugin's default, the server's own) and the key.
func bundlePublished(plugins map[string]json.RawMessage) (name, namespace, key string) {
	for _, d := range pluginData(plugins["BundlePublisher"], "k8s_configmap") {
		var pd struct {
			Clusters []map[string]struct {
				Namespace     string `json:"namespace"`
				ConfigMapName string `json:"configmap_name"`
				ConfigMapKey  string `json:"configmap_key"`
				KubeConfig    string `json:"kubeconfig_path"`
			} `json:"clusters"`
		}
		if json.Unmarshal(d, &pd) != nil {
			continue
		}
		for _, c := range pd.Clusters {
			// One entry per cluster; the local one has no kubeconfig.
			for _, k := range sortedKeys(c) {
				if c[k].KubeConfig == "" && c[k].ConfigMapName != "" {
					return c[k].ConfigMapName, c[k].Namespace, c[k].ConfigMapKey
				}
			}
		}
	}
	for _, d := range pluginData(plugins["Notifier"], "k8sbundle") {
		var pd struct {
			Namespace    string `json:"namespace"`
			ConfigMap    string `json:"config_map"`
			ConfigMapKey string `json:"config_map_key"`
		}
		if json.Unmarshal(d, &pd) == nil && pd.ConfigMap != "" {
			if pd.ConfigMapKey == "" {
				pd.ConfigMapKey = NotifierBundleKey
			}
			return pd.ConfigMap, pd.Namespace, pd.ConfigMapKey
		}
	}
	return "", "", ""
}

// pluginData returns the plugin_data of every plugin named name in one plugin
// type's section, a list of one-key objects or one object.
func pluginData(section json.RawMessage, name string) []json.RawMessage {
	if len(section) == 0 {
		return nil
	}
	var blocks []map[string]json.RawMessage
	if err := json.Unmarshal(section, &blocks); err != nil {
		var one map[string]json.RawMessage
		if json.Unmarshal(section, &one) != nil {
			return nil
		}
		blocks = []map[string]json.RawMessage{one}
	}
	var out []json.RawMessage
	for _, b := range blocks {
		if p, ok := b[name]; ok {
			var plugin struct {
				PluginData json.RawMessage `json:"plugin_data"`
			}
			if json.Unmarshal(p, &plugin) == nil && len(plugin.PluginData) > 0 {
				out = append(out, plugin.PluginData)
			}
		}
	}
	return out
}

// ingressURL is https://<host> of the Ingress's first rule or TLS host, or ""
// without one. The chart's Ingress passes TLS through to the bundle endpoint,
// so the URL has the Ingress's port, 443.
func ingressURL(ing *unstructured.Unstructured) string {
	if ing == nil {
		return ""
	}
	rules, _, _ := unstructured.NestedSlice(ing.Object, "spec", "rules")
	for _, r := range rules {
		if m, ok := r.(map[string]any); ok {
			if h, ok := m["host"].(string); ok && h != "" {
				return "https://" + h
			}
		}
	}
	tls, _, _ := unstructured.NestedSlice(ing.Object, "spec", "tls")
	for _, t := range tls {
		if m, ok := t.(map[string]any); ok {
			if hosts, ok := m["hosts"].([]any); ok {
				for _, h := range hosts {
					if s, ok := h.(string); ok && s != "" {
						return "https://" + s
					}
				}
			}
		}
	}
	return ""
}

// sortedKeys is the keys of m in order, so what is built from a map reads
// the same on every run.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
