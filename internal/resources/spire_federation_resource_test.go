package resources_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/resources"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

const federationAddr = "zerotrust_spire_federation.this"

// federationConfig is a provider block for c plus one zerotrust_spire_federation on it.
func federationConfig(t *testing.T, c *harness.Cluster, body string) string {
	t.Helper()
	return acctest.ProviderConfigFor(t, c) + fmt.Sprintf(`
resource "zerotrust_spire_federation" "this" {
  cluster = %q
%s
}
`, c.Name, body)
}

// federationOf reads spec.federation of the SpireServer from the API.
func federationOf(t *testing.T, c *harness.Cluster) (map[string]any, error) {
	t.Helper()
	obj := acctest.GetSingleton(t, c, kube.SpireServer)
	if obj == nil {
		return nil, fmt.Errorf("%s: SpireServer cluster does not exist", c.Name)
	}
	fed, _, _ := unstructured.NestedMap(obj.Object, "spec", "federation")
	return fed, nil
}

// checkFederation compares fields of spec.federation (dotted paths) with
// want; a nil want means the field must be absent.
func checkFederation(t *testing.T, c *harness.Cluster, want map[string]any) resource.TestCheckFunc {
	return func(*terraform.State) error {
		fed, err := federationOf(t, c)
		if err != nil {
			return err
		}
		if fed == nil {
			return fmt.Errorf("%s: SpireServer has no spec.federation", c.Name)
		}
		for field, w := range want {
			got, found, _ := unstructured.NestedFieldNoCopy(fed, strings.Split(field, ".")...)
			if w == nil {
				if found {
					return fmt.Errorf("%s: spec.federation.%s = %v, want it absent", c.Name, field, got)
				}
				continue
			}
			if !found || !reflect.DeepEqual(got, w) {
				return fmt.Errorf("%s: spec.federation.%s = %v, want %v", c.Name, field, got, w)
			}
		}
		return nil
	}
}

// checkPeers compares spec.federation.federatesWith with want. With sorted,
// the order must match too (what this provider sends); otherwise entries are
// compared by trust domain, since entries of other managers merge in anywhere.
func checkPeers(t *testing.T, c *harness.Cluster, sorted bool, want ...map[string]any) resource.TestCheckFunc {
	return func(*terraform.State) error {
		fed, err := federationOf(t, c)
		if err != nil {
			return err
		}
		got, found, _ := unstructured.NestedSlice(fed, "federatesWith")
		if len(want) == 0 {
			if found {
				return fmt.Errorf("%s: federatesWith = %v, want it absent", c.Name, got)
			}
			return nil
		}
		wantList := make([]any, len(want))
		for i, w := range want {
			wantList[i] = w
		}
		if !sorted {
			byTD := func(list []any) map[any]any {
				m := map[any]any{}
				for _, item := range list {
					if e, ok := item.(map[string]any); ok {
						m[e["trustDomain"]] = e
					}
				}
				return m
			}
			if len(got) == len(wantList) && reflect.DeepEqual(byTD(got), byTD(wantList)) {
				return nil
			}
		} else if reflect.DeepEqual(got, wantList) {
			return nil
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(wantList)
		return fmt.Errorf("%s: federatesWith = %s, want %s", c.Name, g, w)
	}
}

// checkSpec compares top-level spec fields the operator owns.
func checkSpec(t *testing.T, c *harness.Cluster, want map[string]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		obj := acctest.GetSingleton(t, c, kube.SpireServer)
		if obj == nil {
			return fmt.Errorf("%s: SpireServer cluster does not exist", c.Name)
		}
		for field, w := range want {
			got, _, _ := unstructured.NestedString(obj.Object, strings.Split("spec."+field, ".")...)
			if got != w {
				return fmt.Errorf("%s: spec.%s = %q, want %q", c.Name, field, got, w)
			}
		}
		return nil
	}
}

func peer(td, url, profile, id string) map[string]any {
	p := map[string]any{"trustDomain": td, "bundleEndpointUrl": url, "bundleEndpointProfile": profile}
	if id != "" {
		p["endpointSpiffeId"] = id
	}
	return p
}

func dynamicClient(t *testing.T, c *harness.Cluster) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// twoPeersHCL federates with west.test (https_spiffe) and north.test
// (https_web): the peers most tests here start from.
const twoPeersHCL = `
  federates_with = {
    "west.test" = {
      bundle_endpoint_url     = "https://spire.west.test:8443"
      bundle_endpoint_profile = "https_spiffe"
      endpoint_spiffe_id      = "spiffe://west.test/spire/server"
    }
    "north.test" = {
      bundle_endpoint_url     = "https://bundles.north.test"
      bundle_endpoint_profile = "https_web"
    }
  }`

// federationLifecycle is what the lifecycle tests share: a cluster of their
// own whose ZeroTrustWorkloadIdentityManager names a trust domain of the
// test's, and whose SpireServer the "operator" made with fields only it
// sets (federationOperatorFields), configured from testdata/spire_federation.
type federationLifecycle struct {
	c      *harness.Cluster
	td, id string
}

var federationOperatorFields = map[string]string{
	"logLevel": "debug", "jwtIssuer": "https://oidc-discovery.apps.example.test", "persistence.size": "1Gi",
}

func newFederationLifecycle(t *testing.T, c *harness.Cluster) federationLifecycle {
	t.Helper()
	acctest.ResetSpireSingletons(t, c)
	acctest.ZTWIMStandIn(t, c)
	l := federationLifecycle{c: c, td: acctest.UniqueName("own") + ".test", id: c.Name + "/cluster"}
	l.install(t)
	return l
}

// install is what the operator's installation makes: the
// ZeroTrustWorkloadIdentityManager and a SpireServer without federation.
func (l federationLifecycle) install(t *testing.T) {
	t.Helper()
	acctest.ApplyAs(t, l.c, kube.ZeroTrustWorkloadIdentityManager, acctest.OperatorManager, acctest.ZTWIMObject(l.td, "solo"))
	acctest.ApplyAs(t, l.c, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(map[string]any{"logLevel": "debug"}))
}

// step is a step applying testdata/spire_federation/<file>.
func (l federationLifecycle) step(t *testing.T, file string, vars config.Variables) resource.TestStep {
	t.Helper()
	all := config.Variables{"cluster": config.StringVariable(l.c.Name)}
	maps.Copy(all, vars)
	return resource.TestStep{Config: testdataConfig(t, acctest.ProviderConfigFor(t, l.c), "spire_federation/"+file), ConfigVariables: all}
}

// updated is a step applying updated.tf, with force_conflicts as given.
func (l federationLifecycle) updated(t *testing.T, force bool) resource.TestStep {
	return l.step(t, "updated.tf", config.Variables{"force_conflicts": config.BoolVariable(force)})
}

// checkUpdatedPeers checks federatesWith as updated.tf sends it.
func (l federationLifecycle) checkUpdatedPeers(t *testing.T) resource.TestCheckFunc {
	return checkPeers(t, l.c, true,
		peer("south.test", "https://spire.south.test", "https_spiffe", "spiffe://south.test/spire/server"),
		peer("west.test", "https://spire.west.test:8443", "https_spiffe", "spiffe://west.test/spire/server"))
}

// checkDestroyed: destroy keeps the bundle endpoint as it runs (the operator
// forbids removing spec.federation), releases the list, which this resource
// alone owned, and leaves the operator's fields.
func (l federationLifecycle) checkDestroyed(t *testing.T, refreshHint int64) resource.TestCheckFunc {
	return resource.ComposeAggregateTestCheckFunc(
		checkFederation(t, l.c, map[string]any{"bundleEndpoint.profile": "https_spiffe", "bundleEndpoint.refreshHint": refreshHint}),
		checkPeers(t, l.c, false),
		checkSpec(t, l.c, federationOperatorFields),
	)
}

// TestAccSpireFederation_create creates the federation on a SpireServer the
// operator made: the CRD's defaults are filled in by the API server, not
// sent; the list goes out sorted by trust domain; the operator's fields
// survive; the same map written in another order plans nothing.
func TestAccSpireFederation_create(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		l := newFederationLifecycle(t, c)
		create := l.step(t, "two_peers.tf", nil)
		create.ConfigPlanChecks = resource.ConfigPlanChecks{
			PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(federationAddr, plancheck.ResourceActionCreate),
				// Read from the ZeroTrustWorkloadIdentityManager at plan time.
				plancheck.ExpectKnownValue(federationAddr, tfjsonpath.New("trust_domain"), knownvalue.StringExact(l.td)),
				plancheck.ExpectKnownValue(federationAddr, tfjsonpath.New("id"), knownvalue.StringExact(l.id)),
			},
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
		}
		create.ConfigStateChecks = []statecheck.StateCheck{
			statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("id"), knownvalue.StringExact(l.id)),
			statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("trust_domain"), knownvalue.StringExact(l.td)),
			statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("endpoint_spiffe_id"), knownvalue.StringExact("spiffe://"+l.td+"/spire/server")),
			// managed_route is the CRD's default true: create waited for the
			// operator's Route.
			statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("bundle_endpoint_url"), knownvalue.StringExact("https://federation."+l.td)),
			statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("bundle_endpoint"), knownvalue.ObjectExact(map[string]knownvalue.Check{
				"profile": knownvalue.StringExact("https_spiffe"), "refresh_hint": knownvalue.Int64Exact(300),
				"https_web": knownvalue.Null(),
			})),
			statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("managed_route"), knownvalue.Bool(true)),
			statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("force_conflicts"), knownvalue.Bool(false)),
		}
		create.Check = resource.ComposeAggregateTestCheckFunc(
			// The CRD's defaults, filled in by the API server: the provider
			// did not send them.
			checkFederation(t, c, map[string]any{
				"bundleEndpoint.profile": "https_spiffe", "bundleEndpoint.refreshHint": int64(300),
				"bundleEndpoint.httpsWeb": nil, "managedRoute": "true",
			}),
			checkNotOwned(t, c, "zerotrust", "f:profile", "f:refreshHint", "f:managedRoute"),
			// Sent as the CRD's list, sorted by trust domain.
			checkPeers(t, c, true,
				peer("north.test", "https://bundles.north.test", "https_web", ""),
				peer("west.test", "https://spire.west.test:8443", "https_spiffe", "spiffe://west.test/spire/server")),
			checkSpec(t, c, federationOperatorFields),
		)
		reordered := l.step(t, "two_peers_reordered.tf", nil)
		reordered.ConfigPlanChecks = resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}
		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			CheckDestroy:             l.checkDestroyed(t, 300),
			Steps:                    []resource.TestStep{create, reordered},
		}
	})
}

// TestAccSpireFederation_updateInPlace: a new refresh hint, managed_route
// turned off (the operator's Route is deleted: the operator never deletes
// it itself) and a peer replaced are one update; import reads back the same.
func TestAccSpireFederation_updateInPlace(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		l := newFederationLifecycle(t, c)
		update := l.updated(t, false)
		update.ConfigPlanChecks = resource.ConfigPlanChecks{
			PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(federationAddr, plancheck.ResourceActionUpdate),
				plancheck.ExpectUnknownValue(federationAddr, tfjsonpath.New("bundle_endpoint_url")),
				plancheck.ExpectKnownValue(federationAddr, tfjsonpath.New("trust_domain"), knownvalue.StringExact(l.td)),
			},
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
		}
		update.ConfigStateChecks = []statecheck.StateCheck{
			// managed_route = false: the Route is gone and says nothing any more.
			statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("bundle_endpoint_url"), knownvalue.Null()),
			statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("managed_route"), knownvalue.Bool(false)),
		}
		update.Check = resource.ComposeAggregateTestCheckFunc(
			checkFederation(t, c, map[string]any{"bundleEndpoint.refreshHint": int64(600), "managedRoute": "false"}),
			checkRoute(t, c, "", "", ""),
			l.checkUpdatedPeers(t),
			checkSpec(t, c, federationOperatorFields),
		)
		// An import step needs the configuration's variables too.
		imported := l.updated(t, false)
		imported.ResourceName, imported.ImportState, imported.ImportStateId, imported.ImportStateVerify = federationAddr, true, l.id, true
		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			CheckDestroy:             l.checkDestroyed(t, 600),
			Steps: []resource.TestStep{
				l.step(t, "two_peers.tf", nil),
				update,
				imported,
			},
		}
	})
}

// TestAccSpireFederation_otherManagers: what other tools do to the list.
// federatesWith is an atomic list in the released CRD, so a tool that edits
// this resource's entry owns the whole list: the plan puts the value back
// and the apply conflicts until force_conflicts; an entry another tool adds
// shows in the refreshed state and the plan removes it; an entry removed
// outside Terraform plans back.
func TestAccSpireFederation_otherManagers(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		l := newFederationLifecycle(t, c)
		edited := l.updated(t, false)
		// A JSON patch, as kubectl edit would.
		edited.PreConfig = func() { editPeerURL(t, c, "west.test", "https://elsewhere.west.test") }
		edited.ConfigPlanChecks = resource.ConfigPlanChecks{
			PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(federationAddr, plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue(federationAddr,
					tfjsonpath.New("federates_with").AtMapKey("west.test").AtMapKey("bundle_endpoint_url"),
					knownvalue.StringExact("https://spire.west.test:8443")),
			},
		}
		edited.ExpectError = regexp.MustCompile(`(?s)Field Manager Conflict.*drift-editor.*force_conflicts`)

		forced := l.updated(t, true)
		forced.ConfigPlanChecks = resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}
		forced.Check = l.checkUpdatedPeers(t)

		added := l.updated(t, true)
		// The other tool rewrites the whole list, as the atomic list requires.
		added.PreConfig = func() {
			fed, err := federationOf(t, c)
			if err != nil {
				t.Fatal(err)
			}
			list, _, _ := unstructured.NestedSlice(fed, "federatesWith")
			acctest.ApplyAs(t, c, kube.SpireServer, "peer-tool", map[string]any{
				"metadata": map[string]any{"name": "cluster"},
				"spec": map[string]any{"federation": map[string]any{
					"bundleEndpoint": map[string]any{},
					"federatesWith":  append(list, peer("extra.test", "https://bundles.extra.test", "https_web", "")),
				}},
			})
		}
		added.ConfigPlanChecks = resource.ConfigPlanChecks{
			PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(federationAddr, plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue(federationAddr, tfjsonpath.New("federates_with"), knownvalue.MapSizeExact(2)),
			},
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
		}
		added.Check = l.checkUpdatedPeers(t)

		removed := l.updated(t, true)
		removed.PreConfig = func() { patchPeer(t, c, "south.test", `{"op":"remove","path":"%s"}`) }
		removed.ConfigPlanChecks = resource.ConfigPlanChecks{
			PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(federationAddr, plancheck.ResourceActionUpdate)},
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
		}
		removed.Check = l.checkUpdatedPeers(t)

		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			CheckDestroy:             l.checkDestroyed(t, 600),
			// two_peers.tf first: updated.tf then turns managed_route off on
			// an object that had the operator's Route, as a user would.
			Steps: []resource.TestStep{l.step(t, "two_peers.tf", nil), l.updated(t, false), edited, forced, added, removed},
		}
	})
}

// checkNotOwned fails when manager owns any of fields (fieldsV1 keys such as
// "f:refreshHint") under spec.federation of the SpireServer: the provider
// must not claim what the configuration left to the CRD's defaults.
func checkNotOwned(t *testing.T, c *harness.Cluster, manager string, fields ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		owned, err := managerFields(t, c, manager)
		if err != nil {
			return err
		}
		for _, f := range fields {
			if strings.Contains(owned, `"`+f+`"`) {
				return fmt.Errorf("%s: field manager %q owns %s of the SpireServer: %s", c.Name, manager, f, owned)
			}
		}
		return nil
	}
}

// managerFields is the fieldsV1 JSON of manager's Apply entry on the
// SpireServer, or "" when it has none.
func managerFields(t *testing.T, c *harness.Cluster, manager string) (string, error) {
	obj := acctest.GetSingleton(t, c, kube.SpireServer)
	if obj == nil {
		return "", fmt.Errorf("%s: SpireServer cluster does not exist", c.Name)
	}
	for _, m := range obj.GetManagedFields() {
		if m.Manager == manager && m.Operation == metav1.ManagedFieldsOperationApply && m.FieldsV1 != nil {
			return string(m.FieldsV1.Raw), nil
		}
	}
	return "", nil
}

// editPeerURL changes one federatesWith entry's URL with a JSON patch as field
// manager "drift-editor", who then owns only that field.
func editPeerURL(t *testing.T, c *harness.Cluster, td, url string) {
	t.Helper()
	patchPeer(t, c, td, `{"op":"replace","path":"%s/bundleEndpointUrl","value":`+fmt.Sprintf("%q", url)+`}`)
}

// patchPeer applies one JSON patch operation (op holds %s for the entry's
// path) to the federatesWith entry of td, as field manager "drift-editor".
func patchPeer(t *testing.T, c *harness.Cluster, td, op string) {
	t.Helper()
	fed, err := federationOf(t, c)
	if err != nil {
		t.Fatal(err)
	}
	list, _, _ := unstructured.NestedSlice(fed, "federatesWith")
	for i, item := range list {
		if m, ok := item.(map[string]any); ok && m["trustDomain"] == td {
			patch := "[" + fmt.Sprintf(op, fmt.Sprintf("/spec/federation/federatesWith/%d", i)) + "]"
			if _, err := dynamicClient(t, c).Resource(kube.SpireServer.GVR()).Patch(context.Background(), "cluster",
				types.JSONPatchType, []byte(patch), metav1.PatchOptions{FieldManager: "drift-editor"}); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("%s: no federatesWith entry for %s in %v", c.Name, td, list)
}

// checkHTTPSWebDestroyed: destroy keeps the https_web bundle endpoint as it
// runs (the operator forbids removing spec.federation) and releases the
// list.
func (l federationLifecycle) checkHTTPSWebDestroyed(t *testing.T) resource.TestCheckFunc {
	return resource.ComposeAggregateTestCheckFunc(
		checkFederation(t, l.c, map[string]any{"bundleEndpoint.profile": "https_web"}),
		checkPeers(t, l.c, false),
	)
}

// TestAccSpireFederation_httpsWebACME: an https_web bundle endpoint whose
// certificate comes from ACME; the changes the operator's CEL rules forbid
// (another certificate source, another profile) and federating with the
// cluster's own trust domain are refused at plan.
func TestAccSpireFederation_httpsWebACME(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		l := newFederationLifecycle(t, c)
		create := l.step(t, "acme.tf", nil)
		create.ConfigPlanChecks = resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}
		create.ConfigStateChecks = []statecheck.StateCheck{
			statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("trust_domain"), knownvalue.StringExact(l.td)),
			statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("endpoint_spiffe_id"), knownvalue.StringExact("spiffe://"+l.td+"/spire/server")),
		}
		create.Check = checkFederation(t, c, map[string]any{
			"bundleEndpoint.profile":                    "https_web",
			"bundleEndpoint.httpsWeb.acme.directoryUrl": "https://acme.example.test/directory",
			"bundleEndpoint.httpsWeb.acme.domainName":   "federation.solo.test",
			"bundleEndpoint.httpsWeb.acme.email":        "admin@example.test",
			"bundleEndpoint.httpsWeb.acme.tosAccepted":  "true",
			"bundleEndpoint.httpsWeb.servingCert":       nil,
			"federatesWith":                             []any{peer("web.test", "https://bundles.web.test", "https_web", "")},
		})
		refused := func(file string, vars config.Variables, want *regexp.Regexp) resource.TestStep {
			step := l.step(t, file, vars)
			step.PlanOnly, step.ExpectError = true, want
			return step
		}
		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			CheckDestroy:             l.checkHTTPSWebDestroyed(t),
			Steps: []resource.TestStep{
				create,
				refused("serving_cert.tf", nil, regexp.MustCompile(`(?s)https_web Certificate Source Cannot Change.*acme.*serving_cert`)),
				refused("https_spiffe.tf", nil, regexp.MustCompile(`(?s)Federation Profile Cannot Change.*bundle_endpoint\.profile.*"https_web".*uninstall`)),
				refused("acme.tf", config.Variables{"peers": config.ListVariable(config.StringVariable("web.test"), config.StringVariable(l.td))},
					regexp.MustCompile(`(?s)Cannot Federate With Own Trust Domain.*`+regexp.QuoteMeta(l.td)+`.*ZeroTrustWorkloadIdentityManager`)),
			},
		}
	})
}

// TestAccSpireFederation_spireServerRecreated: the operator was reinstalled,
// a new SpireServer without federation. The resource is gone from state and
// created again, now free to pick the other certificate source, whose
// default it does not send; import reads it back.
func TestAccSpireFederation_spireServerRecreated(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		l := newFederationLifecycle(t, c)
		recreate := l.step(t, "serving_cert.tf", nil)
		recreate.PreConfig = func() {
			acctest.ResetSpireSingletons(t, c)
			l.install(t)
		}
		recreate.ConfigPlanChecks = resource.ConfigPlanChecks{
			PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(federationAddr, plancheck.ResourceActionCreate)},
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
		}
		recreate.ConfigStateChecks = []statecheck.StateCheck{
			statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("bundle_endpoint").AtMapKey("https_web").AtMapKey("serving_cert"),
				knownvalue.ObjectExact(map[string]knownvalue.Check{
					"file_sync_interval": knownvalue.Int64Exact(86400), "external_secret_ref": knownvalue.StringExact("federation-tls"),
				})),
			statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("federates_with"), knownvalue.Null()),
		}
		recreate.Check = resource.ComposeAggregateTestCheckFunc(
			checkFederation(t, c, map[string]any{
				"bundleEndpoint.httpsWeb.servingCert.fileSyncInterval":  int64(86400),
				"bundleEndpoint.httpsWeb.servingCert.externalSecretRef": "federation-tls",
				"bundleEndpoint.httpsWeb.acme":                          nil,
				"managedRoute":                                          "false",
				"federatesWith":                                         nil,
			}),
			// 86400 is the CRD's default, not sent.
			checkNotOwned(t, c, "zerotrust", "f:fileSyncInterval", "f:refreshHint"),
		)
		imported := l.step(t, "serving_cert.tf", nil)
		imported.ResourceName, imported.ImportState, imported.ImportStateId, imported.ImportStateVerify = federationAddr, true, l.id, true
		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			CheckDestroy:             l.checkHTTPSWebDestroyed(t),
			Steps:                    []resource.TestStep{l.step(t, "acme.tf", nil), recreate, imported},
		}
	})
}

// TestAccSpireFederation_preconditions: the CRD is installed but the
// operator has not created its SpireServer, so nothing is written; then a
// federation set up before Terraform with another profile is refused at plan.
func TestAccSpireFederation_preconditions(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		acctest.ResetSpireSingletons(t, c)
		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					Config: federationConfig(t, c, ""),
					ExpectError: regexp.MustCompile(
						`(?s)SpireServer Not Found.*no SpireServer named "cluster".*Zero Trust\s+Workload\s+Identity\s+Manager`),
				},
				{
					PreConfig: func() {
						if obj := acctest.GetSingleton(t, c, kube.SpireServer); obj != nil {
							t.Fatalf("%s: the failed apply created a SpireServer: %v", c.Name, obj.Object)
						}
						acctest.ApplyAs(t, c, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(map[string]any{
							"federation": map[string]any{"bundleEndpoint": map[string]any{
								"profile":  "https_web",
								"httpsWeb": map[string]any{"servingCert": map[string]any{"externalSecretRef": "federation-tls"}},
							}},
						}))
					},
					Config:      federationConfig(t, c, ""),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(`(?s)Federation Profile Cannot Change.*existing SpireServer has profile\s+"https_web"`),
				},
			},
		}
	})
}

func TestAccSpireFederation_missingCRD(t *testing.T) {
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: acctest.ProviderConfig(t) + `
resource "zerotrust_spire_federation" "this" {
  cluster = "bare"
}
`,
			ExpectError: regexp.MustCompile(
				`(?s)CustomResourceDefinition Not Installed.*spireservers\.operator\.openshift\.io.*Zero Trust Workload\s+Identity\s+Manager`),
		}},
	})
}

// TestAccSpireFederation_selfFederationAtApply plans while the cluster's
// connection is unknown (the cluster is created in the same apply), so the
// own trust domain can only be checked at apply, before anything is written.
func TestAccSpireFederation_selfFederationAtApply(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		acctest.ResetSpireSingletons(t, c)
		td := acctest.UniqueName("late") + ".test"
		acctest.ApplyAs(t, c, kube.ZeroTrustWorkloadIdentityManager, acctest.OperatorManager, acctest.ZTWIMObject(td, "solo"))
		acctest.ApplyAs(t, c, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(nil))
		config := acctest.LateProviderConfig(c) + fmt.Sprintf(`
resource "zerotrust_spire_federation" "this" {
  cluster = "late"
  federates_with = {
    %q = {
      bundle_endpoint_url     = "https://spire.%s"
      bundle_endpoint_profile = "https_spiffe"
      endpoint_spiffe_id      = "spiffe://%s/spire/server"
    }
  }
}
`, td, td, td)
		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectUnknownValue("terraform_data.cluster", tfjsonpath.New("output")),
						plancheck.ExpectUnknownValue(federationAddr, tfjsonpath.New("trust_domain")),
					},
				},
				ExpectError: regexp.MustCompile(`(?s)Cannot Federate With Own Trust Domain.*` + regexp.QuoteMeta(td) +
					`.*ZeroTrustWorkloadIdentityManager`),
			}},
			CheckDestroy: func(*terraform.State) error {
				if fed, err := federationOf(t, c); err != nil || fed != nil {
					return fmt.Errorf("%s: spec.federation = %v (err %v), want nothing written", c.Name, fed, err)
				}
				return nil
			},
		}
	})
}

// TestAccSpireFederation_destroyWarning calls the destroy plan and Delete
// directly, because terraform-plugin-testing cannot assert warnings: the
// plan warns that spec.federation stays, Delete says it no second time, and
// Delete releases only the entries while the operator's and the bundle
// endpoint's fields stay.
func TestAccSpireFederation_destroyWarning(t *testing.T) {
	t.Parallel()
	c := acctest.Exclusive(t)
	ctx := context.Background()
	acctest.ResetSpireSingletons(t, c)
	acctest.ApplyAs(t, c, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(map[string]any{"logLevel": "warn"}))
	// What an earlier apply of this provider (field manager "zerotrust") wrote.
	acctest.ApplyAs(t, c, kube.SpireServer, "zerotrust", map[string]any{
		"metadata": map[string]any{"name": "cluster"},
		"spec": map[string]any{"federation": map[string]any{
			"bundleEndpoint": map[string]any{"profile": "https_spiffe", "refreshHint": int64(900)},
			"managedRoute":   "true",
			"federatesWith":  []any{peer("peer.test", "https://bundles.peer.test", "https_web", "")},
		}},
	})

	clusters := kube.NewClusters(kube.Settings{FieldManager: "zerotrust", QPS: 50, Burst: 100})
	clusters.Add(c.Name, kube.Connection{ConfigPaths: []string{c.Kubeconfig}, ConfigContext: c.Name}, false)
	r, ok := resources.NewSpireFederationResource().(interface {
		fwresource.ResourceWithConfigure
		fwresource.ResourceWithModifyPlan
	})
	if !ok {
		t.Fatal("the resource does not implement Configure and ModifyPlan")
	}
	var configured fwresource.ConfigureResponse
	r.Configure(ctx, fwresource.ConfigureRequest{ProviderData: &providerdata.Data{
		Clusters: clusters, Spire: providerdata.ResolveSpire(providerdata.SpireSettings{}), MaxFederatedTrustDomains: 50,
	}}, &configured)
	var sch fwresource.SchemaResponse
	r.Schema(ctx, fwresource.SchemaRequest{}, &sch)
	null := tftypes.NewValue(sch.Schema.Type().TerraformType(ctx), nil)
	state := tfsdk.State{Schema: sch.Schema, Raw: null}
	diags := append(configured.Diagnostics, state.SetAttribute(ctx, path.Root("cluster"), c.Name)...)
	diags = append(diags, state.SetAttribute(ctx, path.Root("force_conflicts"), false)...)
	if diags.HasError() {
		t.Fatal(diags)
	}

	plan := fwresource.ModifyPlanResponse{Plan: tfsdk.Plan{Schema: sch.Schema, Raw: null}}
	r.ModifyPlan(ctx, fwresource.ModifyPlanRequest{
		State: state, Plan: tfsdk.Plan{Schema: sch.Schema, Raw: null}, Config: tfsdk.Config{Schema: sch.Schema, Raw: null},
	}, &plan)
	requireOneWarning(t, "destroy plan", plan.Diagnostics, "Federation Stays on the SpireServer")

	deleted := fwresource.DeleteResponse{State: state}
	r.Delete(ctx, fwresource.DeleteRequest{State: state}, &deleted)
	if len(deleted.Diagnostics) != 0 {
		t.Fatalf("delete: want no diagnostics (the destroy plan warned already), got %v", deleted.Diagnostics)
	}

	for _, check := range []resource.TestCheckFunc{
		checkFederation(t, c, map[string]any{"bundleEndpoint.profile": "https_spiffe", "bundleEndpoint.refreshHint": int64(900), "managedRoute": "true"}),
		checkPeers(t, c, false),
		checkSpec(t, c, map[string]string{"logLevel": "warn", "jwtIssuer": "https://oidc-discovery.apps.example.test"}),
	} {
		if err := check(nil); err != nil {
			t.Error(err)
		}
	}
}

func requireOneWarning(t *testing.T, what string, diags diag.Diagnostics, summary string) {
	t.Helper()
	if diags.HasError() || diags.WarningsCount() != 1 {
		t.Fatalf("%s: want exactly one warning and no error, got %v", what, diags)
	}
	w := diags.Warnings()[0]
	if w.Summary() != summary || !strings.Contains(w.Detail(), "cannot be removed once set") || !strings.Contains(w.Detail(), "uninstall") {
		t.Fatalf("%s: warning %q: %q does not explain that spec.federation stays and how to remove it", what, w.Summary(), w.Detail())
	}
}

// brownfieldFederation is a SpireServer `cluster` whose federation someone
// set up before Terraform.
type brownfieldFederation struct {
	// create writes it, with only the fields its author cared about; the API
	// server fills in the CRD's defaults.
	create func(t *testing.T, c *harness.Cluster)
	// hcl is what a user adopting it writes: no more than that.
	hcl string
	// defaulted are the fieldsV1 keys of the fields create left to the CRD's
	// defaults and hcl does not set: the provider must never own them.
	defaulted []string
}

// testBrownfieldImport adopts a brownfield federation with an import block
// and with `terraform import`: both plan nothing, and nothing is written to
// the cluster (same resourceVersion, no field manager of this provider).
// A later change then writes only what it changes: the fields the CRD
// defaulted stay unowned by the provider.
func testBrownfieldImport(t *testing.T, bf brownfieldFederation) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		acctest.ResetSpireSingletons(t, c)
		acctest.ZTWIMStandIn(t, c)
		td := acctest.UniqueName("brown") + ".test"
		acctest.ApplyAs(t, c, kube.ZeroTrustWorkloadIdentityManager, acctest.OperatorManager, acctest.ZTWIMObject(td, "solo"))
		bf.create(t, c)
		// The operator's own writes (status, owner reference, Route) come
		// before what the import must leave unchanged.
		acctest.WaitZTWIMReconciled(t, c)
		before := acctest.GetSingleton(t, c, kube.SpireServer)
		id := c.Name + "/cluster"
		config := federationConfig(t, c, bf.hcl)
		added := strings.Replace(bf.hcl, "federates_with = {", `federates_with = {
    "added.test" = { bundle_endpoint_url = "https://bundles.added.test", bundle_endpoint_profile = "https_web" }`, 1)
		if !strings.Contains(bf.hcl, "federates_with") {
			added = bf.hcl + `
  federates_with = {
    "added.test" = { bundle_endpoint_url = "https://bundles.added.test", bundle_endpoint_profile = "https_web" }
  }`
		}
		unchanged := func(*terraform.State) error {
			now := acctest.GetSingleton(t, c, kube.SpireServer)
			if now == nil {
				return fmt.Errorf("%s: SpireServer cluster is gone", c.Name)
			}
			if now.GetResourceVersion() != before.GetResourceVersion() {
				return fmt.Errorf("%s: SpireServer written on import (resourceVersion %s, was %s): %v",
					c.Name, now.GetResourceVersion(), before.GetResourceVersion(), now.GetManagedFields())
			}
			for _, m := range now.GetManagedFields() {
				if m.Manager == "zerotrust" {
					return fmt.Errorf("%s: field manager zerotrust appears on the SpireServer after import only", c.Name)
				}
			}
			return nil
		}
		return resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					// import {} block: terraform-plugin-testing appends it and
					// requires a no-op plan for the imported resource.
					Config:          config,
					ResourceName:    federationAddr,
					ImportState:     true,
					ImportStateKind: resource.ImportBlockWithID,
					ImportStateId:   id,
					ImportPlanChecks: resource.ImportPlanChecks{
						PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction(federationAddr, plancheck.ResourceActionNoop),
							plancheck.ExpectKnownValue(federationAddr, tfjsonpath.New("trust_domain"), knownvalue.StringExact(td)),
						},
					},
				},
				{
					// terraform import, kept in state for the steps below.
					Config:             config,
					ResourceName:       federationAddr,
					ImportState:        true,
					ImportStateId:      id,
					ImportStatePersist: true,
				},
				{
					Config: config,
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					ConfigStateChecks: []statecheck.StateCheck{
						statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("id"), knownvalue.StringExact(id)),
						// The CRD's default managedRoute "true": the operator's Route.
						statecheck.ExpectKnownValue(federationAddr, tfjsonpath.New("bundle_endpoint_url"), knownvalue.StringExact("https://federation."+td)),
					},
					Check: unchanged,
				},
				{
					// A change writes the peer list (taking it over from its
					// creator, who may own it); the fields the CRD defaulted
					// stay the API server's even so.
					Config: federationConfig(t, c, added+"\n  force_conflicts = true"),
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(federationAddr, plancheck.ResourceActionUpdate)},
						PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					Check: resource.ComposeAggregateTestCheckFunc(
						checkNotOwned(t, c, "zerotrust", bf.defaulted...),
						func(*terraform.State) error {
							owned, err := managerFields(t, c, "zerotrust")
							if err != nil {
								return err
							}
							if !strings.Contains(owned, `"f:federatesWith"`) {
								return fmt.Errorf("%s: zerotrust does not own federatesWith after adding a peer: %s", c.Name, owned)
							}
							return nil
						},
					),
				},
			},
		}
	})
}

// TestAccSpireFederation_brownfieldImport: federation set up by the operator's
// administrator with server-side apply (manager "ztwim-operator") and only
// the required bundleEndpoint, so profile, refreshHint and managedRoute are
// the CRD's defaults. The user adopting it writes only the cluster.
func TestAccSpireFederation_brownfieldImport(t *testing.T) {
	testBrownfieldImport(t, brownfieldFederation{
		defaulted: []string{"f:profile", "f:refreshHint", "f:managedRoute"},
		create: func(t *testing.T, c *harness.Cluster) {
			acctest.ApplyAs(t, c, kube.SpireServer, "ztwim-operator", acctest.SpireServerObject(map[string]any{
				"federation": map[string]any{"bundleEndpoint": map[string]any{}},
			}))
		},
	})
}

// TestAccSpireFederation_brownfieldImportHTTPSWeb: a plain create (as
// `kubectl create` does) of an https_web endpoint with an ACME certificate
// and one peer, leaving refreshHint and managedRoute to the CRD's defaults
// (tosAccepted is set: the operator refuses ACME without it). The user
// writes what they chose, nothing the CRD defaulted.
func TestAccSpireFederation_brownfieldImportHTTPSWeb(t *testing.T) {
	testBrownfieldImport(t, brownfieldFederation{
		defaulted: []string{"f:refreshHint", "f:managedRoute"},
		create: func(t *testing.T, c *harness.Cluster) {
			obj := &unstructured.Unstructured{Object: acctest.SpireServerObject(map[string]any{
				"federation": map[string]any{
					"bundleEndpoint": map[string]any{
						"profile": "https_web",
						"httpsWeb": map[string]any{"acme": map[string]any{
							"directoryUrl": "https://acme.example.test/directory", "domainName": "federation.solo.test",
							"email": "admin@example.test", "tosAccepted": "true",
						}},
					},
					"federatesWith": []any{peer("west.test", "https://spire.west.test", "https_spiffe", "spiffe://west.test/spire/server")},
				},
			})}
			obj.SetAPIVersion(kube.SpireServer.APIVersion())
			obj.SetKind(kube.SpireServer.Kind)
			if _, err := dynamicClient(t, c).Resource(kube.SpireServer.GVR()).Create(context.Background(), obj,
				metav1.CreateOptions{FieldManager: "kubectl-create"}); err != nil {
				t.Fatalf("%s: create SpireServer: %v", c.Name, err)
			}
		},
		hcl: `
  bundle_endpoint = {
    profile = "https_web"
    https_web = {
      acme = {
        directory_url = "https://acme.example.test/directory"
        domain_name   = "federation.solo.test"
        email         = "admin@example.test"
        tos_accepted  = true
      }
    }
  }
  federates_with = {
    "west.test" = {
      bundle_endpoint_url     = "https://spire.west.test"
      bundle_endpoint_profile = "https_spiffe"
      endpoint_spiffe_id      = "spiffe://west.test/spire/server"
    }
  }`,
	})
}
