package bundlesource_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
)

// TestFromConfigMap: with no key asked for, either key SPIRE writes is read;
// where the ConfigMap cannot say which bundle it holds (neither key, two
// keys that disagree, a value that is not a bundle) the error names the
// ConfigMap, its keys, who wrote them and the plugin that should.
func TestFromConfigMap(t *testing.T) {
	now := time.Now()
	ca := bundletest.NewCA(t, td, now.Add(-time.Hour), now.Add(time.Hour))
	other := bundletest.NewCA(t, td, now.Add(-time.Hour), now.Add(time.Hour))
	spiffe, pem := bundletest.BundleJSON(t, td, ca), string(bundletest.PEM(ca))
	writers := map[string]string{bundlesource.KeySPIFFE: bundlesource.PluginPublisher, bundlesource.KeyPEM: `field manager "spire-server"`}
	plugins := []string{`BundlePublisher "k8s_configmap"`, `Notifier "k8sbundle"`}
	cases := []struct {
		name      string
		data      map[string]string
		key       string
		wantKey   string
		wantErr   []string
		permanent bool
	}{
		{name: "publisher only", data: map[string]string{"bundle.spiffe": spiffe}, wantKey: "bundle.spiffe"},
		{name: "notifier only", data: map[string]string{"bundle.crt": pem}, wantKey: "bundle.crt"},
		{name: "both agreeing", data: map[string]string{"bundle.spiffe": spiffe, "bundle.crt": pem}, wantKey: "bundle.spiffe"},
		{name: "empty spiffe ignored", data: map[string]string{"bundle.crt": pem, "bundle.spiffe": " "}, wantKey: "bundle.crt"},
		{name: "explicit", data: map[string]string{"ca.pem": pem, "bundle.spiffe": "{}"}, key: "ca.pem", wantKey: "ca.pem"},
		{
			name: "both disagreeing", data: map[string]string{"bundle.spiffe": spiffe, "bundle.crt": string(bundletest.PEM(other))},
			wantErr: append([]string{"keys bundle.spiffe (written by BundlePublisher", `bundle.crt (written by field manager "spire-server")`,
				"ConfigMap spire-system/spire-bundle hold different X.509 authorities", "Set config_map.key"}, plugins...),
			permanent: true,
		},
		{
			name: "neither", data: map[string]string{"other": "x"},
			wantErr: append([]string{"neither bundle.spiffe nor bundle.crt is set in ConfigMap spire-system/spire-bundle (it has keys other)"}, plugins...),
		},
		{name: "empty", wantErr: append([]string{"(it has no keys)"}, plugins...)},
		{
			name: "not a bundle", data: map[string]string{"bundle.spiffe": "garbage", "bundle.crt": pem},
			wantErr:   append([]string{`key bundle.spiffe of ConfigMap spire-system/spire-bundle (written by BundlePublisher "k8s_configmap") is not a bundle`}, plugins...),
			permanent: true,
		},
		{
			name: "explicit missing", data: map[string]string{"bundle.crt": pem}, key: "ca.pem",
			wantErr: append([]string{"key ca.pem is not set in ConfigMap spire-system/spire-bundle (it has keys bundle.crt)"}, plugins...),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, key, err := bundlesource.FromConfigMap(td, "spire-system/spire-bundle", tc.data, tc.key, writers)
			if len(tc.wantErr) > 0 {
				if err == nil || bundlesource.IsPermanent(err) != tc.permanent {
					t.Fatalf("error = %v (permanent %v), want one (permanent %v)", err, bundlesource.IsPermanent(err), tc.permanent)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil || key != tc.wantKey || !b.HasX509Authority(ca.Cert) {
				t.Fatalf("FromConfigMap = key %q, %v; want key %q with the CA", key, err, tc.wantKey)
			}
		})
	}
}

// TestWriters: the BundlePublisher is told by its field manager; anyone
// else is named by theirs.
func TestWriters(t *testing.T) {
	cm := &unstructured.Unstructured{}
	cm.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: bundlesource.PublisherFieldManager, Operation: metav1.ManagedFieldsOperationApply,
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:bundle.spiffe":{}}}`)}},
		{Manager: "spire-server", Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{".":{},"f:bundle.crt":{}}}`)}},
	})
	got := bundlesource.Writers(cm)
	if got["bundle.spiffe"] != `BundlePublisher "k8s_configmap"` || got["bundle.crt"] != `field manager "spire-server"` || len(got) != 2 {
		t.Fatalf("Writers = %v", got)
	}
}
