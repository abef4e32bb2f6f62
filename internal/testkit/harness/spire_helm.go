package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// What a server started with SpireOptions.Helm looks like: release
// HelmSpireRelease of the SPIFFE Helm chart (spiffe/spire) installed in
// HelmSpireNamespace, whose objects are named after the chart's server
// fullname, HelmSpireServerName. The chart's default className is
// <release namespace>-<release name>. With global.spire.recommendations the
// chart publishes the bundle in the agents' namespace,
// HelmSpireBundleNamespace, not the server's.
const (
	HelmSpireNamespace  = "spire-server"
	HelmSpireRelease    = "spire"
	HelmSpireServerName = "spire-server"
	// HelmSpireBundleNamespace is where the chart, with
	// global.spire.recommendations, publishes the bundle ConfigMap: its
	// system namespace (global.spire.namespaces.system.name).
	HelmSpireBundleNamespace = "spire-system"
	// HelmFieldManager is the field manager Helm's writes are recorded under.
	HelmFieldManager = "helm"

	// The chart's default publisher, bundlePublisher.k8sConfigMap: SPIRE's
	// BundlePublisher "k8s_configmap" with one entry under `clusters`,
	// HelmBundlePublisherCluster, the cluster SPIRE runs in (in a real
	// cluster without kubeconfig_path: the in-cluster credentials), writing
	// format HelmBundleFormat under HelmBundleKey.
	HelmBundlePublisherCluster = "chart-internal"
	HelmBundleFormat           = "spiffe"
	HelmBundleKey              = "bundle.spiffe"
	// NotifierBundleKey is where SPIRE's Notifier "k8sbundle" writes PEM
	// certificates: its config_map_key, "bundle.crt" by default.
	NotifierBundleKey = "bundle.crt"
)

// publishes reports whether the bundle ConfigMap is written by SPIRE's
// BundlePublisher "k8s_configmap" (the chart's default), not its Notifier
// "k8sbundle".
func (s *Spire) publishes() bool { return s.opts.Helm && !s.opts.HelmNotifier }

// BundlePlugin names the SPIRE plugin that writes the bundle ConfigMap, for
// messages: `BundlePublisher "k8s_configmap"` or `Notifier "k8sbundle"`.
func (s *Spire) BundlePlugin() string {
	if s.publishes() {
		return `BundlePublisher "k8s_configmap"`
	}
	return `Notifier "k8sbundle"`
}

// writeBundlePlugin writes the plugin that publishes the bundle into the
// server's HCL configuration. Real SPIRE writes the ConfigMap; the plugin
// reaches the lab's API server through the cluster's kubeconfig, where a
// pod would use its in-cluster credentials.
func (s *Spire) writeBundlePlugin(b *strings.Builder) {
	if s.publishes() {
		fmt.Fprintf(b, "  BundlePublisher \"k8s_configmap\" {\n    plugin_data {\n      clusters %q {\n"+
			"        format = %q\n        namespace = %q\n        configmap_name = %q\n        configmap_key = %q\n"+
			"        kubeconfig_path = %q\n      }\n    }\n  }\n",
			HelmBundlePublisherCluster, HelmBundleFormat, s.BundleNamespace, s.BundleConfigMap, HelmBundleKey, s.Cluster.Kubeconfig)
		return
	}
	fmt.Fprintf(b, "  Notifier \"k8sbundle\" {\n    plugin_data {\n      namespace = %q\n      config_map = %q\n"+
		"      config_map_key = %q\n      kube_config_file_path = %q\n    }\n  }\n",
		s.BundleNamespace, s.BundleConfigMap, NotifierBundleKey, s.Cluster.Kubeconfig)
}

// helmBundlePlugins is the `plugins` section of server.conf as the chart
// renders it (JSON, each plugin type a list of one-key objects) for the
// plugins that publish the bundle: the ConfigMap's, and with S3Publisher
// SPIRE's "aws_s3" after it. The chart's entries carry no credentials
// (no kubeconfig_path, no access keys): in a real cluster they use the
// pod's.
func (s *Spire) helmBundlePlugins() map[string]any {
	plugins := map[string]any{"Notifier": []any{map[string]any{"k8sbundle": map[string]any{
		"plugin_data": map[string]any{"namespace": s.BundleNamespace, "config_map": s.BundleConfigMap},
	}}}}
	var publishers []any
	if s.publishes() {
		plugins = map[string]any{}
		publishers = append(publishers, map[string]any{"k8s_configmap": map[string]any{
			"plugin_data": map[string]any{"clusters": []any{map[string]any{HelmBundlePublisherCluster: map[string]any{
				"format": HelmBundleFormat, "namespace": s.BundleNamespace,
				"configmap_name": s.BundleConfigMap, "configmap_key": HelmBundleKey,
			}}}},
		}})
	}
	if p := s.opts.S3Publisher; p != nil {
		publishers = append(publishers, map[string]any{"aws_s3": map[string]any{"plugin_data": p.pluginData(s.TrustDomain)}})
	}
	if len(publishers) > 0 {
		plugins["BundlePublisher"] = publishers
	}
	return plugins
}

// HelmSpireClassName is the chart's default className for release
// HelmSpireRelease in namespace.
func HelmSpireClassName(namespace string) string { return namespace + "-" + HelmSpireRelease }

// applyHelmObjects writes, in Helm's place, the objects the provider reads of
// a chart install: the server's configuration ConfigMap (server.conf as JSON,
// as the chart renders it, saying what this server really runs: by default
// the BundlePublisher "k8s_configmap" writing bundle.spiffe into the system
// namespace, with HelmNotifier the Notifier "k8sbundle" writing the PEM
// bundle.crt there), the controller manager's ConfigMap, the chart's ClusterSPIFFEIDs and
// ClusterFederatedTrustDomains (applyHelmIdentities) and, with federation,
// the federation Ingress. Nothing routes the Ingress in a harness cluster: peers reach the
// endpoint at Spire.BundleEndpointURL, as with the operator's layout.
func (s *Spire) applyHelmObjects(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(s.Cluster.RESTConfig())
	if err != nil {
		return err
	}
	meta := func(name string) metav1.ObjectMeta { return s.helmMeta(name, s.Namespace) }
	server := map[string]any{"bind_port": "8081", "trust_domain": s.TrustDomain}
	if !s.opts.NoBundleEndpoint {
		profile := []any{map[string]any{"https_spiffe": map[string]any{}}}
		if s.opts.WebProfile {
			profile = []any{map[string]any{"https_web": map[string]any{"serving_cert_file": map[string]any{}}}}
		}
		server["federation"] = map[string]any{"bundle_endpoint": map[string]any{
			"address": "127.0.0.1", "port": s.bundlePort, "profile": profile,
		}}
	}
	conf, err := json.MarshalIndent(map[string]any{
		"server":  server,
		"plugins": s.helmBundlePlugins(),
	}, "", "  ")
	if err != nil {
		return err
	}
	cmConf, err := yaml.Marshal(map[string]any{
		"apiVersion": "spire.spiffe.io/v1alpha1", "kind": "ControllerManagerConfig",
		"clusterName": s.Cluster.Name, "trustDomain": s.TrustDomain, "className": s.ClassName,
	})
	if err != nil {
		return err
	}
	cms := []*corev1.ConfigMap{
		{ObjectMeta: meta(HelmSpireServerName), Data: map[string]string{"server.conf": string(conf)}},
		{ObjectMeta: meta(HelmSpireRelease + "-controller-manager"), Data: map[string]string{"controller-manager-config.yaml": string(cmConf)}},
	}
	for _, cm := range cms {
		if err := upsertConfigMap(ctx, cs, cm); err != nil {
			return err
		}
	}
	if err := s.applyHelmIdentities(ctx); err != nil {
		return err
	}
	if s.opts.NoBundleEndpoint {
		return nil
	}
	ing := &networkingv1.Ingress{
		ObjectMeta: meta(HelmSpireServerName + "-federation"),
		Spec:       networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: HelmSpireServerName + "-federation." + s.TrustDomain}}},
	}
	_, err = cs.NetworkingV1().Ingresses(s.Namespace).Create(ctx, ing, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = cs.NetworkingV1().Ingresses(s.Namespace).Update(ctx, ing, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("writing Ingress %s/%s: %w", s.Namespace, ing.Name, err)
	}
	return nil
}

func upsertConfigMap(ctx context.Context, cs kubernetes.Interface, cm *corev1.ConfigMap) error {
	_, err := cs.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = cs.CoreV1().ConfigMaps(cm.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("writing ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return nil
}
