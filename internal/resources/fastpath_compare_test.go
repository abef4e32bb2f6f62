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

	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/protoserver"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/provider"
)

// This file is shared by the fast paths' acceptance tests
// (<name>_fastpath_test.go): the comparer that checks each fast answer
// against the framework's.

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
	types func() map[string][2]tftypes.Type // by type name: state, identity
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
			s.types = sync.OnceValue(func() map[string][2]tftypes.Type {
				ctx := context.Background()
				schemas, err := framework.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
				ids, err2 := framework.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
				if err != nil || err2 != nil {
					c.t.Errorf("schemas: %v %v", err, err2)
					return nil
				}
				out := map[string][2]tftypes.Type{}
				for name := range fast {
					out[name] = [2]tftypes.Type{schemas.ResourceSchemas[name].ValueType(), ids.IdentitySchemas[name].ValueType()}
				}
				return out
			})
			return s, nil
		},
	}
}

// typesOf are the state and identity types of typeName.
func (s comparingServer) typesOf(typeName string) (state, identity tftypes.Type) {
	t, ok := s.types()[typeName]
	if !ok {
		s.c.t.Errorf("%s: no schema", typeName)
		return tftypes.DynamicPseudoType, tftypes.DynamicPseudoType
	}
	return t[0], t[1]
}

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
	stateType, idType := s.typesOf(req.TypeName)
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
	stateType, idType := s.typesOf(req.TypeName)
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
	stateType, _ := s.typesOf(req.TypeName)
	where := "UpgradeResourceState " + req.TypeName
	s.c.sameDiagnostics(where, want.Diagnostics)
	s.c.sameValue(where+" upgraded state", stateType, fast.UpgradedState, want.UpgradedState)
	return fast, nil
}

// withoutOnceWarnings drops the warnings the framework's Read says once per
// cluster when SPIRE cannot be asked ("SPIRE Not Asked" of
// federated_trust_domain, "SPIRE Bundles Not Read" of spire_bundle): the first Read to
// reach the framework says it, and this comparer's own framework calls, made
// for requests the fast path answered, take part in that race (Terraform's
// requests never reach the framework twice).
func withoutOnceWarnings(diags []*tfprotov6.Diagnostic) []*tfprotov6.Diagnostic {
	var out []*tfprotov6.Diagnostic
	for _, d := range diags {
		if d.Severity != tfprotov6.DiagnosticSeverityWarning || d.Summary != "SPIRE Not Asked" && d.Summary != "SPIRE Bundles Not Read" {
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
