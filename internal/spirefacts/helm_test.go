package spirefacts

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// The objects of release "spire" in namespace "spire-server", laid out as the
// chart's defaults with federation and its Ingress enabled and the
// recommended namespace layout (bundle in spire-system).
const chartServerConf = `{
  "server": {
    "bind_port": "8081",
    "trust_domain": "east.example.org",
    "federation": {
      "bundle_endpoint": {"address": "0.0.0.0", "port": 8443, "refresh_hint": "5m", "profile": [{"https_spiffe": {}}]}
    }
  },
  "plugins": {
    "BundlePublisher": [{"k8s_configmap": {"plugin_data": {"clusters": [{"chart-internal": {
      "format": "spiffe", "namespace": "spire-system", "configmap_name": "spire-bundle", "configmap_key": "bundle.spiffe"
    }}]}}}],
    "KeyManager": [{"disk": {"plugin_data": {"keys_path": "/run/spire/data/keys.json"}}}]
  }
}`

const chartControllerManagerConf = `apiVersion: spire.spiffe.io/v1alpha1
kind: ControllerManagerConfig
clusterName: east
trustDomain: east.example.org
spireServerSocketPath: "/tmp/spire-server/private/api.sock"
className: "spire-server-spire"
watchClassless: false
`

func helmConfigMap(namespace, name string, data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"namespace": namespace, "name": name,
			"labels": map[string]any{OperatorManagedByLabel: HelmManagedByValue},
			"annotations": map[string]any{
				HelmReleaseNameAnnotation: "spire", HelmReleaseNamespaceAnnotation: "spire-server",
			},
		},
		"data": data,
	}}
}

func chartObjects() HelmObjects {
	return HelmObjects{
		Server:            helmConfigMap("spire-server", "spire-server", map[string]any{HelmServerConfigKey: chartServerConf}),
		ControllerManager: helmConfigMap("spire-server", "spire-controller-manager", map[string]any{HelmControllerManagerConfigKey: chartControllerManagerConf}),
		FederationIngress: &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
			"rules": []any{map[string]any{"host": "spire-server-federation.east.example.org"}},
		}}},
	}
}

func TestHelmInstallation(t *testing.T) {
	got, err := HelmInstallation(chartObjects())
	if err != nil {
		t.Fatal(err)
	}
	want := Installation{
		Install: InstallHelm, Release: "spire", ReleaseNamespace: "spire-server",
		TrustDomain: "east.example.org", ClusterName: "east",
		BundleConfigMap: "spire-bundle", BundleNamespace: "spire-system", BundleKey: "bundle.spiffe",
		FederationProfile: "https_spiffe", BundleEndpointPort: 8443,
		BundleEndpointURL: "https://spire-server-federation.east.example.org",
		EndpointSPIFFEID:  "spiffe://east.example.org/spire/server",
		ClassName:         "spire-server-spire",
		ServerNamespace:   "spire-server", ServerPod: "spire-server-0", ServerContainer: "spire-server",
	}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("HelmInstallation =\n%+v\nwant\n%+v", *got, want)
	}
}

func TestHelmInstallationVariants(t *testing.T) {
	// Without federation the Ingress says nothing; without the controller
	// manager's ConfigMap the class name is the chart's default.
	objs := chartObjects()
	objs.Server = helmConfigMap("spire", "spire-server", map[string]any{HelmServerConfigKey: `{"server": {"trust_domain": "west.example.org"},
	  "plugins": {"Notifier": [{"k8sbundle": {"plugin_data": {"namespace": "", "config_map": "west-bundle"}}}]}}`})
	objs.ControllerManager = nil
	got, err := HelmInstallation(objs)
	if err != nil {
		t.Fatal(err)
	}
	if got.FederationProfile != "" || got.BundleEndpointURL != "" || got.BundleEndpointPort != 0 {
		t.Errorf("without federation: profile %q, URL %q, port %d; want none", got.FederationProfile, got.BundleEndpointURL, got.BundleEndpointPort)
	}
	if got.ClassName != "spire-server-spire" {
		t.Errorf("default ClassName = %q, want <release namespace>-<release>", got.ClassName)
	}
	if got.BundleKey != "bundle.crt" {
		t.Errorf("the notifier's default key: BundleKey = %q, want bundle.crt", got.BundleKey)
	}
	if got.BundleConfigMap != "west-bundle" || got.BundleNamespace != "spire" {
		t.Errorf("Notifier bundle = %s/%s, want spire/west-bundle", got.BundleNamespace, got.BundleConfigMap)
	}

	// https_web with the profile as one object, port unset.
	objs.Server = helmConfigMap("spire", "spire-server", map[string]any{HelmServerConfigKey: `{"server": {"trust_domain": "west.example.org",
	  "federation": {"bundle_endpoint": {"profile": {"https_web": {"serving_cert_file": {}}}}}}}`})
	if got, err = HelmInstallation(objs); err != nil {
		t.Fatal(err)
	}
	if got.FederationProfile != "https_web" || got.BundleEndpointPort != 8443 {
		t.Errorf("https_web: profile %q port %d", got.FederationProfile, got.BundleEndpointPort)
	}

	for name, conf := range map[string]string{
		"not JSON":        `server { trust_domain = "x" }`,
		"no trust domain": `{"server": {}}`,
	} {
		objs.Server = helmConfigMap("spire", "spire-server", map[string]any{HelmServerConfigKey: conf})
		_, err := HelmInstallation(objs)
		if err == nil || !strings.Contains(err.Error(), `ConfigMap spire/spire-server key "server.conf"`) {
			t.Errorf("%s: error %v does not name the ConfigMap and key", name, err)
		}
	}
}

func TestPickHelm(t *testing.T) {
	o := chartObjects()
	other := helmConfigMap("spire-server", "unrelated", map[string]any{"x": "y"})
	unlabelled := o.Server.DeepCopy()
	unlabelled.SetLabels(nil)
	unlabelled.SetNamespace("elsewhere")
	objs, err := pickHelm("east", []unstructured.Unstructured{*other, *o.ControllerManager, *unlabelled, *o.Server})
	if err != nil || objs == nil {
		t.Fatalf("pickHelm = %v, %v", objs, err)
	}
	if objs.Server.GetName() != "spire-server" || objs.ControllerManager == nil || objs.ControllerManager.GetName() != "spire-controller-manager" {
		t.Errorf("pickHelm chose %v and %v", objs.Server.GetName(), objs.ControllerManager)
	}

	if objs, err := pickHelm("east", []unstructured.Unstructured{*other}); objs != nil || err != nil {
		t.Errorf("pickHelm without a server = %v, %v; want nil, nil", objs, err)
	}

	second := o.Server.DeepCopy()
	second.SetNamespace("spire-two")
	_, err = pickHelm("east", []unstructured.Unstructured{*o.Server, *second})
	var amb *AmbiguousError
	if !errors.As(err, &amb) || !strings.Contains(err.Error(), "spire-server/spire-server, spire-two/spire-server") {
		t.Errorf("pickHelm with two servers = %v, want an AmbiguousError naming both", err)
	}
}

func TestHelmNames(t *testing.T) {
	if got := HelmControllerManagerName("spire-server"); got != "spire-controller-manager" {
		t.Errorf("HelmControllerManagerName(spire-server) = %q", got)
	}
	if got := HelmControllerManagerName("prod"); got != "prod-controller-manager" {
		t.Errorf("HelmControllerManagerName(prod) = %q", got)
	}
	if got := HelmFederationIngressName("spire-server"); got != "spire-server-federation" {
		t.Errorf("HelmFederationIngressName = %q", got)
	}
}

func TestOperatorInstallation(t *testing.T) {
	d := OperatorDefaults{Namespace: "ztwim", ClassName: "ztwim-spire", Pod: "spire-server-0", Container: "spire-server"}
	f := Facts{
		ZTWIM: object(map[string]any{"trustDomain": "east.example.org", "clusterName": "east"}),
		SpireServer: object(map[string]any{"federation": map[string]any{
			"bundleEndpoint": map[string]any{"profile": "https_spiffe", "port": int64(8443)},
		}}),
	}
	got, err := f.Installation("east", "https://federation.east.example.org", d)
	if err != nil {
		t.Fatal(err)
	}
	want := Installation{
		Install: InstallOperator, TrustDomain: "east.example.org", ClusterName: "east",
		BundleConfigMap: DefaultBundleConfigMap, BundleNamespace: "ztwim", BundleKey: "bundle.crt",
		FederationProfile: "https_spiffe", BundleEndpointPort: 8443,
		BundleEndpointURL: "https://federation.east.example.org", EndpointSPIFFEID: "spiffe://east.example.org/spire/server",
		ClassName: "ztwim-spire", ServerNamespace: "ztwim", ServerPod: "spire-server-0", ServerContainer: "spire-server",
	}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("Installation =\n%+v\nwant\n%+v", *got, want)
	}
	_, err = (&Facts{SpireServer: object(map[string]any{})}).Installation("east", "", d)
	var noTD *NoTrustDomainError
	if !errors.As(err, &noTD) {
		t.Errorf("Installation without a trust domain = %v, want a NoTrustDomainError", err)
	}
}

func TestNotFoundErrorNamesWhatWasLookedFor(t *testing.T) {
	for install, want := range map[string][]string{
		InstallAuto:     {"ZeroTrustWorkloadIdentityManager", `key "server.conf"`},
		InstallOperator: {"ZeroTrustWorkloadIdentityManager"},
		InstallHelm:     {`key "server.conf" in namespace "spire-server"`, "app.kubernetes.io/managed-by=Helm"},
	} {
		msg := (&NotFoundError{Cluster: "east", Install: install, HelmNamespace: "spire-server"}).Error()
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q does not name %q", install, msg, w)
			}
		}
		if install == InstallOperator && strings.Contains(msg, "server.conf") {
			t.Errorf("operator: %q names the chart", msg)
		}
	}
}

// TestRefusedLookupIsNotANotFound: a refused list of the chart's ConfigMaps
// stays a 403, with what was looked for, and is no NotFoundError: a missing
// permission is never reported as a missing installation.
func TestRefusedLookupIsNotANotFound(t *testing.T) {
	refusal := &kube.OpError{Cluster: "west", Verb: "list", Kind: kube.ConfigMap, Namespace: "spire-server",
		Err: apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", errors.New("no"))}
	err := refusedHelmLookup("west", "spire-server", refusal)
	var notFound *NotFoundError
	if errors.As(err, &notFound) {
		t.Errorf("a refusal is reported as a NotFoundError: %v", err)
	}
	var op *kube.OpError
	if !apierrors.IsForbidden(err) || !errors.As(err, &op) || op.Namespace != "spire-server" {
		t.Errorf("the refusal is lost: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "none of the operator's objects") || !strings.Contains(msg, `namespace "spire-server" was refused`) {
		t.Errorf("the error does not say what was looked for: %q", msg)
	}
}
