package harness

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// What SpireOptions.S3Publisher writes: the real server.conf's aws_s3 block
// with static keys, the chart's rendering of it without them, after the
// ConfigMap publisher, and the roots spire-server runs with.
func TestSpireServerConfigS3Publisher(t *testing.T) {
	s3 := &S3{Endpoint: "https://127.0.0.1:9000", Buckets: []string{"b"}, CACertFile: "/lab/s3/ca.crt"}
	s := &Spire{
		TrustDomain: "east.zt.test", Namespace: HelmSpireNamespace, BundleConfigMap: SpireBundleConfigMap,
		BundleNamespace: HelmSpireBundleNamespace, Dir: "/lab/east/spire", Cluster: &Cluster{Name: "east", Kubeconfig: "/lab/east/kubeconfig"},
		opts: SpireOptions{Helm: true, S3Publisher: &S3Publisher{Server: s3, RefreshHint: time.Minute}},
	}
	if got, want := s.opts.S3Publisher.objectURL(s.TrustDomain), "https://127.0.0.1:9000/b/east.zt.test/bundle.spiffe"; got != want {
		t.Errorf("object URL %s, want %s", got, want)
	}
	conf := s.serverConfig()
	for _, want := range []string{
		`BundlePublisher "k8s_configmap"`, `BundlePublisher "aws_s3"`, `access_key_id = "zerotrust-lab"`,
		`region = "us-east-1"`, `bucket = "b"`, `object_key = "east.zt.test/bundle.spiffe"`, `format = "spiffe"`,
		`endpoint = "https://127.0.0.1:9000"`, `refresh_hint = "1m0s"`,
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("server config lacks %s:\n%s", want, conf)
		}
	}
	rendered, err := json.Marshal(s.helmBundlePlugins())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"BundlePublisher":[{"k8s_configmap":{"plugin_data":{"clusters":[{"chart-internal":{"configmap_key":"bundle.spiffe",` +
		`"configmap_name":"spire-bundle","format":"spiffe","namespace":"spire-system"}}]}}},{"aws_s3":{"plugin_data":{"bucket":"b",` +
		`"endpoint":"https://127.0.0.1:9000","format":"spiffe","object_key":"east.zt.test/bundle.spiffe","refresh_hint":"1m0s",` +
		`"region":"us-east-1"}}}]}`
	if string(rendered) != want {
		t.Errorf("the chart's plugins:\n%s\nwant\n%s", rendered, want)
	}
	env := strings.Join(s.serverEnv(), " ")
	if env != "SSL_CERT_FILE=/lab/s3/ca.crt AWS_CA_BUNDLE=/lab/s3/ca.crt AWS_EC2_METADATA_DISABLED=true" {
		t.Errorf("spire-server environment %q", env)
	}
	s.opts = SpireOptions{}
	if conf := s.serverConfig(); strings.Contains(conf, "aws_s3") || len(s.serverEnv()) != 0 {
		t.Errorf("without S3Publisher: aws_s3 in the config or an environment %v:\n%s", s.serverEnv(), conf)
	}
}
