package resources_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// The cert-manager Operator cannot run here: IstioCSR status (Ready and
// Degraded conditions, the gRPC endpoint) is written by the test-only
// stand-in controller acctest.IstioCSRStandIn, through the real API server,
// the way the operator writes it.

var (
	istioCSRGVR = kube.IstioCSR.GVR()
	secretsGVR  = kube.Secret.GVR()
)

// istioCSRAlone readies east for one IstioCSR test: the stand-in operator
// runs, and no IstioCSR exists before or after the test. The operator
// serves one IstioCSR per cluster and rejects the others for good (and the
// plan refuses a second one), so the IstioCSR tests on east run one at a
// time, with resource.Test and never resource.ParallelTest: Go runs the
// tests that do not call t.Parallel before any parallel test resumes.
func istioCSRAlone(t *testing.T) {
	t.Helper()
	acctest.IstioCSRStandIn(t, acctest.East)
	acctest.ResetIstioCSRs(t, acctest.East)
	t.Cleanup(func() { acctest.ResetIstioCSRs(t, acctest.East) })
}

func getIstioCSR(t *testing.T, cluster, ns string) (*unstructured.Unstructured, error) {
	t.Helper()
	return acctest.Dynamic(t, cluster).Resource(istioCSRGVR).Namespace(ns).Get(context.Background(), "default", metav1.GetOptions{})
}

func istioCSRConfig(t *testing.T, cluster, ns, body string) string {
	t.Helper()
	clusterLine := ""
	if cluster != "" {
		clusterLine = fmt.Sprintf("  cluster   = %q\n", cluster)
	}
	return acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_istio_csr" "this" {
%s  namespace = %q
%s
}
`, clusterLine, ns, body)
}

func minimalIstioCSRBody(issuer string) string {
	return fmt.Sprintf(`
  cert_manager = { issuer_ref = { name = %q, kind = "Issuer" } }
  istiod_tls   = { trust_domain = "cluster.local" }
  istio        = { namespace = "istio-system" }`, issuer)
}

// istioCSRIstioNamespace is the istio.namespace of the tests' IstioCSRs.
const istioCSRIstioNamespace = "istio-system"

// istioCSRIssuerName is the issuer of the IstioCSR in the test namespace ns:
// all tests share istio-system, so the name comes from ns.
// istioCSRServed checks that the state of addr says the operator serves it:
// Ready=True, Degraded=False.
func istioCSRServed(addr string) []statecheck.StateCheck {
	return []statecheck.StateCheck{
		statecheck.ExpectKnownValue(addr, tfjsonpath.New("conditions").AtMapKey("Ready").AtMapKey("status"), knownvalue.StringExact("True")),
		statecheck.ExpectKnownValue(addr, tfjsonpath.New("conditions").AtMapKey("Degraded").AtMapKey("status"), knownvalue.StringExact("False")),
	}
}

func istioCSRIssuerName(ns string) string { return "ca-" + ns }

// istioCSRIssuer creates the cert-manager Issuer of the IstioCSR in ns where
// the operator looks for it: in istio.namespace, not in ns.
func istioCSRIssuer(t *testing.T, ns string, ready bool) string {
	t.Helper()
	name := istioCSRIssuerName(ns)
	acctest.CertManagerIssuer(t, acctest.East, istioCSRIstioNamespace, name, ready)
	return name
}

// istioCSRLifecycle is what the lifecycle tests share: an IstioCSR in a
// namespace of their own on east, named by the variables of the
// testdata/istio_csr configurations.
type istioCSRLifecycle struct {
	ns, issuer string
	get        func() (*unstructured.Unstructured, error)
}

const istioCSRAddr = "zerotrust_istio_csr.this"

func newIstioCSRLifecycle(t *testing.T) istioCSRLifecycle {
	t.Helper()
	istioCSRAlone(t)
	ns := acctest.UniqueNamespace(t, acctest.East, "csr")
	return istioCSRLifecycle{
		ns: ns, issuer: istioCSRIssuer(t, ns, true),
		get: func() (*unstructured.Unstructured, error) { return getIstioCSR(t, acctest.East, ns) },
	}
}

// test runs steps, then checks that destroy removed the IstioCSR.
func (l istioCSRLifecycle) test(t *testing.T, steps ...resource.TestStep) {
	t.Helper()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckIstioCSRGone(t, acctest.East, l.ns),
		Steps:                    steps,
	})
}

// step is a step applying testdata/istio_csr/<file>.
func (l istioCSRLifecycle) step(t *testing.T, file string, vars config.Variables) resource.TestStep {
	t.Helper()
	all := config.Variables{"cluster": config.StringVariable(acctest.East), "namespace": config.StringVariable(l.ns)}
	maps.Copy(all, vars)
	return resource.TestStep{Config: testdataConfig(t, acctest.ProviderConfig(t), "istio_csr/"+file), ConfigVariables: all}
}

// importStep imports the IstioCSR by its ID and verifies the state against
// the prior step's, which applied file (an import step needs the variables
// of the configuration too).
func (l istioCSRLifecycle) importStep(t *testing.T, file string, vars config.Variables) resource.TestStep {
	step := l.step(t, file, vars)
	step.ResourceName, step.ImportState, step.ImportStateId, step.ImportStateVerify = istioCSRAddr, true, "east/"+l.ns, true
	return step
}

// minimal is a step applying minimal.tf.
func (l istioCSRLifecycle) minimal(t *testing.T) resource.TestStep {
	return l.step(t, "minimal.tf", config.Variables{"issuer": config.StringVariable(l.issuer)})
}

// recordUID keeps the object's uid in uid, for checkUID.
func (l istioCSRLifecycle) recordUID(t *testing.T, uid *k8stypes.UID) func() {
	return func() {
		obj, err := l.get()
		if err != nil {
			t.Fatal(err)
		}
		*uid = obj.GetUID()
	}
}

// checkUID checks that the object is the one recorded (same) or a new one.
func (l istioCSRLifecycle) checkUID(uid *k8stypes.UID, same bool) resource.TestCheckFunc {
	return func(*terraform.State) error {
		obj, err := l.get()
		switch {
		case err != nil:
			return err
		case same && obj.GetUID() != *uid:
			return fmt.Errorf("the IstioCSR was recreated (uid %s, was %s); want an update in place", obj.GetUID(), *uid)
		case !same && obj.GetUID() == *uid:
			return fmt.Errorf("the IstioCSR kept uid %s; want a new object", *uid)
		}
		return nil
	}
}

// TestAccIstioCSR_defaults: the smallest configuration. The CRD defaults are
// planned and stored but not sent (the API server fills them in), server
// stays absent, and the apply returns once the operator says Ready.
func TestAccIstioCSR_defaults(t *testing.T) {
	l := newIstioCSRLifecycle(t)
	create := l.minimal(t)
	create.ConfigPlanChecks = resource.ConfigPlanChecks{
		PreApply: []plancheck.PlanCheck{
			plancheck.ExpectResourceAction(istioCSRAddr, plancheck.ResourceActionCreate),
			plancheck.ExpectKnownValue(istioCSRAddr, tfjsonpath.New("id"), knownvalue.StringExact("east/"+l.ns)),
			plancheck.ExpectUnknownValue(istioCSRAddr, tfjsonpath.New("grpc_endpoint")),
		},
		PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
	}
	at := func(p tfjsonpath.Path, want knownvalue.Check) statecheck.StateCheck {
		return statecheck.ExpectKnownValue(istioCSRAddr, p, want)
	}
	create.ConfigStateChecks = []statecheck.StateCheck{
		at(tfjsonpath.New("grpc_endpoint"), knownvalue.StringExact("cert-manager-istio-csr."+l.ns+".svc:443")),
		at(tfjsonpath.New("service_account"), knownvalue.StringExact("cert-manager-istio-csr")),
		at(tfjsonpath.New("image"), knownvalue.StringRegexp(regexp.MustCompile(`istio-csr:v`))),
		at(tfjsonpath.New("cluster_role"), knownvalue.StringRegexp(regexp.MustCompile(`^cert-manager-istio-csr-`))),
		at(tfjsonpath.New("cluster_role_binding"), knownvalue.StringRegexp(regexp.MustCompile(`^cert-manager-istio-csr-`))),
		at(tfjsonpath.New("conditions").AtMapKey("Ready").AtMapKey("status"), knownvalue.StringExact("True")),
		at(tfjsonpath.New("conditions").AtMapKey("Degraded").AtMapKey("status"), knownvalue.StringExact("False")),
		at(tfjsonpath.New("log_level"), knownvalue.Int64Exact(1)),
		at(tfjsonpath.New("log_format"), knownvalue.StringExact("text")),
		at(tfjsonpath.New("cert_manager").AtMapKey("issuer_ref").AtMapKey("group"), knownvalue.StringExact("cert-manager.io")),
		at(tfjsonpath.New("server"), knownvalue.Null()),
		at(tfjsonpath.New("istio").AtMapKey("revisions"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("default")})),
		at(tfjsonpath.New("istiod_tls"), knownvalue.ObjectPartial(map[string]knownvalue.Check{
			"certificate_duration": knownvalue.StringExact("1h"), "certificate_renew_before": knownvalue.StringExact("30m"),
			"max_certificate_duration": knownvalue.StringExact("1h"), "private_key_algorithm": knownvalue.StringExact("RSA"),
			"private_key_size": knownvalue.Int64Exact(2048), "common_name": knownvalue.Null(),
		})),
		at(tfjsonpath.New("tolerations"), knownvalue.Null()),
		// The operator's first Update wrote `resources: {}`: null.
		at(tfjsonpath.New("resources"), knownvalue.Null()),
	}
	create.Check = resource.ComposeAggregateTestCheckFunc(
		acctest.CheckObjectFields(t, l.get, map[string]any{
			"spec.istioCSRConfig.certManager.issuerRef":          map[string]any{"name": l.issuer, "kind": "Issuer", "group": "cert-manager.io"},
			"spec.istioCSRConfig.server":                         nil,
			"spec.istioCSRConfig.istiodTLSConfig.privateKeySize": int64(2048),
			// The operator's first Update re-serialised the defaults.
			"spec.istioCSRConfig.istiodTLSConfig.certificateRenewBefore": "30m0s",
			"spec.istioCSRConfig.resources":                              map[string]any{},
			"spec.istioCSRConfig.istio.revisions":                        []any{"default"},
			"spec.istioCSRConfig.logLevel":                               int64(1),
			"spec.istioCSRConfig.affinity":                               nil,
			"spec.controllerConfig":                                      nil,
		}),
		// The defaults above came from the API server: the provider applied
		// only the configured fields.
		checkAppliedFields(t, l.get, []string{
			"spec.istioCSRConfig.certManager.issuerRef.name", "spec.istioCSRConfig.certManager.issuerRef.kind",
			"spec.istioCSRConfig.certManager.issuerRef.group", "spec.istioCSRConfig.istiodTLSConfig.trustDomain",
			"spec.istioCSRConfig.istio.namespace",
		}),
	)
	l.test(t, create)
}

// TestAccIstioCSR_updateInPlace: every mutable field set at once is an
// update in place that import reads back the same; back to the smallest
// configuration, every field the provider set is released, in place: those
// with a CRD default return to it and the others (server included)
// disappear.
func TestAccIstioCSR_updateInPlace(t *testing.T) {
	l := newIstioCSRLifecycle(t)
	acctest.CreateConfigMap(t, acctest.East, l.ns, "istio-ca-root", map[string]any{"ca.crt": acctest.TestCertificatePEM(t, true)})
	var firstUID k8stypes.UID

	full := l.step(t, "full.tf", config.Variables{"issuer": config.StringVariable(l.issuer)})
	full.PreConfig = l.recordUID(t, &firstUID)
	full.ConfigPlanChecks = resource.ConfigPlanChecks{
		PreApply: []plancheck.PlanCheck{
			plancheck.ExpectResourceAction(istioCSRAddr, plancheck.ResourceActionUpdate),
			plancheck.ExpectKnownValue(istioCSRAddr, tfjsonpath.New("grpc_endpoint"), knownvalue.StringExact("cert-manager-istio-csr."+l.ns+".svc:443")),
		},
		PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
	}
	full.ConfigStateChecks = []statecheck.StateCheck{
		statecheck.ExpectKnownValue(istioCSRAddr, tfjsonpath.New("conditions").AtMapKey("Ready").AtMapKey("status"), knownvalue.StringExact("True")),
		// The operator never sets observedGeneration.
		statecheck.ExpectKnownValue(istioCSRAddr, tfjsonpath.New("conditions").AtMapKey("Ready").AtMapKey("observed_generation"), knownvalue.Int64Exact(0)),
	}
	full.Check = resource.ComposeAggregateTestCheckFunc(
		acctest.CheckObjectFields(t, l.get, map[string]any{
			"spec.istioCSRConfig.logLevel":                               int64(3),
			"spec.istioCSRConfig.logFormat":                              "json",
			"spec.istioCSRConfig.istioDataPlaneNamespaceSelector":        "maistra.io/member-of=istio-system",
			"spec.istioCSRConfig.certManager.istioCACertificate":         map[string]any{"name": "istio-ca-root", "namespace": l.ns, "key": "ca.crt"},
			"spec.istioCSRConfig.istiodTLSConfig.certificateDNSNames":    []any{"istiod.istio-system.svc", "istiod-basic.istio-system.svc"},
			"spec.istioCSRConfig.istiodTLSConfig.certificateDuration":    "2h",
			"spec.istioCSRConfig.istiodTLSConfig.maxCertificateDuration": "4h",
			"spec.istioCSRConfig.istiodTLSConfig.commonName":             "istiod.istio-system.svc",
			"spec.istioCSRConfig.server":                                 map[string]any{"clusterID": "east", "port": int64(443)},
			"spec.istioCSRConfig.istio.revisions":                        []any{"default", "canary"},
			"spec.istioCSRConfig.resources":                              map[string]any{"requests": map[string]any{"cpu": "10m", "memory": "32Mi"}, "limits": map[string]any{"memory": "128Mi"}},
			"spec.istioCSRConfig.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "kubernetes.io/os", "operator": "In", "values": []any{"linux"}}}}},
			"spec.istioCSRConfig.tolerations": []any{
				map[string]any{"key": "infra", "operator": "Exists", "effect": "NoSchedule"},
				map[string]any{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": int64(300)},
			},
			"spec.istioCSRConfig.nodeSelector": map[string]any{"kubernetes.io/os": "linux"},
			"spec.controllerConfig.labels":     map[string]any{"team": "mesh"},
		}),
		l.checkUID(&firstUID, true),
	)

	release := l.minimal(t)
	release.ConfigPlanChecks = resource.ConfigPlanChecks{
		PreApply: []plancheck.PlanCheck{
			plancheck.ExpectResourceAction(istioCSRAddr, plancheck.ResourceActionUpdate),
			plancheck.ExpectKnownValue(istioCSRAddr, tfjsonpath.New("log_level"), knownvalue.Int64Exact(1)),
			plancheck.ExpectKnownValue(istioCSRAddr, tfjsonpath.New("server"), knownvalue.Null()),
			plancheck.ExpectKnownValue(istioCSRAddr, tfjsonpath.New("istio").AtMapKey("revisions"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("default")})),
			plancheck.ExpectKnownValue(istioCSRAddr, tfjsonpath.New("tolerations"), knownvalue.Null()),
		},
		PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
	}
	release.Check = resource.ComposeAggregateTestCheckFunc(
		acctest.CheckObjectFields(t, l.get, map[string]any{
			"spec.istioCSRConfig.logLevel":                            int64(1),
			"spec.istioCSRConfig.logFormat":                           "text",
			"spec.istioCSRConfig.istiodTLSConfig.certificateDuration": "1h",
			"spec.istioCSRConfig.istiodTLSConfig.commonName":          nil,
			"spec.istioCSRConfig.server":                              nil,
			"spec.istioCSRConfig.istio.revisions":                     []any{"default"},
			"spec.istioCSRConfig.tolerations":                         nil,
			"spec.istioCSRConfig.affinity":                            nil,
			"spec.controllerConfig":                                   nil,
		}),
		l.checkUID(&firstUID, true),
	)

	l.test(t, l.minimal(t), full, l.importStep(t, "full.tf", config.Variables{"issuer": config.StringVariable(l.issuer)}), release)
}

// TestAccIstioCSR_immutableReplaces: fields the CRD makes immutable replace
// the object; the new agent gets another gRPC port.
func TestAccIstioCSR_immutableReplaces(t *testing.T) {
	l := newIstioCSRLifecycle(t)
	clusterIssuer := "csr-" + l.ns
	acctest.CertManagerIssuer(t, acctest.East, "", clusterIssuer, true)
	var firstUID k8stypes.UID

	replace := l.step(t, "immutable.tf", config.Variables{"cluster_issuer": config.StringVariable(clusterIssuer)})
	replace.PreConfig = l.recordUID(t, &firstUID)
	replace.ConfigPlanChecks = resource.ConfigPlanChecks{
		PreApply: []plancheck.PlanCheck{
			plancheck.ExpectResourceAction(istioCSRAddr, plancheck.ResourceActionDestroyBeforeCreate),
			plancheck.ExpectUnknownValue(istioCSRAddr, tfjsonpath.New("grpc_endpoint")),
		},
		PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
	}
	replace.ConfigStateChecks = []statecheck.StateCheck{
		statecheck.ExpectKnownValue(istioCSRAddr, tfjsonpath.New("grpc_endpoint"), knownvalue.StringExact("cert-manager-istio-csr."+l.ns+".svc:6443")),
	}
	replace.Check = resource.ComposeAggregateTestCheckFunc(
		acctest.CheckObjectFields(t, l.get, map[string]any{
			"spec.istioCSRConfig.certManager.issuerRef":               map[string]any{"name": clusterIssuer, "kind": "ClusterIssuer", "group": "cert-manager.io"},
			"spec.istioCSRConfig.istiodTLSConfig.privateKeyAlgorithm": "ECDSA",
			"spec.istioCSRConfig.istiodTLSConfig.privateKeySize":      int64(384),
			"spec.istioCSRConfig.server.port":                         int64(6443),
			"spec.istioCSRConfig.tolerations":                         nil,
			"spec.controllerConfig":                                   nil,
		}),
		l.checkUID(&firstUID, false),
	)

	l.test(t, l.minimal(t), replace)
}

// TestAccIstioCSROperator_missingIssuerRetried ("A missing issuer is
// retried"): an issuer that does not exist where the operator looks (an
// Issuer of that name in the IstioCSR's own namespace does not count) is
// retried by the operator (deployments.go getIssuer: Ready=False Progressing,
// never Degraded): the plan warns, the apply waits until its timeout and
// quotes the operator, and once the issuer exists in istio.namespace the next
// apply replaces the tainted object and succeeds.
func TestAccIstioCSROperator_missingIssuerRetried(t *testing.T) {
	istioCSRAlone(t)
	ns := acctest.UniqueNamespace(t, acctest.East, "csrmiss")
	issuer := "late-" + ns
	acctest.CertManagerIssuer(t, acctest.East, ns, issuer, true)
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
				ExpectError: regexp.MustCompile(`(?s)IstioCSR Not Ready.*not\s+ready\s+within\s+5s.*Ready=False\s+\(Progressing\):\s+reconciliation\s+failed,\s+retrying:.*failed\s+to\s+fetch\s+issuer.*Degraded=False`),
			},
			{
				PreConfig: func() { acctest.CertManagerIssuer(t, acctest.East, istioCSRIstioNamespace, issuer, true) },
				Config:    istioCSRConfig(t, acctest.East, ns, minimalIstioCSRBody(issuer)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionDestroyBeforeCreate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: istioCSRServed(addr),
			},
		},
	})
}

// TestAccIstioCSR_brownfieldImport: an IstioCSR another tool created with
// only the required fields, as the operator's documentation creates it (the
// API server fills in the CRD defaults; server stays absent), is refused at
// create and adopted by import, with `terraform import` and with an import
// block. Either way the smallest configuration then plans nothing, and the
// import writes nothing to the object.
func TestAccIstioCSR_brownfieldImport(t *testing.T) {
	istioCSRAlone(t)
	const addr = "zerotrust_istio_csr.this"
	imported := []statecheck.StateCheck{
		statecheck.ExpectKnownValue(addr, tfjsonpath.New("server"), knownvalue.Null()),
		statecheck.ExpectKnownValue(addr, tfjsonpath.New("log_level"), knownvalue.Int64Exact(1)),
		statecheck.ExpectKnownValue(addr, tfjsonpath.New("istio").AtMapKey("revisions"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("default")})),
		statecheck.ExpectKnownValue(addr, tfjsonpath.New("cert_manager").AtMapKey("issuer_ref").AtMapKey("group"), knownvalue.StringExact("cert-manager.io")),
		statecheck.ExpectKnownValue(addr, tfjsonpath.New("conditions").AtMapKey("Ready").AtMapKey("status"), knownvalue.StringExact("True")),
	}

	t.Run("terraform import", func(t *testing.T) {
		istioCSRAlone(t)
		ns, untouched := brownfieldIstioCSR(t, nil)
		// The default connection (east) this time: no cluster attribute.
		config := istioCSRConfig(t, "", ns, minimalIstioCSRBody(istioCSRIssuerName(ns)))
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			CheckDestroy:             acctest.CheckIstioCSRGone(t, acctest.East, ns),
			Steps: []resource.TestStep{
				{
					Config:      config,
					ExpectError: regexp.MustCompile(`(?s)Object Already Exists.*` + regexp.QuoteMeta(ns) + `.*terraform import`),
				},
				{
					Config:             config,
					ResourceName:       addr,
					ImportState:        true,
					ImportStateKind:    resource.ImportCommandWithID,
					ImportStateId:      ns,
					ImportStatePersist: true,
					ImportStateCheck: func(states []*terraform.InstanceState) error {
						if len(states) != 1 || states[0].Attributes["id"] != ns || states[0].Attributes["server.port"] != "" {
							return fmt.Errorf("imported %d objects, want 1 with id %q and no server: %v", len(states), ns, states)
						}
						return nil
					},
				},
				{
					Config: config,
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					ConfigStateChecks: imported,
					Check:             untouched,
				},
			},
		})
	})

	t.Run("import block", func(t *testing.T) {
		istioCSRAlone(t)
		ns, untouched := brownfieldIstioCSR(t, nil)
		config := istioCSRConfig(t, acctest.East, ns, minimalIstioCSRBody(istioCSRIssuerName(ns)))
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			CheckDestroy:             acctest.CheckIstioCSRGone(t, acctest.East, ns),
			Steps: []resource.TestStep{
				{
					Config: config + fmt.Sprintf("\nimport {\n  to = %s\n  id = %q\n}\n", addr, "east/"+ns),
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction(addr, plancheck.ResourceActionNoop),
							plancheck.ExpectEmptyPlan(),
						},
						PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					ConfigStateChecks: imported,
					Check:             untouched,
				},
			},
		})
	})

	// Values another tool set where the configuration says nothing are
	// neither planned away nor claimed.
	t.Run("values set by another tool", func(t *testing.T) {
		istioCSRAlone(t)
		ns, untouched := brownfieldIstioCSR(t, map[string]any{
			"logLevel":                        int64(3),
			"server":                          map[string]any{"clusterID": "east", "port": int64(8443)},
			"istiodTLSConfig.commonName":      "istiod.istio-system.svc",
			"istio.revisions":                 []any{"default", "canary"},
			"tolerations":                     []any{map[string]any{"key": "infra", "operator": "Exists"}},
			"istioDataPlaneNamespaceSelector": "maistra.io/member-of=istio-system",
		})
		config := istioCSRConfig(t, acctest.East, ns, minimalIstioCSRBody(istioCSRIssuerName(ns)))
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			CheckDestroy:             acctest.CheckIstioCSRGone(t, acctest.East, ns),
			Steps: []resource.TestStep{
				{
					Config: config + fmt.Sprintf("\nimport {\n  to = %s\n  id = %q\n}\n", addr, "east/"+ns),
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply:             []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
						PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					ConfigStateChecks: []statecheck.StateCheck{
						statecheck.ExpectKnownValue(addr, tfjsonpath.New("log_level"), knownvalue.Int64Exact(3)),
						statecheck.ExpectKnownValue(addr, tfjsonpath.New("server"), knownvalue.ObjectExact(map[string]knownvalue.Check{
							"cluster_id": knownvalue.StringExact("east"), "port": knownvalue.Int64Exact(8443),
						})),
						statecheck.ExpectKnownValue(addr, tfjsonpath.New("tolerations"), knownvalue.ListSizeExact(1)),
						statecheck.ExpectKnownValue(addr, tfjsonpath.New("grpc_endpoint"), knownvalue.StringExact("cert-manager-istio-csr."+ns+".svc:8443")),
					},
					Check: untouched,
				},
				{
					// A change in the configuration sends only what it sets
					// (here a field nobody owns yet): the other tool's fields
					// stay, and still plan nothing.
					Config: istioCSRConfig(t, acctest.East, ns, minimalIstioCSRBody(istioCSRIssuerName(ns))+"\n  controller_config = { labels = { team = \"mesh\" } }"),
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
							plancheck.ExpectKnownValue(addr, tfjsonpath.New("log_level"), knownvalue.Int64Exact(3)),
						},
						PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					Check: resource.ComposeAggregateTestCheckFunc(
						acctest.CheckObjectFields(t, func() (*unstructured.Unstructured, error) { return getIstioCSR(t, acctest.East, ns) }, map[string]any{
							"spec.controllerConfig.labels":    map[string]any{"team": "mesh"},
							"spec.istioCSRConfig.logLevel":    int64(3),
							"spec.istioCSRConfig.server":      map[string]any{"clusterID": "east", "port": int64(8443)},
							"spec.istioCSRConfig.tolerations": []any{map[string]any{"key": "infra", "operator": "Exists"}},
						}),
						checkAppliedFields(t, func() (*unstructured.Unstructured, error) { return getIstioCSR(t, acctest.East, ns) }, []string{
							"spec.istioCSRConfig.certManager.issuerRef.name", "spec.istioCSRConfig.certManager.issuerRef.kind",
							"spec.istioCSRConfig.certManager.issuerRef.group", "spec.istioCSRConfig.istiodTLSConfig.trustDomain",
							"spec.istioCSRConfig.istio.namespace", "spec.controllerConfig.labels.team",
						}),
					),
				},
			},
		})
	})
}

// brownfieldIstioCSR creates an IstioCSR in a new namespace the way the
// operator's documentation does (kubectl create, required fields only, plus
// extra: dotted paths under spec.istioCSRConfig), waits
// for the stand-in operator's status, and returns a check that the object's
// spec and field managers are still as they were then.
func brownfieldIstioCSR(t *testing.T, extra map[string]any) (string, resource.TestCheckFunc) {
	t.Helper()
	ns := acctest.UniqueNamespace(t, acctest.East, "csrbrown")
	issuer := istioCSRIssuer(t, ns, true)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operator.openshift.io/v1alpha1", "kind": "IstioCSR",
		"metadata": map[string]any{"name": "default", "namespace": ns},
		"spec": map[string]any{"istioCSRConfig": map[string]any{
			"certManager":     map[string]any{"issuerRef": map[string]any{"name": issuer, "kind": "Issuer", "group": "cert-manager.io"}},
			"istiodTLSConfig": map[string]any{"trustDomain": "cluster.local"},
			"istio":           map[string]any{"namespace": istioCSRIstioNamespace},
		}},
	}}
	for field, value := range extra {
		if err := unstructured.SetNestedField(obj.Object, value, append([]string{"spec", "istioCSRConfig"}, strings.Split(field, ".")...)...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := acctest.Dynamic(t, acctest.East).Resource(istioCSRGVR).Namespace(ns).Create(context.Background(), obj,
		metav1.CreateOptions{FieldManager: "kubectl-create"}); err != nil {
		t.Fatal(err)
	}
	var before *unstructured.Unstructured
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		got, err := getIstioCSR(t, acctest.East, ns)
		if err != nil {
			t.Fatal(err)
		}
		if conditions, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions"); len(conditions) > 0 {
			before = got
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stand-in operator wrote no status for %s/default within a minute", ns)
		}
	}
	if _, found, _ := unstructured.NestedMap(before.Object, "spec", "istioCSRConfig", "server"); found != (extra["server"] != nil) {
		t.Fatalf("%s/default: server present = %v, which the test does not expect", ns, found)
	}
	return ns, func(*terraform.State) error {
		after, err := getIstioCSR(t, acctest.East, ns)
		if err != nil {
			return err
		}
		if after.GetGeneration() != before.GetGeneration() || !reflect.DeepEqual(after.Object["spec"], before.Object["spec"]) {
			return fmt.Errorf("%s/default changed after the import: generation %d -> %d, spec %v -> %v",
				ns, before.GetGeneration(), after.GetGeneration(), before.Object["spec"], after.Object["spec"])
		}
		if managers := fieldManagers(after); !reflect.DeepEqual(managers, fieldManagers(before)) {
			return fmt.Errorf("%s/default field managers changed after the import: %v -> %v", ns, fieldManagers(before), managers)
		}
		return nil
	}
}

// fieldManagers lists obj's field managers, sorted: the API server moves a
// manager's entry when that manager writes again (the stand-in operator's
// status updates), which is no change of who manages the object.
func fieldManagers(obj *unstructured.Unstructured) []string {
	var out []string
	for _, m := range obj.GetManagedFields() {
		out = append(out, m.Manager+"/"+string(m.Operation))
	}
	slices.Sort(out)
	return out
}

// checkAppliedFields checks that the provider's field manager applied
// exactly the given leaf fields (dotted paths) of the object.
func checkAppliedFields(t *testing.T, get func() (*unstructured.Unstructured, error), want []string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		obj, err := get()
		if err != nil {
			return err
		}
		var got []string
		for _, m := range obj.GetManagedFields() {
			if m.Manager != "zerotrust" || m.Operation != metav1.ManagedFieldsOperationApply || m.FieldsV1 == nil {
				continue
			}
			var fields map[string]any
			if err := json.Unmarshal(m.FieldsV1.Raw, &fields); err != nil {
				return err
			}
			got = append(got, fieldsV1Leaves(fields, "")...)
		}
		sort.Strings(got)
		sort.Strings(want)
		if !reflect.DeepEqual(got, want) {
			return fmt.Errorf("%s/%s: the provider applied %v, want %v", obj.GetNamespace(), obj.GetName(), got, want)
		}
		return nil
	}
}

// fieldsV1Leaves lists the leaf fields of a managedFields entry as dotted paths.
func fieldsV1Leaves(fields map[string]any, prefix string) []string {
	var out []string
	for k, v := range fields {
		name, ok := strings.CutPrefix(k, "f:")
		if !ok {
			continue
		}
		p := name
		if prefix != "" {
			p = prefix + "." + name
		}
		children, _ := v.(map[string]any)
		if leaves := fieldsV1Leaves(children, p); len(leaves) > 0 {
			out = append(out, leaves...)
		} else {
			out = append(out, p)
		}
	}
	return out
}

func TestAccIstioCSR_missingNamespaceAndCRD(t *testing.T) {
	missing := acctest.UniqueName("nosuchns")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      istioCSRConfig(t, acctest.West, missing, minimalIstioCSRBody("istio-ca")),
				ExpectError: regexp.MustCompile(`(?s)Namespace Not Found.*` + regexp.QuoteMeta(missing) + `.*does not exist`),
			},
			{
				Config:      istioCSRConfig(t, acctest.Bare, "cert-manager", minimalIstioCSRBody("istio-ca")),
				ExpectError: regexp.MustCompile(`(?s)CustomResourceDefinition Not Installed.*istiocsrs\.operator\.openshift\.io.*cert-manager\s+Operator`),
			},
		},
	})
}

// TestAccIstioCSR_unknownNested: nested values known only after apply (the
// output of another resource) plan as unknown, at create and at update,
// and apply.
func TestAccIstioCSR_unknownNested(t *testing.T) {
	istioCSRAlone(t)
	ns := acctest.UniqueNamespace(t, acctest.East, "csrunk")
	issuer := istioCSRIssuer(t, ns, true)
	const addr = "zerotrust_istio_csr.this"
	get := func() (*unstructured.Unstructured, error) { return getIstioCSR(t, acctest.East, ns) }
	config := func(revisions string) string {
		return fmt.Sprintf(`
resource "terraform_data" "istio" {
  input = { namespace = "istio-system", team = "mesh" }
}

resource "terraform_data" "revisions" {
  input = %s
}
`, revisions) + istioCSRConfig(t, acctest.East, ns, `
  cert_manager      = { issuer_ref = { name = "`+issuer+`", kind = "Issuer" } }
  istiod_tls        = { trust_domain = "cluster.local", certificate_dns_names = ["istiod.${terraform_data.istio.output.namespace}.svc"] }
  istio             = { namespace = terraform_data.istio.output.namespace, revisions = terraform_data.revisions.output }
  controller_config = { labels = { team = terraform_data.istio.output.team } }`)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckIstioCSRGone(t, acctest.East, ns),
		Steps: []resource.TestStep{
			{
				Config: config(`["default", "canary"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
						plancheck.ExpectUnknownValue(addr, tfjsonpath.New("istio").AtMapKey("namespace")),
						plancheck.ExpectUnknownValue(addr, tfjsonpath.New("istio").AtMapKey("revisions")),
						plancheck.ExpectUnknownValue(addr, tfjsonpath.New("istiod_tls").AtMapKey("certificate_dns_names").AtSliceIndex(0)),
						plancheck.ExpectUnknownValue(addr, tfjsonpath.New("controller_config").AtMapKey("labels").AtMapKey("team")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: acctest.CheckObjectFields(t, get, map[string]any{
					"spec.istioCSRConfig.istio":                               map[string]any{"namespace": "istio-system", "revisions": []any{"default", "canary"}},
					"spec.istioCSRConfig.istiodTLSConfig.certificateDNSNames": []any{"istiod.istio-system.svc"},
					"spec.controllerConfig.labels":                            map[string]any{"team": "mesh"},
				}),
			},
			{
				Config: config(`["default"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
						plancheck.ExpectUnknownValue(addr, tfjsonpath.New("istio").AtMapKey("revisions")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: acctest.CheckObjectFields(t, get, map[string]any{
					"spec.istioCSRConfig.istio.revisions": []any{"default"},
				}),
			},
		},
	})
}
