package datasources

import (
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
)

// TestTBDroppedWarnings: an authority dropped from a bundle ConfigMap is
// "revoked" only when it is SPIRE's previous authority (or, for X.509, the
// upstream authority that signed it); any other was never SPIRE's; and
// without SPIRE's answer the warning names both causes.
func TestTBDroppedWarnings(t *testing.T) {
	cm := bundlesource.ConfigMap{Client: &kube.Client{Name: "east"}, Namespace: "spire", Name: "spire-bundle", Key: bundlesource.KeyPEM}
	td := spiffeid.RequireTrustDomainFromString("east.test")
	dropped := []tbDropped{
		{name: "cert-old", id: "AB12"}, {name: "cert-upstream", id: "cd34"}, {name: "cert-appended", id: "ef56"},
		{name: `JWT authority "k1"`, id: "k1", jwt: true}, {name: `JWT authority "k2"`, id: "k2", jwt: true},
	}
	previous := spireexec.Previous{X509: "ab12", X509Upstream: "CD34", JWT: "k1"}
	w := tbWriter{key: bundlesource.KeyPEM, writer: `field manager "spire-server"`}
	warnings := func(previousErr error) map[string]string {
		var diags diag.Diagnostics
		tbDroppedWarnings(cm, w, td, dropped, previous, previousErr, path.Root("config_map"), &diags)
		out := map[string]string{}
		for _, d := range diags {
			if d.Severity() != diag.SeverityWarning {
				t.Fatalf("not a warning: %s", d.Summary())
			}
			out[d.Summary()] = d.Detail()
		}
		return out
	}
	got := warnings(nil)
	if len(got) != 2 {
		t.Fatalf("want two warnings, got %v", got)
	}
	revoked, never := got["Revoked Authorities Left Out"], got["Authorities SPIRE Never Held Left Out"]
	for _, want := range []string{"cert-old", "cert-upstream", `JWT authority "k1"`, "held and revoked"} {
		if !strings.Contains(revoked, want) {
			t.Errorf("revoked warning lacks %q: %s", want, revoked)
		}
	}
	for _, want := range []string{"cert-appended", `JWT authority "k2"`, "never held", "may have been altered"} {
		if !strings.Contains(never, want) {
			t.Errorf("never-held warning lacks %q: %s", want, never)
		}
	}
	if strings.Contains(never, "cert-old") || strings.Contains(revoked, "cert-appended") {
		t.Errorf("authorities in the wrong warning:\nrevoked: %s\nnever held: %s", revoked, never)
	}

	if !strings.Contains(revoked, `Notifier "k8sbundle" does not rewrite`) || !strings.Contains(never, `only SPIRE's Notifier "k8sbundle" should`) {
		t.Errorf("bundle.crt written by spire-server: want the notifier named:\nrevoked: %s\nnever held: %s", revoked, never)
	}
	// What the chart's default publisher wrote: it rewrites the ConfigMap
	// at a revoke, so a revoked authority still there is a failed publish.
	w = tbWriter{key: bundlesource.KeySPIFFE, writer: bundlesource.PluginPublisher}
	got = warnings(nil)
	revoked, never = got["Revoked Authorities Left Out"], got["Authorities SPIRE Never Held Left Out"]
	if !strings.Contains(revoked, "publishes at once when SPIRE revokes") || strings.Contains(revoked, "does not rewrite") ||
		!strings.Contains(never, `only SPIRE's BundlePublisher "k8s_configmap" should`) {
		t.Errorf("bundle.spiffe written by the BundlePublisher: want it named:\nrevoked: %s\nnever held: %s", revoked, never)
	}
	w = tbWriter{key: bundlesource.KeyPEM, writer: `field manager "spire-server"`}

	got = warnings(errors.New("exec refused"))
	both := got["Authorities Not in SPIRE's Bundle Left Out"]
	if len(got) != 1 || !strings.Contains(both, "Either SPIRE revoked them, or someone else added them") ||
		!strings.Contains(both, "may have been altered") || !strings.Contains(both, "exec refused") || !strings.Contains(both, "cert-old") {
		t.Errorf("without SPIRE's previous authorities, want one warning naming both causes, got %v", got)
	}
}
