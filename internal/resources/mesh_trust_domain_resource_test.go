package resources_test

import (
	"context"
	"fmt"
	"regexp"
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
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// sailMesh is what the Sail tests share: a Sail Istio on west that its
// operator's user made on trust domain old, and the peer whose CA
// certificates testdata/mesh_trust_domain/sail.tf configures.
type sailMesh struct {
	name, old, peer, pem string
	get                  func() (*unstructured.Unstructured, error)
}

const meshAddr = "zerotrust_mesh_trust_domain.this"

func newSailMesh(t *testing.T) sailMesh {
	t.Helper()
	name := acctest.UniqueName("sail")
	m := sailMesh{name: name, old: "old-" + name + ".test", peer: "west-" + name + ".test"}
	m.pem = peerPEM(t, m.peer)
	acctest.ApplyAsOperator(t, acctest.West, sailIstioGVR, sailOperatorObject(name, m.old))
	m.get = acctest.ObjectGetter(t, acctest.West, sailIstioGVR, "", name)
	return m
}

// step is a step applying sail.tf.
func (m sailMesh) step(t *testing.T, td string, keep, force bool) resource.TestStep {
	t.Helper()
	return resource.TestStep{
		Config: testdataConfig(t, acctest.ProviderConfig(t), "mesh_trust_domain/sail.tf"),
		ConfigVariables: config.Variables{
			"name": config.StringVariable(m.name), "trust_domain": config.StringVariable(td),
			"keep_previous_as_alias": config.BoolVariable(keep), "force_conflicts": config.BoolVariable(force),
			"peer": config.StringVariable(m.peer), "peer_pem": config.StringVariable(m.pem),
		},
	}
}

// test runs steps; destroy then releases the fields: the object stays, the
// operator's fields stay, and the mesh is back on Istio's default trust
// domain.
func (m sailMesh) test(t *testing.T, steps ...resource.TestStep) {
	t.Helper()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: acctest.CheckObjectFields(t, m.get, withFields(operatorSailFields, map[string]any{
			"spec.values.meshConfig.trustDomain":        nil,
			"spec.values.meshConfig.trustDomainAliases": nil,
			"spec.values.meshConfig.caCertificates":     nil,
			"spec.values.global.caAddress":              nil,
		})),
		Steps: steps,
	})
}

// TestAccMeshTrustDomain_sailAdopt: the operator's user owns
// meshConfig.trustDomain, so adopting the Sail Istio conflicts until
// force_conflicts; adopted, the trust domain the mesh ran on (read from the
// cluster while planning) stays an alias, and the operator's fields stay.
func TestAccMeshTrustDomain_sailAdopt(t *testing.T) {
	m := newSailMesh(t)
	td := "east-" + m.name + ".test"

	conflict := m.step(t, td, true, false)
	conflict.ConfigPlanChecks = resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectKnownValue(meshAddr, tfjsonpath.New("previous_trust_domains"), knownvalue.ListExact(acctest.StringChecks(m.old))),
	}}
	conflict.ExpectError = regexp.MustCompile(`(?s)Field Manager Conflict.*"operator".*force_conflicts`)

	adopt := m.step(t, td, true, true)
	adopt.ConfigPlanChecks = resource.ConfigPlanChecks{
		PreApply: []plancheck.PlanCheck{
			plancheck.ExpectResourceAction(meshAddr, plancheck.ResourceActionCreate),
			plancheck.ExpectKnownValue(meshAddr, tfjsonpath.New("effective_trust_domain_aliases"), knownvalue.ListExact(acctest.StringChecks("cluster.local", m.old))),
		},
		PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
	}
	adopt.ConfigStateChecks = []statecheck.StateCheck{
		statecheck.ExpectKnownValue(meshAddr, tfjsonpath.New("id"), knownvalue.StringExact("west/istio_sail:"+m.name)),
		statecheck.ExpectKnownValue(meshAddr, tfjsonpath.New("spiffe_id_prefix"), knownvalue.StringExact("spiffe://"+td+"/")),
		statecheck.ExpectKnownValue(meshAddr, tfjsonpath.New("previous_trust_domains"), knownvalue.ListExact(acctest.StringChecks(m.old))),
		statecheck.ExpectKnownValue(meshAddr, tfjsonpath.New("mesh"), knownvalue.ObjectExact(map[string]knownvalue.Check{
			"kind": knownvalue.StringExact("istio_sail"), "name": knownvalue.StringExact(m.name),
			"namespace": knownvalue.Null(), "kuma_mesh": knownvalue.Null(),
		})),
	}
	adopt.Check = acctest.CheckObjectFields(t, m.get, withFields(operatorSailFields, map[string]any{
		"spec.values.meshConfig.trustDomain":        td,
		"spec.values.meshConfig.trustDomainAliases": []any{"cluster.local", m.old},
		"spec.values.meshConfig.caCertificates": []any{
			map[string]any{"spiffeBundleUrl": "https://bundle." + m.peer, "trustDomains": []any{m.peer}},
			map[string]any{"pem": m.pem, "trustDomains": []any{m.peer}, "certSigners": []any{"clusterissuers.cert-manager.io/istio-ca"}},
		},
		"spec.values.global.caAddress": "cert-manager-istio-csr.cert-manager.svc:443",
	}))

	m.test(t, conflict, adopt)
}

// TestAccMeshTrustDomain_sailMigration: each trust domain migration keeps
// the former ones as aliases until keep_previous_as_alias is turned off;
// import reads the result back, and a trust domain changed outside
// Terraform plans back.
func TestAccMeshTrustDomain_sailMigration(t *testing.T) {
	m := newSailMesh(t)
	td1, td2 := "east-"+m.name+".test", "east2-"+m.name+".test"

	second := m.step(t, td2, true, true)
	second.ConfigPlanChecks = resource.ConfigPlanChecks{
		PreApply: []plancheck.PlanCheck{
			plancheck.ExpectResourceAction(meshAddr, plancheck.ResourceActionUpdate),
			plancheck.ExpectKnownValue(meshAddr, tfjsonpath.New("previous_trust_domains"), knownvalue.ListExact(acctest.StringChecks(m.old, td1))),
		},
		PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
	}
	second.Check = acctest.CheckObjectFields(t, m.get, map[string]any{
		"spec.values.meshConfig.trustDomain":        td2,
		"spec.values.meshConfig.trustDomainAliases": []any{"cluster.local", m.old, td1},
	})

	// Every certificate has rotated: the former trust domains go.
	rotated := m.step(t, td2, false, true)
	rotated.ConfigPlanChecks = resource.ConfigPlanChecks{
		PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(meshAddr, plancheck.ResourceActionUpdate)},
		PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
	}
	rotated.ConfigStateChecks = []statecheck.StateCheck{
		statecheck.ExpectKnownValue(meshAddr, tfjsonpath.New("previous_trust_domains"), knownvalue.ListSizeExact(0)),
		statecheck.ExpectKnownValue(meshAddr, tfjsonpath.New("effective_trust_domain_aliases"), knownvalue.ListExact(acctest.StringChecks("cluster.local"))),
	}
	rotated.Check = acctest.CheckObjectFields(t, m.get, withFields(operatorSailFields, map[string]any{
		"spec.values.meshConfig.trustDomainAliases": []any{"cluster.local"},
	}))

	imported := m.step(t, td2, false, true)
	imported.ResourceName, imported.ImportState, imported.ImportStateId, imported.ImportStateVerify = meshAddr, true, "west/istio_sail:"+m.name, true
	// Import cannot know the configuration's choice; it reads false.
	imported.ImportStateVerifyIgnore = []string{"force_conflicts"}

	drifted := m.step(t, td2, false, true)
	drifted.PreConfig = func() {
		patch := []byte(`{"spec":{"values":{"meshConfig":{"trustDomain":"intruder.test"}}}}`)
		if _, err := acctest.Dynamic(t, acctest.West).Resource(sailIstioGVR).Patch(context.Background(), m.name,
			k8stypes.MergePatchType, patch, metav1.PatchOptions{FieldManager: "intruder"}); err != nil {
			t.Fatal(err)
		}
	}
	drifted.ConfigPlanChecks = resource.ConfigPlanChecks{
		PreApply: []plancheck.PlanCheck{
			plancheck.ExpectResourceAction(meshAddr, plancheck.ResourceActionUpdate),
			plancheck.ExpectKnownValue(meshAddr, tfjsonpath.New("trust_domain"), knownvalue.StringExact(td2)),
		},
		PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
	}
	drifted.Check = acctest.CheckObjectFields(t, m.get, map[string]any{"spec.values.meshConfig.trustDomain": td2})

	m.test(t, m.step(t, td1, true, true), second, rotated, imported, drifted)
}

// TestAccMeshTrustDomain_kyma runs on the provider's default connection
// against a Kyma Istio whose spec and status the module wrote.
func TestAccMeshTrustDomain_kyma(t *testing.T) {
	ns := acctest.UniqueNamespace(t, acctest.East, "kyma")
	td1, td2 := "apps-"+ns+".test", "apps2-"+ns+".test"
	obj := acctest.ApplyAsOperator(t, acctest.East, kymaIstioGVR, map[string]any{
		"apiVersion": "operator.kyma-project.io/v1alpha2", "kind": "Istio",
		"metadata": map[string]any{"name": "default", "namespace": ns},
		"spec": map[string]any{
			"config":     map[string]any{"numTrustedProxies": int64(1)},
			"components": map[string]any{"pilot": map[string]any{"k8s": map[string]any{"resources": map[string]any{"requests": map[string]any{"cpu": "100m"}}}}},
		},
	})
	obj.Object["status"] = map[string]any{"state": "Ready", "description": "Istio installed"}
	if _, err := acctest.Dynamic(t, acctest.East).Resource(kymaIstioGVR).Namespace(ns).UpdateStatus(context.Background(), obj,
		metav1.UpdateOptions{FieldManager: acctest.OperatorManager}); err != nil {
		t.Fatal(err)
	}
	get := acctest.ObjectGetter(t, acctest.East, kymaIstioGVR, ns, "default")
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
		CheckDestroy:             acctest.CheckObjectFields(t, get, withFields(operatorFields, map[string]any{"spec.config.trustDomain": nil})),
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
				Check: acctest.CheckObjectFields(t, get, withFields(operatorFields, map[string]any{"spec.config.trustDomain": td1})),
			},
			{
				Config: config(td2),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: acctest.CheckObjectFields(t, get, withFields(operatorFields, map[string]any{"spec.config.trustDomain": td2})),
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
	ns := acctest.UniqueNamespace(t, acctest.West, "kuma")
	peer := "peer-" + ns + ".test"
	objectName := strings.ReplaceAll(peer, ".", "-")
	pem1, pem2 := peerPEM(t, peer), peerPEM(t, peer)
	get := acctest.ObjectGetter(t, acctest.West, meshTrustGVR, ns, objectName)
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
				Check: acctest.CheckObjectFields(t, get, map[string]any{
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
				Check: acctest.CheckObjectFields(t, get, map[string]any{
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
				Check: acctest.CheckObjectFields(t, get, map[string]any{"spec.trustDomain": peer}),
			},
		},
	})
}

// TestAccMeshTrustDomain_kumaSharedMeshTrust manages a MeshTrust another
// field manager also declares (same values, so shared ownership): destroy
// releases this resource's share and leaves the object.
func TestAccMeshTrustDomain_kumaSharedMeshTrust(t *testing.T) {
	ns := acctest.UniqueNamespace(t, acctest.West, "kumashared")
	peer := "peer-" + ns + ".test"
	pem := peerPEM(t, peer)
	acctest.ApplyAsOperator(t, acctest.West, meshTrustGVR, map[string]any{
		"apiVersion": "kuma.io/v1alpha1", "kind": "MeshTrust",
		"metadata": map[string]any{"name": "shared", "namespace": ns, "labels": map[string]any{"kuma.io/mesh": "default"}},
		"spec":     map[string]any{"trustDomain": peer, "caBundles": []any{map[string]any{"type": "Pem", "pem": map[string]any{"value": pem}}}},
	})
	get := acctest.ObjectGetter(t, acctest.West, meshTrustGVR, ns, "shared")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckObjectFields(t, get, map[string]any{"spec.trustDomain": peer}),
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
				if !managers[acctest.OperatorManager] || !managers["zerotrust"] {
					return fmt.Errorf("managers of the MeshTrust: %v, want %q and \"zerotrust\" sharing it", managers, acctest.OperatorManager)
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
	ns := acctest.UniqueNamespace(t, acctest.East, "nokyma")
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
