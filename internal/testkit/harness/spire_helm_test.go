package harness

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
)

// bundlePublisherFieldManager is the field manager SPIRE's BundlePublisher
// "k8s_configmap" applies the ConfigMap under ("spire-bundlepublisher-" and
// the plugin's name, in its client.go).
const bundlePublisherFieldManager = "spire-bundlepublisher-k8s_configmap"

// checkPublishedBundle checks that real SPIRE's BundlePublisher wrote s's
// bundle ConfigMap as the chart's defaults have it (SPIFFE bundle JSON under
// bundle.spiffe and nothing else, applied under the plugin's own field
// manager, the authorities `bundle show` prints) and logs it.
func checkPublishedBundle(ctx context.Context, t *testing.T, s *Spire) {
	t.Helper()
	cm, err := clientset(t, s.Cluster).CoreV1().ConfigMaps(s.BundleNamespace).Get(ctx, s.BundleConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var managers []string
	for _, f := range cm.ManagedFields {
		managers = append(managers, f.Manager+" ("+string(f.Operation)+")")
	}
	t.Logf("ConfigMap %s/%s written by %s, field managers %v:\n%s: %s", cm.Namespace, cm.Name, s.BundlePlugin(),
		managers, HelmBundleKey, cm.Data[HelmBundleKey])
	if s.BundleKey != HelmBundleKey || len(cm.Data) != 1 {
		t.Fatalf("bundle key %q, ConfigMap keys %d; want only %s", s.BundleKey, len(cm.Data), HelmBundleKey)
	}
	if len(cm.ManagedFields) != 1 || cm.ManagedFields[0].Manager != bundlePublisherFieldManager ||
		cm.ManagedFields[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Fatalf("ConfigMap %s/%s field managers %v; want only %s (Apply): nothing but SPIRE writes it",
			cm.Namespace, cm.Name, managers, bundlePublisherFieldManager)
	}
	shown, err := s.BundleShow(ctx, "spiffe")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := parseBundle(t, s.TrustDomain, shown)
	got, _ := parseBundle(t, s.TrustDomain, []byte(cm.Data[HelmBundleKey]))
	if g, w := trustbundle.X509AuthoritiesPEM(got), trustbundle.X509AuthoritiesPEM(want); g != w || !strings.Contains(g, "BEGIN") {
		t.Fatalf("%s holds other X.509 authorities than `bundle show`:\n%s\nwant\n%s", HelmBundleKey, g, w)
	}
}
