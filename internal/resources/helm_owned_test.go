package resources_test

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck/queryfilter"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// helmCluster is the cluster of the lab laid out as the SPIFFE Helm chart
// does (release "spire" in spire-server, with spire-controller-manager);
// its chart values declare the federation with helmPeerKey.
const (
	helmCluster = "helmchart"
	helmPeerKey = "peer"
)

// helmSpires are the chart's server and its standalone peer.
type helmSpires struct{ chart, peer *harness.Spire }

// helmSpiresOnce starts them once per test binary for the tests of this
// file; they stop at exit.
var helmSpiresOnce = sync.OnceValues(func() (helmSpires, error) { return startHelmSpires() })

// startHelmSpires starts a standalone peer serving its bundle endpoint,
// and on helmCluster a server whose chart values declare the
// ClusterFederatedTrustDomain for the peer (with its bundle). That server
// publishes its bundle as the chart's notifier.k8sBundle does (PEM
// bundle.crt from SPIRE's Notifier "k8sbundle"), the chart's other case:
// the chart's default publisher runs in the other chart-layout tests.
func startHelmSpires() (helmSpires, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	peer, err := harness.StartSpire(ctx, nil, harness.SpireOptions{TrustDomain: "helmpeer.zt.test", Standalone: true})
	if err != nil {
		return helmSpires{}, err
	}
	acctest.AtExit(func() { _ = peer.Stop() })
	bundle, err := peer.BundleShow(ctx, "spiffe")
	if err != nil {
		return helmSpires{}, err
	}
	chart, err := harness.StartSpire(ctx, helmLabCluster, harness.SpireOptions{
		TrustDomain: "helmchart.zt.test", Helm: true, HelmNotifier: true, ControllerManager: true,
		HelmFederatedTrustDomains: map[string]harness.HelmFederatedTrustDomain{helmPeerKey: {
			TrustDomain: peer.TrustDomain, BundleEndpointURL: peer.BundleEndpointURL,
			EndpointSPIFFEID: peer.EndpointSPIFFEID, TrustDomainBundle: string(bundle),
		}},
	})
	if err != nil {
		return helmSpires{}, err
	}
	acctest.AtExit(func() { _ = chart.Stop() })
	return helmSpires{chart: chart, peer: peer}, nil
}

// helmLabCluster is set by helmLab before helmSpiresOnce first runs.
var helmLabCluster *harness.Cluster

// helmLab returns the helm-layout servers, starting the lab and them on
// first use.
func helmLab(t *testing.T) helmSpires {
	t.Helper()
	if helmLabCluster == nil {
		helmLabCluster = acctest.LabFor(t, "helm-owned", harness.Options{Names: []string{helmCluster}}).Cluster(helmCluster)
	}
	s, err := helmSpiresOnce()
	if err != nil {
		t.Fatalf("starting the helm-layout SPIRE servers: %v", err)
	}
	return s
}

// helmProvider is the provider block for the chart's cluster, with the
// chart's namespace and class name as the provider's spire defaults.
func helmProvider(t *testing.T, s helmSpires) string {
	t.Helper()
	return strings.Replace(acctest.ProviderConfigFor(t, s.chart.Cluster), "provider \"zerotrust\" {\n",
		fmt.Sprintf("provider \"zerotrust\" {\n  spire = { namespace = %q, class_name = %q }\n", s.chart.Namespace, s.chart.ClassName), 1)
}

// TestAccHelmOwned_refusedAndListed: what a Helm release owns is refused at
// plan to the resources that would own it (a federation of the trust domain
// the chart's values federate with, a ClusterSPIFFEID under the chart's
// name) and to an import, each error naming the release and where the
// chart's values declare it; `terraform query` lists the release's objects
// marked as Helm's.
func TestAccHelmOwned_refusedAndListed(t *testing.T) {
	s := helmLab(t)
	provider := helmProvider(t, s)
	defaultCSID := harness.HelmObjectName(s.chart.Namespace, harness.HelmDefaultClusterSPIFFEID)
	helmFTD := harness.HelmObjectName(s.chart.Namespace, helmPeerKey)
	refusal := helmRefusal
	owner := `owned by Helm release "spire" in namespace "spire-server"`
	csid := fmt.Sprintf(`
resource "zerotrust_cluster_spiffe_id" "chart" {
  cluster            = %q
  name               = %q
  spiffe_id_template = %q
}
`, helmCluster, defaultCSID, csidTemplate)
	listBlock := func(typ, name string) string {
		return fmt.Sprintf("list %q %q {\n  provider = zerotrust\n  config {\n    cluster = %q\n  }\n}\n", typ, name, helmCluster)
	}
	release := " [Helm release spire-server/spire]"
	resource.Test(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0)},
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: provider + fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "peer" {
  cluster             = %q
  trust_domain        = %q
  bundle_endpoint_url = %q
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = %q
  }
}
`, helmCluster, s.peer.TrustDomain, s.peer.BundleEndpointURL, s.peer.EndpointSPIFFEID),
				PlanOnly: true,
				ExpectError: refusal(`ClusterFederatedTrustDomain "`+helmFTD+`"`, owner,
					"(controllerManager.identities.clusterFederatedTrustDomains), or remove it there first"),
			},
			{
				Config:      provider + csid,
				PlanOnly:    true,
				ExpectError: refusal(`ClusterSPIFFEID "`+defaultCSID+`"`, owner, "(controllerManager.identities.clusterSPIFFEIDs)"),
			},
			{
				Config:        provider + csid,
				ResourceName:  "zerotrust_cluster_spiffe_id.chart",
				ImportState:   true,
				ImportStateId: helmCluster + "/" + defaultCSID,
				ExpectError:   refusal(owner, "Terraform neither takes over nor imports"),
			},
			// The query runs beside the configuration of the step before.
			{Config: provider},
			{
				Query:  true,
				Config: listBlock("zerotrust_cluster_spiffe_id", "csids") + listBlock("zerotrust_federated_trust_domain", "ftds"),
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectResourceDisplayName("zerotrust_cluster_spiffe_id.csids",
						queryfilter.ByResourceIdentity(wantIdentity(helmCluster, "name", defaultCSID)),
						knownvalue.StringExact(helmCluster+"/"+defaultCSID+release)),
					querycheck.ExpectResourceDisplayName("zerotrust_federated_trust_domain.ftds",
						queryfilter.ByResourceIdentity(wantIdentity(helmCluster, "name", helmFTD)),
						knownvalue.StringExact(fmt.Sprintf("%s/%s (federates with %s)%s", helmCluster, helmFTD, s.peer.TrustDomain, release))),
				},
			},
		},
	})
}

// helmRefusal matches the refusal of an object a Helm release owns, with
// words in order across its line breaks.
func helmRefusal(words ...string) *regexp.Regexp {
	parts := []string{"Object Owned by Helm"}
	for _, w := range words {
		parts = append(parts, strings.Join(strings.Fields(regexp.QuoteMeta(w)), `\s+`))
	}
	return regexp.MustCompile(`(?s)` + strings.Join(parts, ".*"))
}

// TestAccHelmOwned_istioCSRRefused: an IstioCSR a Helm release owns (one
// the cert-manager Operator's users install with a chart) is refused at plan
// to a zerotrust_istio_csr of its namespace, naming the release, as the
// other kinds' objects are; and to an import.
func TestAccHelmOwned_istioCSRRefused(t *testing.T) {
	istioCSRAlone(t)
	ns := acctest.UniqueNamespace(t, acctest.East, "csrhelm")
	issuer := istioCSRIssuer(t, ns, true)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operator.openshift.io/v1alpha1", "kind": "IstioCSR",
		"metadata": map[string]any{
			"name": "default", "namespace": ns,
			"labels": map[string]any{"app.kubernetes.io/managed-by": "Helm"},
			"annotations": map[string]any{
				"meta.helm.sh/release-name": "istio-csr", "meta.helm.sh/release-namespace": "cert-manager",
			},
		},
		"spec": map[string]any{"istioCSRConfig": map[string]any{
			"certManager":     map[string]any{"issuerRef": map[string]any{"name": issuer, "kind": "Issuer", "group": "cert-manager.io"}},
			"istiodTLSConfig": map[string]any{"trustDomain": "cluster.local"},
			"istio":           map[string]any{"namespace": istioCSRIstioNamespace},
		}},
	}}
	if _, err := acctest.Dynamic(t, acctest.East).Resource(istioCSRGVR).Namespace(ns).Create(context.Background(), obj,
		metav1.CreateOptions{FieldManager: "helm"}); err != nil {
		t.Fatal(err)
	}
	config := istioCSRConfig(t, acctest.East, ns, minimalIstioCSRBody(issuer))
	owner := `owned by Helm release "istio-csr" in namespace "cert-manager"`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      config,
				PlanOnly:    true,
				ExpectError: helmRefusal("IstioCSR "+ns+"/default", owner, "Manage it in the release's values"),
			},
			{
				Config:        config,
				ResourceName:  istioCSRAddr,
				ImportState:   true,
				ImportStateId: acctest.East + "/" + ns,
				ExpectError:   helmRefusal(owner, "Terraform neither takes over nor imports"),
			},
		},
	})
	if got, err := getIstioCSR(t, acctest.East, ns); err != nil || got.GetLabels()["app.kubernetes.io/managed-by"] != "Helm" {
		t.Errorf("the release's IstioCSR %s/default changed or went (%v): the refusals must write nothing", ns, err)
	}
}

// TestAccClusterSPIFFEIDFederation_helmDefault adds federation to the
// chart's default ClusterSPIFFEID, with the federation the chart's values
// declare: the apply waits until SPIRE's entry of a workload it selects
// federates, every other field and label stays as Helm wrote it, the next
// plan is empty, and destroy takes only federatesWith away.
func TestAccClusterSPIFFEIDFederation_helmDefault(t *testing.T) {
	s := helmLab(t)
	ctx := context.Background()
	name := harness.HelmObjectName(s.chart.Namespace, harness.HelmDefaultClusterSPIFFEID)
	dyn, err := dynamic.NewForConfig(s.chart.Cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	client := dyn.Resource(csidGVR)
	before, err := client.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Not federating: the default identity (fallback) selects it, nothing
	// else does, and its entry is what the apply waits for.
	app := acctest.UniqueName("helmdflt")
	waitWorkload := startCSIDWorkload(t, s.chart, app, s.peer.TrustDomain)
	helmWrote := func(obj *unstructured.Unstructured) error {
		spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
		was, _, _ := unstructured.NestedMap(before.Object, "spec")
		delete(spec, "federatesWith")
		if !maps.EqualFunc(spec, was, func(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
			return fmt.Errorf("spec of %s changed: %v, Helm wrote %v", name, spec, was)
		}
		if !maps.Equal(obj.GetLabels(), before.GetLabels()) || !maps.Equal(obj.GetAnnotations(), before.GetAnnotations()) {
			return fmt.Errorf("labels or annotations of %s changed: %v %v", name, obj.GetLabels(), obj.GetAnnotations())
		}
		return nil
	}
	config := helmProvider(t, s) + fmt.Sprintf(`
resource "zerotrust_cluster_spiffe_id_federation" "dflt" {
  cluster        = %[1]q
  name           = %[2]q
  federates_with = [%[3]q]
  timeouts = {
    create = "3m"
  }
}
`, helmCluster, name, s.peer.TrustDomain) +
		// The chart's notifier.k8sBundle case: SPIRE's Notifier "k8sbundle"
		// writes PEM under bundle.crt, as the chart's configuration says.
		publishedBundleConfig("chart", helmCluster, s.chart.TrustDomain,
			fmt.Sprintf("install = \"helm\"\n  namespace = %q", s.chart.Namespace))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			obj, err := client.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("Helm's ClusterSPIFFEID after destroy: %w", err)
			}
			if with, _, _ := unstructured.NestedStringSlice(obj.Object, "spec", "federatesWith"); len(with) > 0 {
				return fmt.Errorf("%s still federates with %v after destroy", name, with)
			}
			return helmWrote(obj)
		},
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("zerotrust_cluster_spiffe_id_federation.dflt", tfjsonpath.New("federates_with"),
						knownvalue.SetExact([]knownvalue.Check{knownvalue.StringExact(s.peer.TrustDomain)})),
					statecheck.ExpectKnownValue("data.zerotrust_spire_server.chart", tfjsonpath.New("bundle_config_map_key"),
						knownvalue.StringExact("bundle.crt")),
					statecheck.ExpectKnownValue("data.zerotrust_trust_bundle.chart", tfjsonpath.New("x509_authorities_pem"),
						knownvalue.StringRegexp(regexp.MustCompile(`^-----BEGIN CERTIFICATE-----`))),
					acctest.ClusterCheck(func(*terraform.State) error {
						w := waitWorkload()
						obj, err := client.Get(ctx, name, metav1.GetOptions{})
						if err != nil {
							return err
						}
						if err := helmWrote(obj); err != nil {
							return err
						}
						entries, err := s.chart.Entries(ctx)
						if err != nil {
							return err
						}
						for _, e := range entries {
							if e.SPIFFEID == w.SPIFFEID {
								if !slices.Contains(e.FederatesWith, s.peer.TrustDomain) {
									return fmt.Errorf("the entry of %s federates with %v, not %s", e.SPIFFEID, e.FederatesWith, s.peer.TrustDomain)
								}
								return nil
							}
						}
						return fmt.Errorf("SPIRE has no entry for %s", w.SPIFFEID)
					}),
				},
			},
		},
	})
}
