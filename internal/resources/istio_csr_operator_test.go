package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// The tests of this file prove one rule each of the cert-manager Operator's
// IstioCSR contract (the sections of "cert-manager Operator: IstioCSR" in
// docs/guides/operator-contracts.md, named in each test's comment), against
// the stand-in operator (acctest.IstioCSRStandIn), which follows the
// operator's controller.

// istioCSROperandObjects lists what the operator created for the IstioCSR
// of ns ("<resource> <namespace>/<name>"), by the operator's labels.
func istioCSROperandObjects(t *testing.T, ns string) []string {
	t.Helper()
	dyn := acctest.Dynamic(t, acctest.East)
	var out []string
	for _, k := range acctest.IstioCSROperands {
		var list *unstructured.UnstructuredList
		var err error
		switch k.Where {
		case "own":
			list, err = dyn.Resource(k.GVR).Namespace(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=cert-manager-istio-csr"})
		default:
			list, err = dyn.Resource(k.GVR).List(context.Background(), metav1.ListOptions{
				LabelSelector: "app=cert-manager-istio-csr," + acctest.IstioCSRNamespaceLabel + "=" + ns})
		}
		if err != nil {
			t.Fatalf("list %s: %v", k.GVR.Resource, err)
		}
		for _, item := range list.Items {
			out = append(out, k.GVR.Resource+" "+item.GetNamespace()+"/"+item.GetName())
		}
	}
	sort.Strings(out)
	return out
}

// checkOperands checks that the operator's objects for ns exist (want) or
// are all gone.
func checkOperands(t *testing.T, ns string, want bool) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got := istioCSROperandObjects(t, ns)
		if !want {
			if len(got) > 0 {
				return fmt.Errorf("the cluster still holds what the operator created for %s: %v", ns, got)
			}
			return nil
		}
		kinds := map[string]bool{}
		for _, o := range got {
			kinds[strings.Fields(o)[0]] = true
		}
		for _, k := range acctest.IstioCSROperands {
			if !kinds[k.GVR.Resource] {
				return fmt.Errorf("no %s created for %s; have %v", k.GVR.Resource, ns, got)
			}
		}
		return nil
	}
}

// TestAccIstioCSROperator_secondInstance ("One IstioCSR per cluster"): the
// operator serves only the oldest IstioCSR of a cluster (utils.go
// disallowMultipleIstioCSRInstances). The plan refuses a second one when it
// can see the first. When it cannot (two created by the same apply: neither
// exists at plan), the operator rejects the newer one (or both, created in
// the same second) for good, and the apply fails at once on the rejection,
// not at its timeout, saying the object must be recreated.
func TestAccIstioCSROperator_secondInstance(t *testing.T) {
	istioCSRAlone(t)
	first, _ := brownfieldIstioCSR(t, nil)
	ns, other := acctest.UniqueNamespace(t, acctest.East, "csrsecond"), acctest.UniqueNamespace(t, acctest.East, "csrthird")
	issuer, otherIssuer := istioCSRIssuer(t, ns, true), istioCSRIssuer(t, other, true)
	var start time.Time
	step2Config := istioCSRConfig(t, acctest.East, ns, minimalIstioCSRBody(issuer)+`
  timeouts {
    create = "3m"
  }`) + fmt.Sprintf(`
resource "zerotrust_istio_csr" "other" {
  cluster   = "east"
  namespace = %q
%s
  timeouts {
    create = "3m"
  }
}
`, other, minimalIstioCSRBody(otherIssuer))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			acctest.CheckIstioCSRGone(t, acctest.East, ns), acctest.CheckIstioCSRGone(t, acctest.East, other),
		),
		Steps: []resource.TestStep{
			{
				Config: istioCSRConfig(t, acctest.East, ns, minimalIstioCSRBody(issuer)),
				ExpectError: regexp.MustCompile(`(?s)Another IstioCSR Exists.*` + regexp.QuoteMeta(first) +
					`/default.*oldest\s+IstioCSR.*reject\s+this\s+one\s+for\s+good`),
			},
			{
				PreConfig: func() {
					acctest.ResetIstioCSRs(t, acctest.East)
					start = time.Now()
				},
				Config:      step2Config,
				ExpectError: regexp.MustCompile(`(?s)IstioCSR Rejected.*multiple\s+instances\s+of\s+istiocsr\s+exists,\s+csr(second|third)-[0-9]+/default\s+will\s+not\s+be\s+processed.*never\s+removes.*delete\s+and\s+recreate`),
			},
			{
				// Each tainted object blocks the other's recreation at plan.
				PreConfig: func() {
					if elapsed := time.Since(start); elapsed > time.Minute {
						t.Fatalf("the rejected apply took %s: it must fail on the rejection, not wait out its timeout", elapsed)
					}
					rejected := 0
					for _, n := range []string{ns, other} {
						obj, err := getIstioCSR(t, acctest.East, n)
						if err != nil {
							t.Fatal(err)
						}
						if obj.GetAnnotations()[acctest.IstioCSRRejectAnnotation] == "true" {
							rejected++
						}
					}
					if rejected == 0 {
						t.Fatalf("neither %s nor %s carries the reject annotation", ns, other)
					}
				},
				Config:      step2Config,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`Another IstioCSR Exists`),
			},
		},
	})
}

// TestAccIstioCSROperator_acmeIssuer ("An ACME issuer is refused for good"):
// an ACME issuer is an error the operator does not retry (deployments.go
// assertIssuerRefExists), so the plan refuses it. An issuer that becomes ACME
// after the create (the plan looks at the issuer only when it creates the
// object: the reference is immutable) shows at the next apply, which fails at
// once on the operator's Degraded condition instead of waiting out its
// timeout.
func TestAccIstioCSROperator_acmeIssuer(t *testing.T) {
	istioCSRAlone(t)
	ns := acctest.UniqueNamespace(t, acctest.East, "csracme")
	acme := map[string]any{"acme": map[string]any{"server": "https://acme.example.test/directory"}}
	acmeIssuer := "acme-" + ns
	acctest.CertManagerIssuerSpec(t, acctest.East, istioCSRIstioNamespace, acmeIssuer, acme, true)
	issuer := istioCSRIssuer(t, ns, true)
	var start time.Time
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckIstioCSRGone(t, acctest.East, ns),
		Steps: []resource.TestStep{
			{
				Config:      istioCSRConfig(t, acctest.East, ns, minimalIstioCSRBody(acmeIssuer)),
				ExpectError: regexp.MustCompile(`(?s)ACME Issuer Not Supported.*cert_manager\.issuer_ref\.name.*assertIssuerRefExists`),
			},
			{Config: istioCSRConfig(t, acctest.East, ns, minimalIstioCSRBody(issuer))},
			{
				PreConfig: func() {
					acctest.SetCertManagerIssuerSpec(t, acctest.East, istioCSRIstioNamespace, issuer, acme)
					start = time.Now()
				},
				Config:      istioCSRConfig(t, acctest.East, ns, minimalIstioCSRBody(issuer)+"\n  log_level = 2"),
				ExpectError: regexp.MustCompile(`(?s)IstioCSR Degraded.*Degraded=True\s+\(Failed\):\s+reconciliation\s+failed\s+with\s+irrecoverable\s+error\s+not\s+retrying:.*unsupported\s+ACME\s+issuer`),
			},
			{
				PreConfig: func() {
					if elapsed := time.Since(start); elapsed > time.Minute {
						t.Fatalf("the Degraded apply took %s: it must fail on Degraded, not wait out its timeout", elapsed)
					}
				},
				Config:             istioCSRConfig(t, acctest.East, ns, minimalIstioCSRBody(issuer)+"\n  log_level = 2"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: false,
			},
		},
	})
}

// TestAccIstioCSROperator_issuerSpelling ("Issuer kind and group must be
// spelled exactly"): issuer_ref's kind and group reach istiod's Certificate
// verbatim, where cert-manager accepts only the exact spelling: the plan
// refuses any other, with no cluster involved.
func TestAccIstioCSROperator_issuerSpelling(t *testing.T) {
	valid := map[string]string{
		"cluster": `"east"`, "namespace": `"cert-manager"`,
		"cert_manager": `{ issuer_ref = { name = "istio-ca", kind = "Issuer" } }`,
		"istiod_tls":   `{ trust_domain = "cluster.local" }`, "istio": `{ namespace = "istio-system" }`,
	}
	ref := func(kind, group string) map[string]string {
		return map[string]string{"cert_manager": fmt.Sprintf(`{ issuer_ref = { name = "istio-ca", kind = %q, group = %q } }`, kind, group)}
	}
	runPlanFailureCases(t, "zerotrust_istio_csr", valid, []planFailureCase{
		{"lower-case ClusterIssuer", ref("clusterissuer", "cert-manager.io"), `write "ClusterIssuer".*verbatim`, "cert_manager.issuer_ref.kind"},
		{"lower-case Issuer", ref("issuer", "cert-manager.io"), `write "Issuer"`, "cert_manager.issuer_ref.kind"},
		{"group in other case", ref("Issuer", "Cert-Manager.io"), `write "cert-manager.io".*external issuer`, "cert_manager.issuer_ref.group"},
	})
}

// TestAccIstioCSROperator_certificateDurations ("Certificate durations have
// minimums"): cert-manager's webhook refuses istiod's Certificate with a
// duration under 1h or a renew-before under 5m (ValidateDuration), and the
// operator then reports Degraded: the plan refuses both, with no cluster
// involved.
func TestAccIstioCSROperator_certificateDurations(t *testing.T) {
	valid := map[string]string{
		"cluster": `"east"`, "namespace": `"cert-manager"`,
		"cert_manager": `{ issuer_ref = { name = "istio-ca", kind = "Issuer" } }`,
		"istiod_tls":   `{ trust_domain = "cluster.local" }`, "istio": `{ namespace = "istio-system" }`,
	}
	tls := func(extra string) map[string]string {
		return map[string]string{"istiod_tls": `{ trust_domain = "cluster.local", ` + extra + ` }`}
	}
	runPlanFailureCases(t, "zerotrust_istio_csr", valid, []planFailureCase{
		{"duration under 1h", tls(`certificate_duration = "30m", certificate_renew_before = "10m"`),
			`30m is shorter than 1h.*ValidateDuration`, "istiod_tls.certificate_duration"},
		{"renew-before under 5m", tls(`certificate_renew_before = "4m"`),
			`4m is shorter than 5m`, "istiod_tls.certificate_renew_before"},
	})
}

// TestAccIstioCSROperator_caIssuerSecret ("A CA issuer's secret is read in
// istio.namespace"): the operator reads a CA issuer's secret in
// istio.namespace, for a ClusterIssuer too, and retries forever without a
// ca.crt there (deployments.go createCAConfigMapFromIssuerSecret). The plan
// warns about both cases (an earlier resource of the same apply may create
// the Secret) and the apply refuses them before it writes the IstioCSR (the
// operator's retries are shown by
// TestAccIstioCSROperator_missingIssuerRetried); with istio_ca_certificate
// set the issuer's secret is not read.
func TestAccIstioCSROperator_caIssuerSecret(t *testing.T) {
	istioCSRAlone(t)
	// The fixtures below go into istio.namespace before any issuer there.
	acctest.EnsureNamespace(t, acctest.East, istioCSRIstioNamespace)
	ns := acctest.UniqueNamespace(t, acctest.East, "csrca")
	elsewhere := acctest.UniqueNamespace(t, acctest.East, "csrcasecret")
	clusterIssuer, tlsOnly := "cluster-ca-"+ns, "tls-only-"+ns
	acctest.CreateSecret(t, acctest.East, elsewhere, "root-"+ns, map[string]string{"ca.crt": "x", "tls.crt": "x", "tls.key": "x"})
	acctest.CertManagerIssuerSpec(t, acctest.East, "", clusterIssuer, map[string]any{"ca": map[string]any{"secretName": "root-" + ns}}, true)
	acctest.CreateSecret(t, acctest.East, istioCSRIstioNamespace, "tls-only-"+ns, map[string]string{"tls.crt": "x", "tls.key": "x"})
	acctest.CertManagerIssuerSpec(t, acctest.East, istioCSRIstioNamespace, tlsOnly, map[string]any{"ca": map[string]any{"secretName": "tls-only-" + ns}}, true)
	acctest.CreateConfigMap(t, acctest.East, ns, "istio-ca", map[string]any{"ca.crt": acctest.TestCertificatePEM(t, true)})
	const addr = "zerotrust_istio_csr.this"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckIstioCSRGone(t, acctest.East, ns),
		Steps: []resource.TestStep{
			{
				Config: istioCSRConfig(t, acctest.East, ns, fmt.Sprintf(`
  cert_manager = { issuer_ref = { name = %q, kind = "ClusterIssuer" } }
  istiod_tls   = { trust_domain = "cluster.local" }
  istio        = { namespace = "istio-system" }`, clusterIssuer)),
				ExpectError: regexp.MustCompile(`(?s)CA Issuer Secret Not Usable.*root-` + regexp.QuoteMeta(ns) + `.*does\s+not\s+exist.*istio_ca_certificate`),
			},
			{
				Config:      istioCSRConfig(t, acctest.East, ns, minimalIstioCSRBody(tlsOnly)),
				ExpectError: regexp.MustCompile(`(?s)CA Issuer Secret Not Usable.*has\s+no\s+ca\.crt`),
			},
			{
				Config: istioCSRConfig(t, acctest.East, ns, fmt.Sprintf(`
  cert_manager = {
    issuer_ref           = { name = %q, kind = "ClusterIssuer" }
    istio_ca_certificate = { name = "istio-ca", key = "ca.crt" }
  }
  istiod_tls = { trust_domain = "cluster.local" }
  istio      = { namespace = "istio-system" }`, clusterIssuer)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("conditions").AtMapKey("Ready").AtMapKey("status"), knownvalue.StringExact("True")),
				},
			},
		},
	})
}

// TestAccIstioCSROperator_caConfigMap ("A missing CA ConfigMap is refused for
// good"): with istio_ca_certificate set, the operator reads the ConfigMap
// once (in the IstioCSR's namespace when namespace is unset) and gives up for
// good when it is missing, lacks the key or holds no CA certificate
// (deployments.go handleUserProvidedCA). The plan warns about each (an
// earlier resource of the same apply may create or fill the ConfigMap), and
// the apply refuses each with the same words before it writes anything: the
// cluster holds no IstioCSR afterwards and the state none. A ConfigMap that
// disappears later fails the next apply at once on Degraded, a change that
// does not fix it fails after the settle window (the Degraded condition was
// there before), and a fix plus a spec change clears it.
func TestAccIstioCSROperator_caConfigMap(t *testing.T) {
	istioCSRAlone(t)
	ns := acctest.UniqueNamespace(t, acctest.East, "csrcm")
	issuer := istioCSRIssuer(t, ns, true)
	acctest.CreateConfigMap(t, acctest.East, ns, "no-key", map[string]any{"other": "x"})
	acctest.CreateConfigMap(t, acctest.East, ns, "leaf", map[string]any{"ca.crt": acctest.TestCertificatePEM(t, false)})
	acctest.CreateConfigMap(t, acctest.East, ns, "good", map[string]any{"ca.crt": acctest.TestCertificatePEM(t, true)})
	body := func(name string) string {
		return fmt.Sprintf(`
  cert_manager = {
    issuer_ref           = { name = %q, kind = "Issuer" }
    istio_ca_certificate = { name = %s, key = "ca.crt" }
  }
  istiod_tls = { trust_domain = "cluster.local" }
  istio      = { namespace = "istio-system" }`, issuer, name)
	}
	// The missing ConfigMap, on the CLI, which shows a plan's warnings.
	w := newCLIWorkspace(t)
	w.write(istioCSRConfig(t, acctest.East, ns, body(`"missing"`)))
	w.run("init")
	notFound := fmt.Sprintf("Attribute cert_manager.istio_ca_certificate.name: The ConfigMap %s/missing does not exist on cluster", ns)
	plan := w.run("plan")
	for _, want := range []string{"Warning: CA Certificate ConfigMap Not Found", notFound, "does not retry",
		"the apply asks again before it writes the IstioCSR, and refuses with this message"} {
		if !strings.Contains(plan, want) {
			t.Fatalf("plan with a missing CA ConfigMap: want %q in the output:\n%s", want, plan)
		}
	}
	if strings.Contains(plan, "Error:") {
		t.Fatalf("plan with a missing CA ConfigMap fails:\n%s", plan)
	}
	t.Logf("plan with a missing CA ConfigMap:\n%s", plan)
	out, code := acctest.Terraform(t, "terraform", w.dir, w.reattach, "apply", "-auto-approve")
	apply := strings.Join(strings.Fields(out), " ")
	if code == 0 || !strings.Contains(apply, "Error: CA Certificate ConfigMap Not Found") || !strings.Contains(apply, notFound) {
		t.Fatalf("apply with a missing CA ConfigMap: want it to fail with %q:\n%s", notFound, apply)
	}
	t.Logf("apply with a missing CA ConfigMap:\n%s", apply)
	if _, err := getIstioCSR(t, acctest.East, ns); !apierrors.IsNotFound(err) {
		t.Fatalf("after the refused apply, the IstioCSR %s/default: want NotFound, got %v", ns, err)
	}
	if state := strings.TrimSpace(acctest.MustTerraform(t, "terraform", w.dir, w.reattach, "state", "list")); state != "" {
		t.Fatalf("after the refused apply, the state holds:\n%s", state)
	}

	const addr = "zerotrust_istio_csr.this"
	// settle is the provider's istioCSRDegradedSettle.
	const settle = 15 * time.Second
	var start time.Time
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckIstioCSRGone(t, acctest.East, ns),
		Steps: []resource.TestStep{
			{
				// Warned at plan, refused at apply before anything is
				// written, as the missing ConfigMap above.
				Config:      istioCSRConfig(t, acctest.East, ns, body(`"no-key"`)),
				ExpectError: regexp.MustCompile(`(?s)CA Certificate Key Not Found.*no\s+key\s+"ca\.crt"`),
			},
			{
				Config:      istioCSRConfig(t, acctest.East, ns, body(`"leaf"`)),
				ExpectError: regexp.MustCompile(`(?s)Not A CA Certificate.*not\s+a\s+CA\s+certificate`),
			},
			{
				Config: istioCSRConfig(t, acctest.East, ns, body(`"good"`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("conditions").AtMapKey("Ready").AtMapKey("status"), knownvalue.StringExact("True")),
				},
			},
			{
				// The ConfigMap disappears; the plan does not look again (the
				// reference is unchanged), the operator's next reconcile gives
				// up, and the apply fails at once on Degraded.
				PreConfig: func() { acctest.DeleteConfigMap(t, acctest.East, ns, "good") },
				Config:    istioCSRConfig(t, acctest.East, ns, body(`"good"`)+"\n  log_level = 2"),
				ExpectError: regexp.MustCompile(`(?s)IstioCSR Degraded.*irrecoverable\s+error\s+not\s+retrying:.*failed\s+to\s+fetch\s+CA\s+certificate\s+ConfigMap\s+` +
					regexp.QuoteMeta(ns) + `/good`),
			},
			{
				// Another change that does not fix the cause: the operator
				// fails the same way and, as SetCondition keeps a condition
				// whose status and reason stay, leaves Degraded as it was.
				// The apply takes that for the verdict only after the settle
				// window (the operator might still clear it), not at once and
				// not at its timeout.
				PreConfig:   func() { start = time.Now() },
				Config:      istioCSRConfig(t, acctest.East, ns, body(`"good"`)+"\n  log_level = 4"),
				ExpectError: regexp.MustCompile(`(?s)IstioCSR Degraded.*failed\s+to\s+fetch\s+CA\s+certificate\s+ConfigMap`),
			},
			{
				// Back, and a spec change: the operator reconciles again and
				// clears Degraded, which the apply found there before it.
				PreConfig: func() {
					if elapsed := time.Since(start); elapsed < settle || elapsed > time.Minute {
						t.Fatalf("the apply on an unchanged Degraded took %s: want the settle window (%s), not less, nor the timeout", elapsed, settle)
					}
					acctest.CreateConfigMap(t, acctest.East, ns, "good", map[string]any{"ca.crt": acctest.TestCertificatePEM(t, true)})
				},
				Config: istioCSRConfig(t, acctest.East, ns, body(`"good"`)+"\n  log_level = 3"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("conditions").AtMapKey("Degraded").AtMapKey("status"), knownvalue.StringExact("False")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("conditions").AtMapKey("Ready").AtMapKey("status"), knownvalue.StringExact("True")),
				},
			},
		},
	})
}

// TestAccIstioCSROperator_caConfigMapSameApply: the CA ConfigMap is
// created by an earlier resource of the same apply, which a plan cannot see.
// The plan only warns (TestAccIstioCSROperator_caConfigMap shows the
// warning), so the one apply creates the ConfigMap, then the IstioCSR, which
// the operator serves with that CA.
func TestAccIstioCSROperator_caConfigMapSameApply(t *testing.T) {
	istioCSRAlone(t)
	ns := acctest.UniqueNamespace(t, acctest.East, "csrcmsame")
	issuer := istioCSRIssuer(t, ns, true)
	if _, err := acctest.Dynamic(t, acctest.East).Resource(kube.ConfigMap.GVR()).Namespace(ns).Get(context.Background(), "istio-ca", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("before the apply, the ConfigMap %s/istio-ca: want NotFound, got %v", ns, err)
	}
	config := istioCSRConfig(t, acctest.East, ns, fmt.Sprintf(`
  cert_manager = {
    issuer_ref           = { name = %q, kind = "Issuer" }
    istio_ca_certificate = { name = ztfixture_config_map.ca.name, key = "ca.crt" }
  }
  istiod_tls = { trust_domain = "cluster.local" }
  istio      = { namespace = "istio-system" }`, issuer)) + fmt.Sprintf(`
resource "ztfixture_config_map" "ca" {
  namespace = %q
  name      = "istio-ca"
  data      = { "ca.crt" = %q }
}
`, ns, acctest.TestCertificatePEM(t, true))
	const addr = "zerotrust_istio_csr.this"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.WithFixtures(t, acctest.East),
		CheckDestroy:             acctest.CheckIstioCSRGone(t, acctest.East, ns),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("ztfixture_config_map.ca", plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("conditions").AtMapKey("Ready").AtMapKey("status"), knownvalue.StringExact("True")),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("conditions").AtMapKey("Degraded").AtMapKey("status"), knownvalue.StringExact("False")),
			},
		}},
	})
}

// istiodCertificate reads istiod's Certificate in istio-system.
func istiodCertificate(t *testing.T) (*unstructured.Unstructured, error) {
	return acctest.Dynamic(t, acctest.East).Resource(acctest.CertManagerCertificateGVR).Namespace(istioCSRIstioNamespace).
		Get(context.Background(), "istiod", metav1.GetOptions{})
}

// TestAccIstioCSROperator_updateWaitsForCertificate ("Conditions carry no
// observedGeneration"): the operator never sets observedGeneration and leaves
// Ready=True untouched after an update, so an update must not return on that
// old Ready: with the agent and istiod's certificate held back, the apply
// waits until they are released, and returns with the Certificate carrying
// the new duration.
func TestAccIstioCSROperator_updateWaitsForCertificate(t *testing.T) {
	istioCSRAlone(t)
	ns := acctest.UniqueNamespace(t, acctest.East, "csrupd")
	issuer := istioCSRIssuer(t, ns, true)
	const hold = 6 * time.Second
	var start time.Time
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckIstioCSRGone(t, acctest.East, ns),
		Steps: []resource.TestStep{
			{Config: istioCSRConfig(t, acctest.East, ns, minimalIstioCSRBody(issuer))},
			{
				PreConfig: func() {
					acctest.IstioCSRHoldAgent(acctest.East, ns, true)
					start = time.Now()
					go func() {
						time.Sleep(hold)
						acctest.IstioCSRHoldAgent(acctest.East, ns, false)
					}()
				},
				Config: istioCSRConfig(t, acctest.East, ns, minimalIstioCSRBody(issuer)+`
  log_level = 2`),
				Check: func(*terraform.State) error {
					if elapsed := time.Since(start); elapsed < hold {
						return fmt.Errorf("the update returned after %s, while the agent was held back for %s", elapsed, hold)
					}
					return nil
				},
			},
			{
				PreConfig: func() {
					acctest.IstioCSRHoldAgent(acctest.East, ns, true)
					start = time.Now()
					go func() {
						time.Sleep(hold)
						acctest.IstioCSRHoldAgent(acctest.East, ns, false)
					}()
				},
				Config: istioCSRConfig(t, acctest.East, ns, `
  cert_manager = { issuer_ref = { name = "`+issuer+`", kind = "Issuer" } }
  istiod_tls   = { trust_domain = "cluster.local", certificate_duration = "2h", max_certificate_duration = "2h" }
  istio        = { namespace = "istio-system" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("zerotrust_istio_csr.this", plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					func(*terraform.State) error {
						if elapsed := time.Since(start); elapsed < hold {
							return fmt.Errorf("the update returned after %s, while istiod's Certificate was held back for %s", elapsed, hold)
						}
						return nil
					},
					acctest.CheckObjectFields(t, func() (*unstructured.Unstructured, error) { return istiodCertificate(t) }, map[string]any{
						"spec.duration": "2h0m0s",
					}),
				),
			},
		},
	})
}

// TestAccIstioCSROperator_readyWaitsForAgent ("Ready does not mean the agent
// runs"): the operator says Ready=True once its objects are applied; the
// apply also waits for the agent's Deployment and istiod's Certificate, and
// on timeout says what it still waits for.
func TestAccIstioCSROperator_readyWaitsForAgent(t *testing.T) {
	istioCSRAlone(t)
	ns := acctest.UniqueNamespace(t, acctest.East, "csrhold")
	// A CA issuer: the operator reads its secret, so it reaches Ready=True
	// while cert-manager holds istiod's Certificate back (with another
	// issuer it would wait for the Certificate's Secret itself).
	issuer := istioCSRIssuerName(ns)
	acctest.EnsureNamespace(t, acctest.East, istioCSRIstioNamespace)
	acctest.CreateSecret(t, acctest.East, istioCSRIstioNamespace, issuer, map[string]string{"ca.crt": acctest.TestCertificatePEM(t, true)})
	acctest.CertManagerIssuerSpec(t, acctest.East, istioCSRIstioNamespace, issuer, map[string]any{"ca": map[string]any{"secretName": issuer}}, true)
	acctest.IstioCSRHoldAgent(acctest.East, ns, true)
	t.Cleanup(func() { acctest.IstioCSRHoldAgent(acctest.East, ns, false) })
	const addr = "zerotrust_istio_csr.this"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckIstioCSRGone(t, acctest.East, ns),
		Steps: []resource.TestStep{
			{
				Config: istioCSRConfig(t, acctest.East, ns, minimalIstioCSRBody(issuer)+`
  timeouts {
    create = "5s"
  }`),
				ExpectError: regexp.MustCompile(`(?s)IstioCSR Not Ready.*still\s+waiting\s+for.*Deployment\s+` + regexp.QuoteMeta(ns) +
					`/cert-manager-istio-csr.*Ready=True\s+\(Ready\):\s+reconciliation\s+successful`),
			},
			{
				PreConfig: func() { acctest.IstioCSRHoldAgent(acctest.East, ns, false) },
				Config:    istioCSRConfig(t, acctest.East, ns, minimalIstioCSRBody(issuer)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionDestroyBeforeCreate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("conditions").AtMapKey("Ready").AtMapKey("status"), knownvalue.StringExact("True")),
				},
			},
		},
	})
}

// TestAccIstioCSROperator_destroyRemovesAgent ("Nothing is cleaned up"): the
// operator removes nothing it created, so destroy does, by the operator's
// labels: a namespace change leaves one agent, and after destroy the API
// server holds none of the objects; cert-manager's Secret and the issuer
// stay.
func TestAccIstioCSROperator_destroyRemovesAgent(t *testing.T) {
	istioCSRAlone(t)
	ns1 := acctest.UniqueNamespace(t, acctest.East, "csrdel")
	ns2 := acctest.UniqueNamespace(t, acctest.East, "csrdelnew")
	issuer := istioCSRIssuer(t, ns1, true)
	const addr = "zerotrust_istio_csr.this"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			acctest.CheckIstioCSRGone(t, acctest.East, ns2),
			checkOperands(t, ns2, false),
			func(*terraform.State) error {
				dyn := acctest.Dynamic(t, acctest.East)
				if _, err := dyn.Resource(secretsGVR).Namespace(istioCSRIstioNamespace).Get(context.Background(), "istiod-tls", metav1.GetOptions{}); err != nil {
					return fmt.Errorf("cert-manager's Secret istiod-tls must stay: %v", err)
				}
				return nil
			},
		),
		Steps: []resource.TestStep{
			{
				Config: istioCSRConfig(t, acctest.East, ns1, minimalIstioCSRBody(issuer)),
				Check:  checkOperands(t, ns1, true),
			},
			{
				Config: istioCSRConfig(t, acctest.East, ns2, minimalIstioCSRBody(issuer)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionDestroyBeforeCreate)},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkOperands(t, ns1, false),
					checkOperands(t, ns2, true),
				),
			},
		},
	})
}

// TestAccIstioCSROperator_reserialisedSpec ("The first Update re-serialises
// the spec"): the operator's first Updates write the spec back in its Go
// types' form (1h30m -> 1h30m0s, 0.5 -> 500m, resources: {}); the create
// applies and then plans nothing, later updates apply without a field
// conflict with the operator, and a changed duration is taken over from it.
func TestAccIstioCSROperator_reserialisedSpec(t *testing.T) {
	istioCSRAlone(t)
	ns := acctest.UniqueNamespace(t, acctest.East, "csrser")
	issuer := istioCSRIssuer(t, ns, true)
	get := func() (*unstructured.Unstructured, error) { return getIstioCSR(t, acctest.East, ns) }
	const addr = "zerotrust_istio_csr.this"
	body := func(extra, duration string) string {
		return fmt.Sprintf(`
  cert_manager = { issuer_ref = { name = %q, kind = "Issuer" } }
  istiod_tls   = { trust_domain = "cluster.local", certificate_duration = %q, max_certificate_duration = "2h" }
  istio        = { namespace = "istio-system" }
  resources    = { requests = { cpu = "0.5", memory = "1024Mi" } }%s`, issuer, duration, extra)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckIstioCSRGone(t, acctest.East, ns),
		Steps: []resource.TestStep{
			{
				Config: istioCSRConfig(t, acctest.East, ns, body("", "90m")),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("istiod_tls").AtMapKey("certificate_duration"), knownvalue.StringExact("90m")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("istiod_tls").AtMapKey("certificate_renew_before"), knownvalue.StringExact("30m")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("resources").AtMapKey("requests").AtMapKey("cpu"), knownvalue.StringExact("0.5")),
				},
				Check: acctest.CheckObjectFields(t, get, map[string]any{
					"spec.istioCSRConfig.istiodTLSConfig.certificateDuration":    "1h30m0s",
					"spec.istioCSRConfig.istiodTLSConfig.certificateRenewBefore": "30m0s",
					"spec.istioCSRConfig.resources.requests":                     map[string]any{"cpu": "500m", "memory": "1Gi"},
				}),
			},
			{
				// Another change: the durations and quantities go out in the
				// object's spelling, so the operator's ownership is no conflict.
				Config: istioCSRConfig(t, acctest.East, ns, body("\n  log_level = 2", "90m")),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: acctest.CheckObjectFields(t, get, map[string]any{
					"spec.istioCSRConfig.logLevel":                            int64(2),
					"spec.istioCSRConfig.istiodTLSConfig.certificateDuration": "1h30m0s",
				}),
			},
			{
				// A new duration: the field the operator owns by
				// re-serialising it is taken over, without force_conflicts.
				Config: istioCSRConfig(t, acctest.East, ns, body("\n  log_level = 2", "2h")),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: acctest.CheckObjectFields(t, get, map[string]any{
					"spec.istioCSRConfig.istiodTLSConfig.certificateDuration": "2h",
				}),
			},
			{
				// Unset, resources keeps what the operator co-owns since it
				// re-serialised the quantities (only the API server could say
				// what remains, so the plan has it unknown), and plans nothing after.
				Config: istioCSRConfig(t, acctest.East, ns, fmt.Sprintf(`
  cert_manager = { issuer_ref = { name = %q, kind = "Issuer" } }
  istiod_tls   = { trust_domain = "cluster.local", certificate_duration = "2h", max_certificate_duration = "2h" }
  istio        = { namespace = "istio-system" }
  log_level    = 2`, issuer)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectUnknownValue(addr, tfjsonpath.New("resources"))},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("resources").AtMapKey("requests").AtMapKey("cpu"), knownvalue.StringExact("500m")),
				},
			},
		},
	})
}

// TestAccIstioCSROperator_refusedUpdateConverges: an update the operator
// refuses for good (Degraded: the istio_ca_certificate ConfigMap went away,
// deployments.go handleUserProvidedCA) fails, but Terraform does not taint
// an update and the state holds what was written, so nothing plans a
// replacement: the fix (another CA ConfigMap) is an in-place update, which
// makes the operator reconcile again and ends Ready with an empty plan.
// The IstioCSR and its agent's Deployment are the same objects throughout:
// nothing was torn down.
func TestAccIstioCSROperator_refusedUpdateConverges(t *testing.T) {
	istioCSRAlone(t)
	ns := acctest.UniqueNamespace(t, acctest.East, "csrfix")
	issuer := istioCSRIssuer(t, ns, true)
	acctest.CreateConfigMap(t, acctest.East, ns, "first", map[string]any{"ca.crt": acctest.TestCertificatePEM(t, true)})
	acctest.CreateConfigMap(t, acctest.East, ns, "second", map[string]any{"ca.crt": acctest.TestCertificatePEM(t, true)})
	body := func(name string, logLevel int) string {
		return fmt.Sprintf(`
  cert_manager = {
    issuer_ref           = { name = %q, kind = "Issuer" }
    istio_ca_certificate = { name = %q, key = "ca.crt" }
  }
  istiod_tls = { trust_domain = "cluster.local" }
  istio      = { namespace = "istio-system" }
  log_level  = %d`, issuer, name, logLevel)
	}
	const addr = "zerotrust_istio_csr.this"
	ri := acctest.Dynamic(t, acctest.East)
	uids := func() (csr, agent string, err error) {
		obj, err := ri.Resource(kube.IstioCSR.GVR()).Namespace(ns).Get(context.Background(), "default", metav1.GetOptions{})
		if err != nil {
			return "", "", err
		}
		dep, err := ri.Resource(kube.Deployment.GVR()).Namespace(ns).Get(context.Background(), "cert-manager-istio-csr", metav1.GetOptions{})
		if err != nil {
			return "", "", err
		}
		return string(obj.GetUID()), string(dep.GetUID()), nil
	}
	var csrUID, agentUID string
	sameObjects := func(*terraform.State) error {
		csr, agent, err := uids()
		if err != nil {
			return err
		}
		if csrUID == "" {
			csrUID, agentUID = csr, agent
			return nil
		}
		if csr != csrUID || agent != agentUID {
			return fmt.Errorf("IstioCSR uid %s -> %s, agent Deployment uid %s -> %s: the refused update led to a teardown", csrUID, csr, agentUID, agent)
		}
		t.Logf("IstioCSR %s/default uid %s and its agent Deployment uid %s unchanged since the first apply", ns, csr, agent)
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckIstioCSRGone(t, acctest.East, ns),
		Steps: []resource.TestStep{
			{
				Config: istioCSRConfig(t, acctest.East, ns, body("first", 1)),
				Check:  sameObjects,
			},
			{
				PreConfig: func() { acctest.DeleteConfigMap(t, acctest.East, ns, "first") },
				Config:    istioCSRConfig(t, acctest.East, ns, body("first", 2)),
				ExpectError: regexp.MustCompile(`(?s)IstioCSR Degraded.*failed\s+to\s+fetch\s+CA\s+certificate\s+ConfigMap\s+` +
					regexp.QuoteMeta(ns) + `/first.*Terraform\s+saved\s+what\s+it\s+wrote`),
			},
			{
				Config: istioCSRConfig(t, acctest.East, ns, body("second", 2)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: istioCSRServed(addr),
				Check:             sameObjects,
			},
			{
				Config: istioCSRConfig(t, acctest.East, ns, body("second", 2)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
}
