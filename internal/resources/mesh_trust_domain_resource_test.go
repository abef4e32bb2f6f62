package resources_test

import (
	"context"
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
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
)

var (
	sailIstioGVR = kube.SailIstio.GVR()
	kymaIstioGVR = kube.KymaIstio.GVR()
	meshTrustGVR = kube.KumaMeshTrust.GVR()
)

// meshOperatorManager is the field manager of what the mesh's operator (or
// its user) wrote before this provider came along.
const meshOperatorManager = "operator"

// applyAsOperator server-side applies obj as meshOperatorManager.
func applyAsOperator(t *testing.T, cluster string, gvr schema.GroupVersionResource, obj map[string]any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj}
	ri := acctest.Dynamic(t, cluster).Resource(gvr)
	var out *unstructured.Unstructured
	var err error
	if ns := u.GetNamespace(); ns != "" {
		out, err = ri.Namespace(ns).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: meshOperatorManager, Force: true})
	} else {
		out, err = ri.Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: meshOperatorManager, Force: true})
	}
	if err != nil {
		t.Fatalf("%s: apply %s %s as %q: %v", cluster, gvr.Resource, u.GetName(), meshOperatorManager, err)
	}
	return out
}

func meshGetter(t *testing.T, cluster string, gvr schema.GroupVersionResource, ns, name string) func() (*unstructured.Unstructured, error) {
	return func() (*unstructured.Unstructured, error) {
		ri := acctest.Dynamic(t, cluster).Resource(gvr)
		if ns != "" {
			return ri.Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		}
		return ri.Get(context.Background(), name, metav1.GetOptions{})
	}
}

func peerPEM(t *testing.T, td string) string {
	t.Helper()
	now := time.Now()
	return string(bundletest.PEM(bundletest.NewCA(t, spiffeid.RequireTrustDomainFromString(td), now.Add(-time.Hour), now.Add(24*time.Hour))))
}

func sailOperatorObject(name, trustDomain string) map[string]any {
	return map[string]any{
		"apiVersion": "sailoperator.io/v1", "kind": "Istio", "metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"version": "v1.28.0", "namespace": "istio-system",
			"values": map[string]any{
				"global": map[string]any{"istioNamespace": "istio-system", "meshID": "mesh1"},
				"pilot":  map[string]any{"env": map[string]any{"PILOT_ENABLE_X": "true"}},
				"meshConfig": map[string]any{
					"trustDomain":   trustDomain,
					"defaultConfig": map[string]any{"proxyMetadata": map[string]any{"WORKLOAD_IDENTITY_SOCKET_FILE": "spire-agent.sock"}},
				},
			},
		},
	}
}

// operatorSailFields are fields sailOperatorObject sets besides the trust
// domain: they must survive every apply and the destroy.
var operatorSailFields = map[string]any{
	"spec.version":                      "v1.28.0",
	"spec.values.global.meshID":         "mesh1",
	"spec.values.global.istioNamespace": "istio-system",
	"spec.values.pilot.env":             map[string]any{"PILOT_ENABLE_X": "true"},
	"spec.values.meshConfig.defaultConfig": map[string]any{
		"proxyMetadata": map[string]any{"WORKLOAD_IDENTITY_SOCKET_FILE": "spire-agent.sock"},
	},
}

func withFields(base map[string]any, more map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

func strs(values ...string) []knownvalue.Check {
	out := make([]knownvalue.Check, len(values))
	for i, v := range values {
		out[i] = knownvalue.StringExact(v)
	}
	return out
}

// TestAccMeshTrustDomain_sail migrates a Sail Istio mesh twice without
// breaking identities, against an object the operator's user created: their
// fields survive, the provider's trust fields conflict until forced, and
// destroy hands the fields back.
func TestAccMeshTrustDomain_sail(t *testing.T) {
	name := acctest.UniqueName("sail")
	old, td1, td2, peer := "old-"+name+".test", "east-"+name+".test", "east2-"+name+".test", "west-"+name+".test"
	pem := peerPEM(t, peer)
	applyAsOperator(t, acctest.West, sailIstioGVR, sailOperatorObject(name, old))
	get := meshGetter(t, acctest.West, sailIstioGVR, "", name)
	const addr = "zerotrust_mesh_trust_domain.this"

	config := func(td string, keep, force bool) string {
		return acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_mesh_trust_domain" "this" {
  cluster                = "west"
  mesh                   = { kind = "istio_sail", name = %q }
  trust_domain           = %q
  trust_domain_aliases   = ["cluster.local"]
  keep_previous_as_alias = %t
  force_conflicts        = %t
  ca_certificates = [
    { spiffe_bundle_url = "https://bundle.%s", trust_domains = [%q] },
    { pem = %q, trust_domains = [%q], cert_signers = ["clusterissuers.cert-manager.io/istio-ca"] },
  ]
  ca_address = "cert-manager-istio-csr.cert-manager.svc:443"
}
`, name, td, keep, force, peer, peer, pem, peer)
	}
	wantCACerts := []any{
		map[string]any{"spiffeBundleUrl": "https://bundle." + peer, "trustDomains": []any{peer}},
		map[string]any{"pem": pem, "trustDomains": []any{peer}, "certSigners": []any{"clusterissuers.cert-manager.io/istio-ca"}},
	}

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		// Destroy releases the fields: the object stays, the operator's
		// fields stay, and the mesh is back on Istio's default trust domain.
		CheckDestroy: checkObjectFields(t, get, withFields(operatorSailFields, map[string]any{
			"spec.values.meshConfig.trustDomain":        nil,
			"spec.values.meshConfig.trustDomainAliases": nil,
			"spec.values.meshConfig.caCertificates":     nil,
			"spec.values.global.caAddress":              nil,
		})),
		Steps: []resource.TestStep{
			{
				// The operator's user owns meshConfig.trustDomain.
				Config: config(td1, true, false),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					// Read from the cluster while planning: the trust domain the mesh runs on now.
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("previous_trust_domains"), knownvalue.ListExact(strs(old))),
				}},
				ExpectError: regexp.MustCompile(`(?s)Field Manager Conflict.*"operator".*force_conflicts`),
			},
			{
				// Adopted with force, keeping the old trust domain as an alias.
				Config: config(td1, true, true),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("effective_trust_domain_aliases"), knownvalue.ListExact(strs("cluster.local", old))),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringExact("west/istio_sail:"+name)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("spiffe_id_prefix"), knownvalue.StringExact("spiffe://"+td1+"/")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("previous_trust_domains"), knownvalue.ListExact(strs(old))),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("mesh"), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"kind": knownvalue.StringExact("istio_sail"), "name": knownvalue.StringExact(name),
						"namespace": knownvalue.Null(), "kuma_mesh": knownvalue.Null(),
					})),
				},
				Check: checkObjectFields(t, get, withFields(operatorSailFields, map[string]any{
					"spec.values.meshConfig.trustDomain":        td1,
					"spec.values.meshConfig.trustDomainAliases": []any{"cluster.local", old},
					"spec.values.meshConfig.caCertificates":     wantCACerts,
					"spec.values.global.caAddress":              "cert-manager-istio-csr.cert-manager.svc:443",
				})),
			},
			{
				// A second migration keeps both former trust domains.
				Config: config(td2, true, true),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("previous_trust_domains"), knownvalue.ListExact(strs(old, td1))),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkObjectFields(t, get, map[string]any{
					"spec.values.meshConfig.trustDomain":        td2,
					"spec.values.meshConfig.trustDomainAliases": []any{"cluster.local", old, td1},
				}),
			},
			{
				// Every certificate has rotated: the former trust domains go.
				Config: config(td2, false, true),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("previous_trust_domains"), knownvalue.ListSizeExact(0)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("effective_trust_domain_aliases"), knownvalue.ListExact(strs("cluster.local"))),
				},
				Check: checkObjectFields(t, get, withFields(operatorSailFields, map[string]any{
					"spec.values.meshConfig.trustDomainAliases": []any{"cluster.local"},
				})),
			},
			{
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     "west/istio_sail:" + name,
				ImportStateVerify: true,
				// Import cannot know the configuration's choice; it reads false.
				ImportStateVerifyIgnore: []string{"force_conflicts"},
			},
			{
				// Changed outside Terraform: the plan sets it back.
				PreConfig: func() {
					patch := []byte(`{"spec":{"values":{"meshConfig":{"trustDomain":"intruder.test"}}}}`)
					if _, err := acctest.Dynamic(t, acctest.West).Resource(sailIstioGVR).Patch(context.Background(), name,
						k8stypes.MergePatchType, patch, metav1.PatchOptions{FieldManager: "intruder"}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config(td2, false, true),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("trust_domain"), knownvalue.StringExact(td2)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkObjectFields(t, get, map[string]any{"spec.values.meshConfig.trustDomain": td2}),
			},
		},
	})
}

// TestAccMeshTrustDomain_kyma runs on the provider's default connection
// against a Kyma Istio whose spec and status the module wrote.
func TestAccMeshTrustDomain_kyma(t *testing.T) {
	ns := meshTestNamespace(t, acctest.East, "kyma")
	td1, td2 := "apps-"+ns+".test", "apps2-"+ns+".test"
	obj := applyAsOperator(t, acctest.East, kymaIstioGVR, map[string]any{
		"apiVersion": "operator.kyma-project.io/v1alpha2", "kind": "Istio",
		"metadata": map[string]any{"name": "default", "namespace": ns},
		"spec": map[string]any{
			"config":     map[string]any{"numTrustedProxies": int64(1)},
			"components": map[string]any{"pilot": map[string]any{"k8s": map[string]any{"resources": map[string]any{"requests": map[string]any{"cpu": "100m"}}}}},
		},
	})
	obj.Object["status"] = map[string]any{"state": "Ready", "description": "Istio installed"}
	if _, err := acctest.Dynamic(t, acctest.East).Resource(kymaIstioGVR).Namespace(ns).UpdateStatus(context.Background(), obj,
		metav1.UpdateOptions{FieldManager: meshOperatorManager}); err != nil {
		t.Fatal(err)
	}
	get := meshGetter(t, acctest.East, kymaIstioGVR, ns, "default")
	operatorFields := map[string]any{
		"spec.config.numTrustedProxies":                    int64(1),
		"spec.components.pilot.k8s.resources.requests.cpu": "100m",
		"status.state":       "Ready",
		"status.description": "Istio installed",
	}
	const addr = "zerotrust_mesh_trust_domain.this"
	config := func(td string) string {
		return acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_mesh_trust_domain" "this" {
  mesh         = { kind = "istio_kyma", namespace = %q }
  trust_domain = %q
}
`, ns, td)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkObjectFields(t, get, withFields(operatorFields, map[string]any{"spec.config.trustDomain": nil})),
		Steps: []resource.TestStep{
			{
				Config: config(td1),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringExact("istio_kyma:"+ns+":default")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("mesh").AtMapKey("name"), knownvalue.StringExact("default")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("spiffe_id_prefix"), knownvalue.StringExact("spiffe://"+td1+"/")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("previous_trust_domains"), knownvalue.Null()),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("cluster"), knownvalue.Null()),
				},
				Check: checkObjectFields(t, get, withFields(operatorFields, map[string]any{"spec.config.trustDomain": td1})),
			},
			{
				Config: config(td2),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkObjectFields(t, get, withFields(operatorFields, map[string]any{"spec.config.trustDomain": td2})),
			},
			{
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     "istio_kyma:" + ns + ":default",
				ImportStateVerify: true,
			},
		},
	})
}

// TestAccMeshTrustDomain_kuma trusts a peer's CA bundles through a MeshTrust
// the resource creates, rotates the bundles, and deletes it on destroy.
func TestAccMeshTrustDomain_kuma(t *testing.T) {
	ns := meshTestNamespace(t, acctest.West, "kuma")
	peer := "peer-" + ns + ".test"
	objectName := strings.ReplaceAll(peer, ".", "-")
	pem1, pem2 := peerPEM(t, peer), peerPEM(t, peer)
	get := meshGetter(t, acctest.West, meshTrustGVR, ns, objectName)
	const addr = "zerotrust_mesh_trust_domain.this"
	config := func(kumaMesh string, bundles ...string) string {
		quoted := make([]string, len(bundles))
		for i, b := range bundles {
			quoted[i] = fmt.Sprintf("%q", b)
		}
		label := ""
		if kumaMesh != "" {
			label = fmt.Sprintf(", kuma_mesh = %q", kumaMesh)
		}
		return acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_mesh_trust_domain" "this" {
  cluster      = "west"
  mesh         = { kind = "kuma", namespace = %q%s }
  trust_domain = %q
  ca_bundles   = [%s]
}
`, ns, label, peer, strings.Join(quoted, ", "))
	}
	bundle := func(pem string) map[string]any {
		return map[string]any{"type": "Pem", "pem": map[string]any{"value": pem}}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := get(); !apierrors.IsNotFound(err) {
				return fmt.Errorf("MeshTrust %s/%s after destroy: %v, want it deleted", ns, objectName, err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				// No kuma_mesh: the resource writes no label (Kuma's default
				// mesh applies) and the attribute shows the object has none.
				Config: config("", pem1),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("mesh").AtMapKey("name"), knownvalue.StringExact(objectName)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringExact("west/kuma:"+ns+":"+objectName)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("mesh").AtMapKey("kuma_mesh"), knownvalue.Null()),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("spiffe_id_prefix"), knownvalue.StringExact("spiffe://"+peer+"/")),
				},
				Check: checkObjectFields(t, get, map[string]any{
					"metadata.labels":  nil,
					"spec.trustDomain": peer,
					"spec.caBundles":   []any{bundle(pem1)},
				}),
			},
			{
				// The peer rotates its CA: both bundles are trusted. Naming
				// the mesh labels the same object in place.
				Config: config("default", pem1, pem2),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("mesh").AtMapKey("kuma_mesh"), knownvalue.StringExact("default")),
				},
				Check: checkObjectFields(t, get, map[string]any{
					"metadata.labels": map[string]any{"kuma.io/mesh": "default"},
					"spec.caBundles":  []any{bundle(pem1), bundle(pem2)},
				}),
			},
			{
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     "west/kuma:" + ns + ":" + objectName,
				ImportStateVerify: true,
			},
			{
				// Deleted outside Terraform: the plan creates it again.
				PreConfig: func() {
					if err := acctest.Dynamic(t, acctest.West).Resource(meshTrustGVR).Namespace(ns).Delete(context.Background(), objectName, metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config("default", pem1, pem2),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkObjectFields(t, get, map[string]any{"spec.trustDomain": peer}),
			},
		},
	})
}

// TestAccMeshTrustDomain_kumaSharedMeshTrust manages a MeshTrust another
// field manager also declares (same values, so shared ownership): destroy
// releases this resource's share and leaves the object.
func TestAccMeshTrustDomain_kumaSharedMeshTrust(t *testing.T) {
	ns := meshTestNamespace(t, acctest.West, "kumashared")
	peer := "peer-" + ns + ".test"
	pem := peerPEM(t, peer)
	applyAsOperator(t, acctest.West, meshTrustGVR, map[string]any{
		"apiVersion": "kuma.io/v1alpha1", "kind": "MeshTrust",
		"metadata": map[string]any{"name": "shared", "namespace": ns, "labels": map[string]any{"kuma.io/mesh": "default"}},
		"spec":     map[string]any{"trustDomain": peer, "caBundles": []any{map[string]any{"type": "Pem", "pem": map[string]any{"value": pem}}}},
	})
	get := meshGetter(t, acctest.West, meshTrustGVR, ns, "shared")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkObjectFields(t, get, map[string]any{"spec.trustDomain": peer}),
		Steps: []resource.TestStep{{
			Config: acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_mesh_trust_domain" "this" {
  cluster      = "west"
  mesh         = { kind = "kuma", namespace = %q, name = "shared" }
  trust_domain = %q
  ca_bundles   = [%q]
}
`, ns, peer, pem),
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			Check: func(*terraform.State) error {
				obj, err := get()
				if err != nil {
					return err
				}
				managers := map[string]bool{}
				for _, f := range obj.GetManagedFields() {
					managers[f.Manager] = true
				}
				if !managers[meshOperatorManager] || !managers["zerotrust"] {
					return fmt.Errorf("managers of the MeshTrust: %v, want %q and \"zerotrust\" sharing it", managers, meshOperatorManager)
				}
				return nil
			},
		}},
	})
}

// TestAccMeshTrustDomain_missingObjects: operators own the Istio objects, so
// the provider refuses to create them, naming the kind and the operator.
func TestAccMeshTrustDomain_missingObjects(t *testing.T) {
	name := acctest.UniqueName("nosail")
	ns := meshTestNamespace(t, acctest.East, "nokyma")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_mesh_trust_domain" "this" {
  cluster = "west"
  mesh    = { kind = "istio_sail", name = %q }
}
`, name),
				ExpectError: regexp.MustCompile(`(?s)Mesh Object Not Found.*Istio\s+\(sailoperator.io/v1\)\s+` + regexp.QuoteMeta(name) +
					`.*Sail\s+operator`),
			},
			{
				Config: acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_mesh_trust_domain" "this" {
  mesh = { kind = "istio_kyma", namespace = %q }
}
`, ns),
				ExpectError: regexp.MustCompile(`(?s)Mesh Object Not Found.*Istio\s+\(operator.kyma-project.io/v1alpha2\)\s+` +
					regexp.QuoteMeta(ns) + `/default.*Kyma\s+Istio\s+module`),
			},
			{
				Config: acctest.ProviderConfig(t) + `
resource "zerotrust_mesh_trust_domain" "this" {
  cluster      = "bare"
  mesh         = { kind = "kuma" }
  trust_domain = "peer.test"
  ca_bundles   = [` + fmt.Sprintf("%q", peerPEM(t, "peer.test")) + `]
}
`,
				ExpectError: regexp.MustCompile(`(?s)CustomResourceDefinition Not Installed.*meshtrusts\.kuma\.io.*Kuma`),
			},
		},
	})
}
