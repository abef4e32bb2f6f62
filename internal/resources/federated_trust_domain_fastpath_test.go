package resources_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/protoserver"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/provider"
)

// fastPathComparer serves the provider to terraform with its fast paths and,
// for every request a fast path answers, asks the framework too (the same
// provider's framework server) and reports any difference in state, private
// state, identity, diagnostics, replacement paths or deferral. Terraform gets
// the fast path's answers, so its own consistency checks apply to them.
type fastPathComparer struct {
	t  *testing.T
	mu sync.Mutex
	// counts by "read"/"plan" and "fast"/"framework"
	counts map[string]int
}

type comparingServer struct {
	tfprotov6.ProviderServer
	fast  map[string]fastpath.Resource
	c     *fastPathComparer
	types func() (state, identity tftypes.Type)
}

func (c *fastPathComparer) factories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"zerotrust": func() (tfprotov6.ProviderServer, error) {
			p := provider.New("test")()
			framework := protoserver.Release(providerserver.NewProtocol6(p)())
			fast := provider.FastPaths(p)
			if len(fast) == 0 {
				return nil, fmt.Errorf("the provider has no fast paths")
			}
			s := comparingServer{ProviderServer: framework, fast: fast, c: c}
			s.types = sync.OnceValues(func() (tftypes.Type, tftypes.Type) {
				ctx := context.Background()
				schemas, err := framework.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
				ids, err2 := framework.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
				if err != nil || err2 != nil {
					c.t.Errorf("schemas: %v %v", err, err2)
					return tftypes.DynamicPseudoType, tftypes.DynamicPseudoType
				}
				return schemas.ResourceSchemas[ftdType].ValueType(), ids.IdentitySchemas[ftdType].ValueType()
			})
			return s, nil
		},
	}
}

const ftdType = "zerotrust_federated_trust_domain"

func (c *fastPathComparer) count(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[string]int{}
	}
	c.counts[key]++
}

func (c *fastPathComparer) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

func (s comparingServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	fp := s.fast[req.TypeName]
	if fp == nil {
		return s.ProviderServer.ReadResource(ctx, req)
	}
	fast, ok := fp.ReadResource(ctx, req)
	if !ok {
		s.c.count("read/framework")
		return s.ProviderServer.ReadResource(ctx, req)
	}
	s.c.count("read/fast")
	want, err := s.ProviderServer.ReadResource(ctx, req)
	if err != nil {
		s.c.t.Errorf("framework ReadResource: %v", err)
		return fast, nil
	}
	stateType, idType := s.types()
	where := "ReadResource " + req.TypeName
	s.c.sameDiagnostics(where, withoutOnceWarnings(want.Diagnostics))
	s.c.sameValue(where+" new state", stateType, fast.NewState, want.NewState)
	s.c.sameIdentity(where, idType, fast.NewIdentity, want.NewIdentity)
	s.c.samePrivate(where, fast.Private, want.Private)
	if want.Deferred != nil {
		s.c.t.Errorf("%s: the framework deferred (%v), the fast path answered", where, want.Deferred.Reason)
	}
	return fast, nil
}

func (s comparingServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	fp := s.fast[req.TypeName]
	if fp == nil {
		return s.ProviderServer.PlanResourceChange(ctx, req)
	}
	fast, ok := fp.PlanResourceChange(ctx, req)
	if !ok {
		s.c.count("plan/framework")
		return s.ProviderServer.PlanResourceChange(ctx, req)
	}
	s.c.count("plan/fast")
	want, err := s.ProviderServer.PlanResourceChange(ctx, req)
	if err != nil {
		s.c.t.Errorf("framework PlanResourceChange: %v", err)
		return fast, nil
	}
	stateType, idType := s.types()
	where := "PlanResourceChange " + req.TypeName
	s.c.sameDiagnostics(where, want.Diagnostics)
	s.c.sameValue(where+" planned state", stateType, fast.PlannedState, want.PlannedState)
	s.c.sameIdentity(where, idType, fast.PlannedIdentity, want.PlannedIdentity)
	s.c.samePrivate(where, fast.PlannedPrivate, want.PlannedPrivate)
	if len(want.RequiresReplace) > 0 || want.Deferred != nil {
		s.c.t.Errorf("%s: the framework plans replacement of %v (deferred: %v), the fast path answered", where, want.RequiresReplace, want.Deferred)
	}
	return fast, nil
}

func (s comparingServer) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	fp := s.fast[req.TypeName]
	if fp == nil {
		return s.ProviderServer.ValidateResourceConfig(ctx, req)
	}
	fast, ok := fp.ValidateResourceConfig(ctx, req)
	if !ok {
		s.c.count("validate/framework")
		return s.ProviderServer.ValidateResourceConfig(ctx, req)
	}
	s.c.count("validate/fast")
	want, err := s.ProviderServer.ValidateResourceConfig(ctx, req)
	if err != nil {
		s.c.t.Errorf("framework ValidateResourceConfig: %v", err)
		return fast, nil
	}
	s.c.sameDiagnostics("ValidateResourceConfig "+req.TypeName, want.Diagnostics)
	return fast, nil
}

func (s comparingServer) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	fp := s.fast[req.TypeName]
	if fp == nil {
		return s.ProviderServer.UpgradeResourceState(ctx, req)
	}
	fast, ok := fp.UpgradeResourceState(ctx, req)
	if !ok {
		s.c.count("upgrade/framework")
		return s.ProviderServer.UpgradeResourceState(ctx, req)
	}
	s.c.count("upgrade/fast")
	want, err := s.ProviderServer.UpgradeResourceState(ctx, req)
	if err != nil {
		s.c.t.Errorf("framework UpgradeResourceState: %v", err)
		return fast, nil
	}
	stateType, _ := s.types()
	where := "UpgradeResourceState " + req.TypeName
	s.c.sameDiagnostics(where, want.Diagnostics)
	s.c.sameValue(where+" upgraded state", stateType, fast.UpgradedState, want.UpgradedState)
	return fast, nil
}

// withoutOnceWarnings drops the warning the framework's Read says once per
// cluster when SPIRE cannot be asked ("SPIRE Not Asked"): the first Read to
// reach the framework says it, and this comparer's own framework calls, made
// for requests the fast path answered, take part in that race (Terraform's
// requests never reach the framework twice).
func withoutOnceWarnings(diags []*tfprotov6.Diagnostic) []*tfprotov6.Diagnostic {
	var out []*tfprotov6.Diagnostic
	for _, d := range diags {
		if d.Severity != tfprotov6.DiagnosticSeverityWarning || d.Summary != "SPIRE Not Asked" {
			out = append(out, d)
		}
	}
	return out
}

func (c *fastPathComparer) sameDiagnostics(where string, want []*tfprotov6.Diagnostic) {
	if len(want) > 0 {
		c.t.Errorf("%s: the framework answered with diagnostics %v, the fast path answered without", where, summaries(want))
	}
}

func (c *fastPathComparer) sameValue(where string, typ tftypes.Type, got, want *tfprotov6.DynamicValue) {
	if (got == nil) != (want == nil) {
		c.t.Errorf("%s: fast path %v, framework %v", where, got, want)
		return
	}
	if got == nil {
		return
	}
	g, err1 := got.Unmarshal(typ)
	w, err2 := want.Unmarshal(typ)
	if err1 != nil || err2 != nil {
		c.t.Errorf("%s: decoding: %v %v", where, err1, err2)
		return
	}
	if !g.Equal(w) {
		c.t.Errorf("%s differs:\nfast path: %s\nframework: %s", where, g, w)
	}
}

func (c *fastPathComparer) sameIdentity(where string, typ tftypes.Type, got, want *tfprotov6.ResourceIdentityData) {
	if (got == nil) != (want == nil) {
		c.t.Errorf("%s identity: fast path %v, framework %v", where, got, want)
		return
	}
	if got != nil {
		c.sameValue(where+" identity", typ, got.IdentityData, want.IdentityData)
	}
}

func (c *fastPathComparer) samePrivate(where string, got, want []byte) {
	decode := func(b []byte) map[string]string {
		m := map[string][]byte{}
		if len(b) > 0 {
			if err := json.Unmarshal(b, &m); err != nil {
				c.t.Errorf("%s: private state %q: %v", where, b, err)
			}
		}
		out := map[string]string{}
		for k, v := range m {
			out[k] = string(v)
		}
		return out
	}
	if g, w := decode(got), decode(want); !maps.Equal(g, w) {
		c.t.Errorf("%s private state differs: fast path %v, framework %v", where, g, w)
	}
}

func fastPathConfig(t *testing.T, id, imported string) string {
	t.Helper()
	cfg := acctest.ProviderConfig(t) + fmt.Sprintf(`
# Enough objects on one cluster for the refresh to read most from one LIST.
resource "zerotrust_federated_trust_domain" "many" {
  count               = 12
  cluster             = "west"
  trust_domain        = "fp${count.index}-%[1]s.test"
  bundle_endpoint_url = "https://spire.fp${count.index}-%[1]s.test:8443"
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = "spiffe://fp${count.index}-%[1]s.test/spire/server"
  }
  force_conflicts = true # takes the drifted field back
}

# The default connection, every optional attribute unset.
resource "zerotrust_federated_trust_domain" "defaults" {
  trust_domain        = "fpdefault-%[1]s.test"
  bundle_endpoint_url = "https://spire.fpdefault-%[1]s.test"
  bundle_endpoint_profile = { type = "https_web" }
}

# Every optional attribute set, defaults to their non-default values.
resource "zerotrust_federated_trust_domain" "explicit" {
  cluster             = "east"
  name                = "fpexplicit-%[1]s"
  trust_domain        = "fpexplicit_%[1]s.test"
  bundle_endpoint_url = "https://spire.fpexplicit.test:8443/bundle"
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = "spiffe://fpexplicit_%[1]s.test/spire/server"
  }
  class_name               = "fp-class"
  force_conflicts          = true
  wait_for_bundle          = false
  delete_bundle_on_destroy = false
  spire_server             = { namespace = "spire-fp" }
  timeouts {
    create = "2m"
  }
}
`, id)
	if imported != "" {
		cfg += fmt.Sprintf(`
import {
  to = zerotrust_federated_trust_domain.adopted
  id = "west/%[1]s"
}

resource "zerotrust_federated_trust_domain" "adopted" {
  cluster             = "west"
  name                = %[1]q
  trust_domain        = "%[1]s.test"
  bundle_endpoint_url = "https://spire.%[1]s.test:8443"
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = "spiffe://%[1]s.test/spire/server"
  }
}
`, imported)
	}
	return cfg
}

// TestAccFederatedTrustDomainFastPath_sameAnswers: every configuration
// check, state upgrade, refresh and unchanged plan the fast path answers
// (internal/fastpath) is answered by the framework too and must be the same, through creation, plans after
// apply, drift (a changed and a deleted object: the fast path refreshes the
// changed one, the framework plans the update and the re-creation), and an
// import of an object another manager made with its own class (the
// framework's first Read after import, the fast path's plans after it).
func TestAccFederatedTrustDomainFastPath_sameAnswers(t *testing.T) {
	id := acctest.UniqueName("fp")
	adopted := "fpadopted-" + id
	cmp := &fastPathComparer{t: t}
	dyn := acctest.Dynamic(t, "west")
	ctx := context.Background()
	many := func(i int) string { return fmt.Sprintf("fp%d-%s.test", i, id) }
	var afterApply map[string]int

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: cmp.factories(),
		Steps: []resource.TestStep{
			{Config: fastPathConfig(t, id, "")},
			{
				PreConfig: func() {
					afterApply = cmp.snapshot()
					// Drift made by someone else: a changed URL, a deleted object.
					patch := []byte(`{"spec":{"bundleEndpointURL":"https://elsewhere.test:8443"}}`)
					if _, err := dyn.Resource(cftdGVR).Patch(ctx, many(1), k8stypes.MergePatchType, patch, metav1.PatchOptions{FieldManager: "fp-other"}); err != nil {
						t.Fatalf("drift: %v", err)
					}
					if err := dyn.Resource(cftdGVR).Delete(ctx, many(2), metav1.DeleteOptions{}); err != nil {
						t.Fatalf("drift: %v", err)
					}
				},
				Config: fastPathConfig(t, id, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("zerotrust_federated_trust_domain.many[1]", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("zerotrust_federated_trust_domain.many[2]", plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction("zerotrust_federated_trust_domain.many[3]", plancheck.ResourceActionNoop),
				}},
			},
			{
				PreConfig: func() {
					obj := &unstructured.Unstructured{Object: map[string]any{
						"apiVersion": "spire.spiffe.io/v1alpha1", "kind": "ClusterFederatedTrustDomain",
						"metadata": map[string]any{"name": adopted},
						"spec": map[string]any{
							"trustDomain": adopted + ".test", "bundleEndpointURL": "https://spire." + adopted + ".test:8443",
							"bundleEndpointProfile": map[string]any{"type": "https_spiffe", "endpointSPIFFEID": "spiffe://" + adopted + ".test/spire/server"},
							"className":             "someone-elses",
						},
					}}
					if _, err := dyn.Resource(cftdGVR).Create(ctx, obj, metav1.CreateOptions{FieldManager: "fp-other"}); err != nil {
						t.Fatalf("creating the object to adopt: %v", err)
					}
				},
				Config: fastPathConfig(t, id, adopted),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("zerotrust_federated_trust_domain.adopted", plancheck.ResourceActionNoop),
				}},
			},
		},
	})

	got := cmp.snapshot()
	t.Logf("answers: after the first apply %v, in all %v", afterApply, got)
	// The first step's refresh after apply and its plans of 14 unchanged
	// instances come from the fast path; so does most of every later step.
	// One read per cluster whose SPIRE server cannot be asked (east and west
	// run none here) goes to the framework, which says so once.
	if afterApply["read/fast"] < 14-2 || afterApply["plan/fast"] < 14 {
		t.Errorf("the fast path answered %v by the end of the first step, want >= 12 reads and 14 plans", afterApply)
	}
	// Every configuration here is valid, and every state of the schema's version.
	if got["validate/framework"] > 0 || got["validate/fast"] < 14 || got["upgrade/framework"] > 0 || got["upgrade/fast"] < 14 {
		t.Errorf("answers %v: want every configuration check and state upgrade from the fast path", got)
	}
	// Creation plans, drift plans and the first read after import are the framework's.
	if got["plan/framework"] < 14+2 || got["read/framework"] < 1 {
		t.Errorf("the framework answered %v, want the creation and drift plans and the read after import", got)
	}
}
