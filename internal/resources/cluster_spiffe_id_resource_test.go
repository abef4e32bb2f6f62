package resources_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

var csidGVR = schema.GroupVersionResource{Group: "spire.spiffe.io", Version: "v1alpha1", Resource: "clusterspiffeids"}

const csidTemplate = "spiffe://{{ .TrustDomain }}/ns/{{ .PodMeta.Namespace }}/sa/{{ .PodSpec.ServiceAccountName }}"

// csidFederation is a zerotrust_federated_trust_domain on cluster of peer,
// bootstrapped with the peer's bundle and waiting for SPIRE to hold it.
func csidFederation(t *testing.T, block, cluster string, peer *harness.Spire) string {
	t.Helper()
	bundle, err := peer.BundleShow(context.Background(), "spiffe")
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" %[1]q {
  cluster             = %[2]q
  trust_domain        = %[3]q
  bundle_endpoint_url = %[4]q
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = %[5]q
  }
  trust_domain_bundle      = %[6]q
  wait_for_bundle          = true
  delete_bundle_on_destroy = true
  timeouts {
    create = "2m"
    delete = "2m"
  }
}
`, block, cluster, peer.TrustDomain, peer.BundleEndpointURL, peer.EndpointSPIFFEID, string(bundle))
}

// startCSIDWorkload starts, in the background, a k8s_psat agent and a pod
// workload (namespace csid, label app=<app>) on s's cluster that accepts
// peer's workloads; the pod has no entry until a ClusterSPIFFEID selects it,
// so the workload serves only once the apply registered it. wait returns it.
func startCSIDWorkload(t *testing.T, s *harness.Spire, app, peer string) (wait func() *harness.Workload) {
	t.Helper()
	type result struct {
		w   *harness.Workload
		err error
	}
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		a, err := harness.StartSpireAgentWith(ctx, s, harness.SpireAgentOptions{Name: acctest.UniqueName("csid"), K8sPSAT: true})
		if err != nil {
			done <- result{err: err}
			return
		}
		t.Cleanup(func() { _ = a.Stop() })
		w, err := harness.StartPodWorkload(ctx, a, harness.PodWorkloadOptions{
			Namespace: "csid", Pod: acctest.UniqueName(app), ServiceAccount: app, Labels: map[string]string{"app": app},
			Allow: []string{"spiffe://" + peer}, SPIFFEID: "spiffe://" + s.TrustDomain + "/ns/csid/sa/" + app,
			ReadyTimeout: 4 * time.Minute,
		})
		if err == nil {
			t.Cleanup(func() { _ = w.Stop() })
		}
		done <- result{w, err}
	}()
	return func() *harness.Workload {
		t.Helper()
		r := <-done
		if r.err != nil {
			t.Fatalf("workload of %s: %v", s.TrustDomain, r.err)
		}
		return r.w
	}
}

// TestAccClusterSPIFFEID_sameApply creates the federation of east and west
// and a ClusterSPIFFEID on each that federates with the peer in ONE apply:
// Terraform orders them, the ClusterSPIFFEIDs wait until the pods' entries
// carry the federation, and then both ordered pairs of pod workloads
// handshake. Import of a ClusterSPIFFEID plans nothing.
func TestAccClusterSPIFFEID_sameApply(t *testing.T) {
	east, west := acctest.Spire(t, acctest.East), acctest.Spire(t, acctest.West)
	app := acctest.UniqueName("web")
	waitEast := startCSIDWorkload(t, east, app, west.TrustDomain)
	waitWest := startCSIDWorkload(t, west, app, east.TrustDomain)
	csid := func(block, cluster, peer string) string {
		return fmt.Sprintf(`
resource "zerotrust_cluster_spiffe_id" %[1]q {
  cluster            = %[2]q
  name               = %[4]q
  spiffe_id_template = %[5]q
  pod_selector = {
    match_labels = { app = %[4]q }
  }
  namespace_selector = {
    match_expressions = [{ key = "kubernetes.io/metadata.name", operator = "In", values = ["csid"] }]
  }
  federates_with = [%[3]q]
  ttl            = "1h"
  timeouts = {
    create = "3m"
  }
  depends_on = [zerotrust_federated_trust_domain.%[1]s]
}
`, block, cluster, peer, app, csidTemplate)
	}
	config := acctest.ProviderConfig(t) +
		csidFederation(t, "east", acctest.East, west) + csidFederation(t, "west", acctest.West, east) +
		csid("east", acctest.East, west.TrustDomain) + csid("west", acctest.West, east.TrustDomain)
	var start time.Time
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: func(s *terraform.State) error {
			for _, c := range []string{acctest.East, acctest.West} {
				if err := acctest.CheckGone(t, c, csidGVR, "", app)(s); err != nil {
					return err
				}
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				PreConfig: func() { start = time.Now() },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("zerotrust_cluster_spiffe_id.east", tfjsonpath.New("federation_problems"), knownvalue.ListExact(nil)),
					statecheck.ExpectKnownValue("zerotrust_cluster_spiffe_id.east", tfjsonpath.New("id"), knownvalue.StringExact("east/"+app)),
					statecheck.ExpectKnownValue("zerotrust_cluster_spiffe_id.west", tfjsonpath.New("class_name"), knownvalue.StringExact(harness.DefaultSpireClassName)),
					acctest.ClusterCheck(func(*terraform.State) error {
						t.Logf("apply of federation + ClusterSPIFFEIDs: %s", time.Since(start).Round(time.Millisecond))
						we, ww := waitEast(), waitWest()
						for _, p := range [][2]*harness.Workload{{we, ww}, {ww, we}} {
							if _, err := harness.WaitMTLS(context.Background(), p[0], p[1], true, 60*time.Second); err != nil {
								return fmt.Errorf("after the one apply, %s -> %s: %w", p[0].SPIFFEID, p[1].SPIFFEID, err)
							}
						}
						t.Logf("both ordered pairs handshake %s after the start of the apply", time.Since(start).Round(time.Millisecond))
						return nil
					}),
				},
			},
			{
				ResourceName:                         "zerotrust_cluster_spiffe_id.west",
				ImportState:                          true,
				ImportStateId:                        "west/" + app,
				ImportStateVerify:                    true,
				ImportStateVerifyIdentifierAttribute: "id",
				ImportStateVerifyIgnore:              []string{"timeouts", "timeouts.%", "timeouts.create"},
			},
		},
	})
}

// TestAccClusterSPIFFEID_entryFailureSurfaced: a ClusterSPIFFEID federating
// with a trust domain whose bundle SPIRE never gets (its endpoint is
// unreachable and it has no bootstrap bundle) fails the apply at the timeout,
// naming that trust domain; the next plan creates it again (no taint).
func TestAccClusterSPIFFEID_entryFailureSurfaced(t *testing.T) {
	acctest.Spire(t, acctest.East)
	td := acctest.UniqueName("never") + ".test"
	name := acctest.UniqueName("never")
	config := acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "never" {
  cluster             = "east"
  trust_domain        = %[1]q
  bundle_endpoint_url = "https://127.0.0.1:1"
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = "spiffe://%[1]s/spire/server"
  }
}

resource "zerotrust_cluster_spiffe_id" "never" {
  cluster            = "east"
  name               = %[2]q
  spiffe_id_template = %[3]q
  federates_with     = [zerotrust_federated_trust_domain.never.trust_domain]
  timeouts = {
    create = "8s"
  }
}
`, td, name, csidTemplate)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkCFTDsGone(t, map[string]string{"east": td}),
		Steps: []resource.TestStep{
			{
				Config:      config,
				ExpectError: regexp.MustCompile(`(?s)Workloads Do Not Federate.*holds no bundle of\s+"` + regexp.QuoteMeta(td) + `"`),
			},
			{
				// The next apply is a create again (the failed one returned no
				// state, so nothing is tainted or replaced), and fails the same way.
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("zerotrust_cluster_spiffe_id.never", plancheck.ResourceActionCreate),
				}},
				ExpectError: regexp.MustCompile(`(?s)Workloads Do Not Federate.*` + regexp.QuoteMeta(td)),
			},
		},
	})
	// The failed create left the object on the cluster without state (as
	// designed: nothing torn down); remove it for the tests after this one.
	err := acctest.Dynamic(t, acctest.East).Resource(csidGVR).Delete(context.Background(), name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("removing the ClusterSPIFFEID the failed create left: %v", err)
	}
}

// TestAccClusterSPIFFEID_planErrors: what spire-controller-manager would
// refuse is refused at plan, naming the attribute. A federates_with trust
// domain no federation of the cluster declares is the exception: an earlier
// resource of the same apply may declare it, so the plan warns and the
// apply refuses, before anything is written
// (TestAccClusterSPIFFEID_sameApplyOtherProvider shows the same apply
// declaring it).
func TestAccClusterSPIFFEID_planErrors(t *testing.T) {
	acctest.Spire(t, acctest.East)
	for _, tc := range []struct{ name, body, want string }{
		{"template parse", `spiffe_id_template = "spiffe://{{ .TrustDomain }/x"`, `(?s)Invalid SPIFFE ID Template.*spiffe_id_template.*unexpected "}"`},
		{"not an ID", `spiffe_id_template = "{{ .PodMeta.Name }}"`, `(?s)Invalid SPIFFE ID Template.*not a SPIFFE ID`},
		{"unknown field", `spiffe_id_template = "spiffe://{{ .TrustDomain }}/{{ .PodMeta.Nope }}"`, `(?s)Invalid SPIFFE ID Template.*Nope`},
		{"dns template", `
  spiffe_id_template = "spiffe://{{ .TrustDomain }}/x"
  dns_name_templates = ["{{ .PodMeta.Name "]`, `(?s)Invalid Template.*dns_name_templates\[0\].*unclosed action`},
		{"selector values", `
  spiffe_id_template = "spiffe://{{ .TrustDomain }}/x"
  pod_selector = { match_expressions = [{ key = "app", operator = "Exists", values = ["x"] }] }`, `(?s)Invalid Label Selector Requirement.*match_expressions\[0\]\.values.*Exists takes no\s+values`},
		{"malformed trust domain", `
  spiffe_id_template = "spiffe://{{ .TrustDomain }}/x"
  federates_with = ["Not A Domain"]`, `(?s)federates_with`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config: acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_cluster_spiffe_id" "bad" {
  cluster = "east"
  name    = "bad"
  %s
}
`, tc.body),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
	t.Run("undeclared trust domain", undeclaredTrustDomain)
}

// undeclaredTrustDomain: the plan warns about a trust domain no federation
// of the cluster declares, and the apply refuses it with the same words
// before anything is written: a create leaves no ClusterSPIFFEID on the
// cluster and nothing in state, an update that adds it leaves the object's
// federatesWith and the state as they were.
func undeclaredTrustDomain(t *testing.T) {
	name := acctest.UniqueName("undecl")
	config := func(federatesWith string) string {
		return acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_cluster_spiffe_id" "bad" {
  cluster            = "east"
  name               = %q
  spiffe_id_template = "spiffe://{{ .TrustDomain }}/x"
  pod_selector = {
    match_labels = { app = %[1]q }
  }
  %s
  # Short: were the apply to write the object, its wait would fail soon.
  timeouts = {
    create = "10s"
    update = "10s"
  }
}
`, name, federatesWith)
	}
	facts := `Attribute federates_with: Cluster "east" has no federation with "nobody-declares.test"`
	refused := func(w *cliWorkspace, what string, check func() error, wantState string) {
		t.Helper()
		plan := w.run("plan")
		t.Logf("plan of the %s with an undeclared trust domain:\n%s", what, plan)
		for _, want := range []string{"Warning: Trust Domain Not Federated", facts,
			"This is a warning at plan because an earlier resource of the same apply may create the federation; the apply asks again before it writes the ClusterSPIFFEID"} {
			if !strings.Contains(plan, want) {
				t.Fatalf("plan of the %s with an undeclared trust domain: want %q in the output", what, want)
			}
		}
		if strings.Contains(plan, "Error:") {
			t.Fatalf("plan of the %s with an undeclared trust domain fails", what)
		}
		out, code := acctest.Terraform(t, "terraform", w.dir, w.reattach, "apply", "-auto-approve")
		apply := strings.Join(strings.Fields(out), " ")
		t.Logf("apply of the %s with an undeclared trust domain:\n%s", what, apply)
		if code == 0 || !strings.Contains(apply, "Error: Trust Domain Not Federated") || !strings.Contains(apply, facts) {
			t.Fatalf("apply of the %s with an undeclared trust domain: want it to fail with %q", what, facts)
		}
		if err := check(); err != nil {
			t.Fatalf("after the refused %s: %v", what, err)
		}
		if state := strings.TrimSpace(acctest.MustTerraform(t, "terraform", w.dir, w.reattach, "state", "list")); state != wantState {
			t.Fatalf("after the refused %s, the state holds %q, want %q", what, state, wantState)
		}
	}
	csids := acctest.Dynamic(t, acctest.East).Resource(csidGVR)
	w := newCLIWorkspace(t)
	w.write(config(`federates_with = ["nobody-declares.test"]`))
	w.run("init")
	refused(w, "create", func() error {
		if _, err := csids.Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the ClusterSPIFFEID %s: want NotFound, got %v", name, err)
		}
		return nil
	}, "")
	w.write(config(""))
	w.run("apply", "-auto-approve")
	w.write(config(`federates_with = ["nobody-declares.test"]`))
	refused(w, "update", func() error {
		obj, err := csids.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if list, found, _ := unstructured.NestedStringSlice(obj.Object, "spec", "federatesWith"); found {
			return fmt.Errorf("the ClusterSPIFFEID %s has spec.federatesWith %q, want none", name, list)
		}
		return nil
	}, "zerotrust_cluster_spiffe_id.bad")
	w.run("destroy", "-auto-approve")
}

// bootstrapCFTDSpec is the spec of a ClusterFederatedTrustDomain of the
// made-up trust domain td, of the lab's class: its endpoint answers nothing,
// and its bootstrap bundle (a throwaway CA) is what SPIRE holds of td, so a
// ClusterSPIFFEID selecting no pod federates with td as soon as
// spire-controller-manager passed the bundle on.
func bootstrapCFTDSpec(t *testing.T, td string) map[string]any {
	t.Helper()
	block, _ := pem.Decode([]byte(acctest.TestCertificatePEM(t, true)))
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	bundle := spiffebundle.New(spiffeid.RequireTrustDomainFromString(td))
	bundle.AddX509Authority(cert)
	bundleJSON, err := bundle.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{
		"trustDomain": td, "bundleEndpointURL": "https://127.0.0.1:1", "className": harness.DefaultSpireClassName,
		"bundleEndpointProfile": map[string]any{"type": "https_spiffe", "endpointSPIFFEID": "spiffe://" + td + "/spire/server"},
		"trustDomainBundle":     string(bundleJSON),
	}
}

// TestAccClusterSPIFFEID_sameApplyOtherProvider: the ClusterFederatedTrustDomain
// is created by another provider's resource earlier in the same apply (as a
// kubernetes_manifest would), which the plan cannot see. The plan only
// warns, so the one apply creates the federation, then the ClusterSPIFFEID,
// whose create finds the federation and ends when SPIRE holds the peer's
// bundle (its bootstrap bundle: the made-up peer has no endpoint).
func TestAccClusterSPIFFEID_sameApplyOtherProvider(t *testing.T) {
	acctest.Spire(t, acctest.East)
	name := acctest.UniqueName("foreign")
	td := name + ".test"
	spec, err := json.Marshal(bootstrapCFTDSpec(t, td))
	if err != nil {
		t.Fatal(err)
	}
	const addr = "zerotrust_cluster_spiffe_id.this"
	config := acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "ztfixture_cluster_federated_trust_domain" "peer" {
  name = %[1]q
  spec = %[2]q
}

resource "zerotrust_cluster_spiffe_id" "this" {
  cluster            = "east"
  name               = %[1]q
  spiffe_id_template = %[3]q
  pod_selector = {
    match_labels = { app = %[1]q }
  }
  federates_with = [%[4]q]
  timeouts = {
    create = "2m"
  }
  depends_on = [ztfixture_cluster_federated_trust_domain.peer]
}
`, name, string(spec), csidTemplate, td)
	cftdGVR := kube.ClusterFederatedTrustDomain.GVR()
	if _, err := acctest.Dynamic(t, acctest.East).Resource(cftdGVR).Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("before the apply, the ClusterFederatedTrustDomain %s: want NotFound, got %v", name, err)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.WithFixtures(t, acctest.East),
		CheckDestroy: func(s *terraform.State) error {
			if err := acctest.CheckGone(t, acctest.East, csidGVR, "", name)(s); err != nil {
				return err
			}
			return acctest.CheckGone(t, acctest.East, cftdGVR, "", name)(s)
		},
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("ztfixture_cluster_federated_trust_domain.peer", plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("federation_problems"), knownvalue.ListExact(nil)),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("federates_with"), knownvalue.SetExact([]knownvalue.Check{knownvalue.StringExact(td)})),
			},
		}},
	})
}

// TestAccClusterSPIFFEID_classNotServed: a class_name that is not the
// provider's spire.class_name, and of which no ClusterSPIFFEID on the
// cluster has been rendered by a controller, warns at plan, naming the
// class and the cluster; the provider's class plans without it.
func TestAccClusterSPIFFEID_classNotServed(t *testing.T) {
	acctest.Spire(t, acctest.East)
	name := acctest.UniqueName("cls")
	config := func(class string) string {
		attr := ""
		if class != "" {
			attr = fmt.Sprintf("class_name = %q", class)
		}
		return acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_cluster_spiffe_id" "cls" {
  cluster            = "east"
  name               = %q
  spiffe_id_template = %q
  %s
}
`, name, csidTemplate, attr)
	}
	const warning = "Warning: No Controller Known to Serve This Class"
	w := newCLIWorkspace(t)
	w.write(config("nobody-serves-this"))
	out := w.run("plan")
	t.Logf("plan with an unserved class: %s", out)
	for _, want := range []string{warning, `The class of this ClusterSPIFFEID is "nobody-serves-this"`,
		`spire.class_name is "` + harness.DefaultSpireClassName + `"`, `on cluster "east"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan with an unserved class does not say %q", want)
		}
	}
	w.write(config(""))
	if out := w.run("plan"); strings.Contains(out, warning) {
		t.Errorf("the plan with the provider's class warns: %s", out)
	}
}
