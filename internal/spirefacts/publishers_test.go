package spirefacts

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestPublishers reads the object-storage BundlePublishers as the chart
// renders them (one object per plugin type, `bundlePublisher.awsS3` and
// `bundlePublisher.gcpCloudStorage`; azure_blob through the chart's
// unsupportedBuiltInPlugins) and as a list of one-key objects, and derives
// the URL each plugin's client writes to.
func TestPublishers(t *testing.T) {
	for name, tc := range map[string]struct {
		plugins string
		want    []Publisher
	}{
		"chart object form, every cloud": {
			plugins: `{"BundlePublisher": {
			  "k8s_configmap": {"plugin_data": {"clusters": [{"chart-internal": {"configmap_name": "spire-bundle"}}]}},
			  "aws_s3": {"plugin_data": {"endpoint": "", "region": "eu-west-1", "bucket": "td-bundles", "object_key": "east/bundle.json", "format": "spiffe"}},
			  "gcp_cloudstorage": {"plugin_data": {"bucket_name": "td-bundles", "object_name": "east bundle.json", "format": "spiffe"}},
			  "azure_blob": {"plugin_data": {"storage_account_name": "tdbundles", "container_name": "spire", "blob_name": "east.json", "format": "pem", "refresh_hint": "1m"}}
			}}`,
			want: []Publisher{
				{Type: PublisherAWSS3, Bucket: "td-bundles", Object: "east/bundle.json", Region: "eu-west-1", Format: "spiffe",
					URL: "https://td-bundles.s3.eu-west-1.amazonaws.com/east/bundle.json"},
				{Type: PublisherGCSBucket, Bucket: "td-bundles", Object: "east bundle.json", Format: "spiffe",
					URL: "https://storage.googleapis.com/td-bundles/east%20bundle.json"},
				{Type: PublisherAzureBlob, Bucket: "spire", Object: "east.json", StorageAccount: "tdbundles", Format: "pem", RefreshHint: "1m",
					URL: "https://tdbundles.blob.core.windows.net/spire/east.json"},
			},
		},
		"list form, S3-compatible endpoint and a dotted bucket": {
			plugins: `{"BundlePublisher": [
			  {"aws_s3": {"plugin_data": {"endpoint": "https://127.0.0.1:9000/", "bucket": "lab", "object_key": "/west.json", "format": "spiffe", "refresh_hint": "10s"}}},
			  {"aws_s3": {"plugin_data": {"bucket": "bundles.example.org", "object_key": "k", "format": "spiffe"}}}
			]}`,
			want: []Publisher{
				{Type: PublisherAWSS3, Bucket: "lab", Object: "/west.json", Endpoint: "https://127.0.0.1:9000/", Format: "spiffe", RefreshHint: "10s",
					URL: "https://127.0.0.1:9000/lab/west.json"},
				{Type: PublisherAWSS3, Bucket: "bundles.example.org", Object: "k", Format: "spiffe",
					URL: "https://s3.amazonaws.com/bundles.example.org/k"},
			},
		},
		"incomplete configuration has no URL": {
			plugins: `{"BundlePublisher": {"azure_blob": {"plugin_data": {"container_name": "c", "blob_name": "b"}}}}`,
			want:    []Publisher{{Type: PublisherAzureBlob, Bucket: "c", Object: "b"}},
		},
		"only the ConfigMap publisher": {
			plugins: `{"BundlePublisher": [{"k8s_configmap": {"plugin_data": {}}}], "Notifier": [{"k8sbundle": {"plugin_data": {}}}]}`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			var plugins map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tc.plugins), &plugins); err != nil {
				t.Fatal(err)
			}
			got := publishers(plugins)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d publishers %+v, want %d", len(got), got, len(tc.want))
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("publisher %d:\n got %+v\nwant %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestHelmInstallationPublishers: the chart's server configuration with the
// S3 publisher beside its default ConfigMap publisher reports both; an
// operator's install reports none.
func TestHelmInstallationPublishers(t *testing.T) {
	objs := chartObjects()
	objs.Server = helmConfigMap("spire-server", "spire-server", map[string]any{HelmServerConfigKey: `{
	  "server": {"trust_domain": "east.example.org"},
	  "plugins": {"BundlePublisher": {
	    "k8s_configmap": {"plugin_data": {"clusters": [{"chart-internal": {"namespace": "spire-system", "configmap_name": "spire-bundle", "configmap_key": "bundle.spiffe"}}]}},
	    "aws_s3": {"plugin_data": {"region": "us-east-2", "bucket": "b", "object_key": "east.json", "format": "spiffe"}}}}}`})
	in, err := HelmInstallation(objs)
	if err != nil {
		t.Fatal(err)
	}
	if in.BundleConfigMap != "spire-bundle" || len(in.Publishers) != 1 || in.Publishers[0].URL != "https://b.s3.us-east-2.amazonaws.com/east.json" {
		t.Fatalf("got ConfigMap %q and publishers %+v", in.BundleConfigMap, in.Publishers)
	}
	// The operator renders no BundlePublisher: it publishes nowhere.
	ztwim := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"trustDomain": "op.example.org"}}}
	operator, err := (&Facts{ZTWIM: ztwim}).Installation("c", "", OperatorDefaults{})
	if err != nil || len(operator.Publishers) != 0 {
		t.Fatalf("operator install: %+v, %v", operator, err)
	}
}
