package harness

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
)

// startS3 starts the lab's object storage, stopped at the end of the test.
func startS3(t *testing.T) *S3 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s3, err := StartS3(ctx, S3Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s3.Stop(); err != nil {
			t.Error(err)
		}
	})
	return s3
}

// TestAccSpireS3BundlePublisher: a server laid out as the chart does with
// SPIRE's BundlePublisher "aws_s3" beside "k8s_configmap" publishes the
// bundle `bundle show` prints, with the configured refresh hint, to the lab's
// object storage, where a reader without credentials finds it; a second
// SPIRE server, trusting the storage's CA, federates from the object's URL
// with the https_web profile and no bundle of its own to start from; the
// object survives a restart of the storage; the chart's server.conf names
// both publishers.
func TestAccSpireS3BundlePublisher(t *testing.T) {
	lab := startLab(t, Options{Names: []string{"pub"}})
	ctx := context.Background()
	s3 := startS3(t)
	pub := startSpire(t, lab.Cluster("pub"), SpireOptions{TrustDomain: "pub.zt.test", Helm: true, NoBundleEndpoint: true,
		S3Publisher: &S3Publisher{Server: s3, RefreshHint: time.Minute}})
	want := S3ObjectKey(pub.TrustDomain)
	if pub.PublishedBundleURL != s3.Endpoint+"/"+DefaultS3Bucket+"/"+want {
		t.Fatalf("PublishedBundleURL %q", pub.PublishedBundleURL)
	}
	checkPublishedBundle(ctx, t, pub)
	object, err := s3.Get(ctx, pub.PublishedBundleURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s:\n%s", pub.PublishedBundleURL, object)
	published, _ := parseBundle(t, pub.TrustDomain, object)
	if hint, ok := published.RefreshHint(); !ok || hint != time.Minute {
		t.Errorf("published refresh hint %v (set: %v), want 1m", hint, ok)
	}
	shown, err := pub.BundleShow(ctx, "spiffe")
	if err != nil {
		t.Fatal(err)
	}
	own, _ := parseBundle(t, pub.TrustDomain, shown)
	if g, w := trustbundle.X509AuthoritiesPEM(published), trustbundle.X509AuthoritiesPEM(own); g != w {
		t.Fatalf("the object holds other authorities than `bundle show`:\n%s\nwant\n%s", g, w)
	}
	var conf struct {
		Plugins struct {
			BundlePublisher []map[string]json.RawMessage `json:"BundlePublisher"`
		} `json:"plugins"`
	}
	cm, err := clientset(t, pub.Cluster).CoreV1().ConfigMaps(pub.Namespace).Get(ctx, HelmSpireServerName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(cm.Data["server.conf"]), &conf); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range conf.Plugins.BundlePublisher {
		for name := range p {
			names = append(names, name)
		}
	}
	if !slices.Equal(names, []string{"k8s_configmap", "aws_s3"}) || !strings.Contains(cm.Data["server.conf"], `"endpoint": "`+s3.Endpoint+`"`) {
		t.Errorf("the chart's server.conf names BundlePublishers %v:\n%s", names, cm.Data["server.conf"])
	}

	// A reader of the object: SPIRE fetches it with https_web.
	reader := startSpire(t, nil, SpireOptions{TrustDomain: "reader.zt.test", Standalone: true, NoBundleEndpoint: true, WebPKIRoots: s3.CACertFile})
	if _, err := reader.CLI(ctx, "federation", "create", "-trustDomain", pub.TrustDomain,
		"-bundleEndpointURL", pub.PublishedBundleURL, "-bundleEndpointProfile", "https_web"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	holds := func() bool {
		auths, err := reader.BundleX509Authorities(ctx, pub.TrustDomain)
		return err == nil && len(auths) > 0
	}
	for !holds() {
		if time.Since(start) > 45*time.Second {
			t.Fatalf("%s does not hold %s's bundle from %s after %v; last lines of %s:\n%s", reader.TrustDomain, pub.TrustDomain,
				pub.PublishedBundleURL, time.Since(start).Round(time.Second), reader.LogPath(), fileTail(reader.LogPath(), 20))
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("%s holds %s's bundle, fetched with https_web from the object, %v after the relationship was created",
		reader.TrustDomain, pub.TrustDomain, time.Since(start).Round(100*time.Millisecond))

	if err := s3.StopServer(); err != nil {
		t.Fatal(err)
	}
	if _, err := s3.Get(ctx, pub.PublishedBundleURL); err == nil {
		t.Fatal("the object answers while the storage is stopped")
	}
	if err := s3.StartServer(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := s3.Get(ctx, pub.PublishedBundleURL)
	if err != nil {
		t.Fatalf("the object after a restart of the storage: %v", err)
	}
	if string(again) != string(object) {
		t.Fatalf("the object changed across a restart of the storage:\n%s\nwant\n%s", again, object)
	}
}
