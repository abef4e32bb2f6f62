// Package fastpath serves the RPCs a plan sends for every managed
// instance, ValidateResourceConfig (validate.go), UpgradeResourceState
// (upgrade.go), ReadResource and PlanResourceChange, for a resource whose
// count makes them the provider's hot path, without the framework's
// per-request machinery, in the cases where the answer is certain: a
// configuration its schema's own validators and the resource's
// ValidateConfig find nothing to say about, a state of the schema's own
// version, a refresh, and a plan that changes nothing. Everything else goes
// to the framework.
//
// Why: at 1000 objects the framework's own work for these RPCs (its
// schema walks per attribute path, value copies, semantic-equality and
// write-only passes, defaults and plan modifiers run through reflection) was
// most of the provider's CPU (bench/ANALYSIS.md). The upstream causes are open
// framework issues: the semantic-equality walk over every attribute of every
// request (hashicorp/terraform-plugin-framework#1314, with a proposed fix in
// hashicorp/terraform-plugin-framework#1315), log lines formatted whether or
// not anyone reads them (hashicorp/terraform-plugin-framework#1269), and a
// regular expression compiled per model field
// (hashicorp/terraform-plugin-framework#725, see Codec). When a
// framework release fixes them, bench/ decides whether this package still
// earns its place (CHANGELOG, NOTES). terraform-plugin-go is the
// library the framework itself serves with; the fast path decodes and
// encodes with it and runs the resource's own Read and ModifyPlan logic.
//
// How a resource gets one: For (for.go) holds the plumbing, and the resource
// brings its Hooks (what it does to identify, refresh and plan its model).
// The resource's Read, ModifyPlan and ValidateConfig call For's, so both
// ways run the same hooks; For.Resource is the fast path, which the provider
// hands to protoserver.WithFastPaths by resource type name.
//
// What keeps the answers equal to the framework's: a Resource answers only
// requests it can prove the framework would answer the same way (for a
// plan: proposed state equal to prior state, no default or attribute plan
// modifier that would change a value, the resource's plan logic changing
// nothing and saying nothing), and says "not mine" (false) for anything
// else, before any side effect that the framework's answer would repeat
// differently. Shortcut and Validation check the schema once and refuse
// schemas with features they do not model. The resources' tests compare both answers on
// a real API server.
//
// Leashes, as for any answer that goes around the framework: Enabled
// switches every fast path off on framework or terraform-plugin-go versions
// other than the verified ones (gate.go) and when ZEROTRUST_FASTPATH=off;
// then the framework answers everything, exactly as without the fast paths
// (the codec, which uses only the framework's public API, stays).
package fastpath

import (
	"context"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// Resource is a fast path for one resource type. Each method returns false
// when the framework must answer; then its response is ignored.
type Resource interface {
	ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, bool)
	ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, bool)
	PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, bool)
	UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, bool)
}
