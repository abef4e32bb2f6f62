package reliability

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

// clientKeyPair is a client certificate and key nobody trusts: the
// apiserver has no client CA, so it never asks for them, but the provider
// still holds the key and must not leak it.
func clientKeyPair(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "reliability-client"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// pemBody is the base64 body of a PEM block joined on one line, and its
// first 64-character line: either form would show a leak.
func pemBody(p []byte) (joined, firstLine string) {
	lines := strings.Split(strings.TrimSpace(string(p)), "\n")
	body := lines[1 : len(lines)-1]
	return strings.Join(body, ""), body[0]
}

// TestAccSecretsStayOutOfLogsAndState applies with TF_LOG=trace through all
// three ways of passing credentials (a kubeconfig file, inline attributes,
// environment variables), then greps the trace log, terraform's output and
// the state file for every bearer token, the client key and the
// kubeconfig's credential fields.
func TestAccSecretsStayOutOfLogsAndState(t *testing.T) {
	e, w, n := cluster(t, east), cluster(t, west), cluster(t, north)
	viaKubeconfig := newIdentity(t, e, "secrets-kubeconfig")
	viaAttrs := newIdentity(t, w, "secrets-attributes")
	viaEnv := newIdentity(t, n, "secrets-env")
	certPEM, keyPEM := clientKeyPair(t)

	d := newTFDir(t, "secrets")
	kubeconfig := filepath.Join(d.dir, "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["east"] = &clientcmdapi.Cluster{Server: e.Host, CertificateAuthorityData: e.CACertPEM}
	cfg.AuthInfos["east"] = &clientcmdapi.AuthInfo{Token: viaKubeconfig.Token, ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts["east"] = &clientcmdapi.Context{Cluster: "east", AuthInfo: "east"}
	cfg.CurrentContext = "east"
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	kubeconfigBytes, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	prefix := acctest.UniqueName("sec")
	config := fmt.Sprintf(`
provider "zerotrust" {
  # The default connection (north) comes from KUBE_HOST, KUBE_TOKEN, KUBE_CLUSTER_CA_CERT_DATA, KUBE_CLIENT_*.
  clusters = {
    east = { config_path = %q, config_context = "east" }
    west = {
      host                   = %q
      token                  = %q
      client_certificate     = <<-EOT
%s
EOT
      client_key             = <<-EOT
%s
EOT
      cluster_ca_certificate = <<-EOT
%s
EOT
    }
  }
}
`, kubeconfig, w.Host, viaAttrs.Token, strings.TrimSpace(string(certPEM)), strings.TrimSpace(string(keyPEM)), strings.TrimSpace(string(w.CACertPEM)))
	config += ftdsConfig("east", prefix+"-e", 2) + ftdsConfig("west", prefix+"-w", 2) + fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "default" {
  name                    = "%[1]s-n"
  trust_domain            = "%[1]s-n.test"
  bundle_endpoint_url     = "https://bundles.%[1]s-n.test"
  bundle_endpoint_profile = { type = "https_web" }
}
`, prefix)
	d.write(config)

	traceLog := filepath.Join(d.dir, "trace.log")
	env := []string{
		"TF_LOG=trace", "TF_LOG_PATH=" + traceLog,
		"KUBE_HOST=" + n.Host, "KUBE_TOKEN=" + viaEnv.Token, "KUBE_CLUSTER_CA_CERT_DATA=" + string(n.CACertPEM),
		"KUBE_CLIENT_CERT_DATA=" + string(certPEM), "KUBE_CLIENT_KEY_DATA=" + string(keyPEM),
	}
	out := d.mustApply(env)
	code, planOut := d.run(env, "plan", "-input=false", "-detailed-exitcode")
	if code != 0 {
		t.Fatalf("plan after apply is not empty (exit %d):\n%s", code, tail(planOut, 40))
	}
	applied, err := os.ReadFile(filepath.Join(d.dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(applied), prefix+"-n.test") {
		t.Fatalf("the state after apply does not hold the applied objects:\n%s", applied)
	}
	// Destroy reads the credentials once more.
	code, destroyOut := d.run(env, "destroy", "-auto-approve", "-input=false")
	if code != 0 {
		t.Fatalf("destroy failed (exit %d):\n%s", code, tail(destroyOut, 40))
	}

	keyJoined, keyLine := pemBody(keyPEM)
	secrets := map[string]string{
		"kubeconfig token":                    viaKubeconfig.Token,
		"inline token":                        viaAttrs.Token,
		"KUBE_TOKEN":                          viaEnv.Token,
		"client key (one line)":               keyJoined,
		"client key (first PEM line)":         keyLine,
		"client key (kubeconfig base64 form)": base64.StdEncoding.EncodeToString(keyPEM),
		"harness admin token":                 e.Token,
	}
	// Every credential-bearing line of the kubeconfig file.
	for _, line := range strings.Split(string(kubeconfigBytes), "\n") {
		for _, field := range []string{"token:", "client-key-data:"} {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), field); ok {
				secrets["kubeconfig "+field] = strings.TrimSpace(v)
			}
		}
	}
	trace, err := os.ReadFile(traceLog)
	if err != nil {
		t.Fatal(err)
	}
	// The control: the provider's own logs and the resources it applied are
	// in the trace log, so the greps below search the right text.
	if !regexp.MustCompile(`provider\.terraform-provider-zerotrust`).Match(trace) {
		t.Fatalf("the trace log (%d bytes) does not hold the provider's logs: nothing was checked", len(trace))
	}
	if addr := "zerotrust_federated_trust_domain." + prefix + "-w[0]"; !strings.Contains(string(trace), addr) {
		t.Fatalf("the trace log (%d bytes) does not name %s: nothing was checked", len(trace), addr)
	}
	destroyed, err := os.ReadFile(filepath.Join(d.dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	where := map[string][]byte{
		"TF_LOG=trace output": trace,
		"terraform output":    []byte(out + planOut + destroyOut),
		"state after apply":   applied,
		"state after destroy": destroyed,
	}
	for what, secret := range secrets {
		if len(secret) < 16 {
			t.Fatalf("%s: %q is too short to grep for", what, secret)
		}
		for place, data := range where {
			if strings.Contains(string(data), secret) {
				t.Errorf("%s appears in the %s", what, place)
			}
		}
	}
	if !t.Failed() {
		secretsChecked.Store(int64(len(secrets)))
	}
	t.Logf("%d secrets absent from %d bytes of trace log, the CLI output and the state", len(secrets), len(trace))
}

// TestAccInsecureTLSIsNeverADefault: a cluster entry without a CA certificate
// (and without insecure = true) must fail TLS verification against the
// apiserver's self-signed certificate, before anything is written.
func TestAccInsecureTLSIsNeverADefault(t *testing.T) {
	c := cluster(t, west)
	who := newIdentity(t, c, "no-ca")
	name := acctest.UniqueName("noca")
	config := fmt.Sprintf(`
provider "zerotrust" {
  clusters = {
    noca = { host = %q, token = %q }
  }
}

resource "zerotrust_federated_trust_domain" "this" {
  cluster                 = "noca"
  name                    = %[3]q
  trust_domain            = "%[3]s.test"
  bundle_endpoint_url     = "https://bundles.%[3]s.test"
  bundle_endpoint_profile = { type = "https_web" }
}
`, c.Host, who.Token, name)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      config,
			ExpectError: regexp.MustCompile(`(?i)x509|certificate signed by unknown authority`),
		}},
	})
	names, err := cftdNames(context.Background(), c, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 0 {
		t.Errorf("an object was created over an unverified connection: %v", names)
	}
	if counts := countAudit(t, c, who.User); counts.Reads+counts.Writes != 0 {
		t.Errorf("the apiserver served %d requests over an unverified connection", counts.Reads+counts.Writes)
	}
}
