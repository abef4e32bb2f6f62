package fastpath

import (
	"context"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// UpgradeResourceState answers the third RPC a plan sends for every managed
// instance (before its refresh) when the stored state is of the schema's
// own version: then the framework (v1.19, fwserver UpgradeResourceState)
// configures nothing and calls no upgrader, it only decodes the JSON state
// against the schema's type, ignoring attributes the schema no longer has,
// and encodes it again (toproto6.State, whose null-block reification has
// nothing to do for the single nested blocks Shortcut admits). Doing that
// here skips the framework's request and response conversions, a fifth of
// the provider's CPU in an N = 1000 plan (bench/ANALYSIS.md). Any other
// version, a state that does not decode (the framework's error says why)
// and a schema Shortcut refuses go to the framework.
func (s served[M]) UpgradeResourceState(_ context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, bool) {
	if s.shortcut.Why != "" || req.RawState == nil || req.Version != s.shortcut.schema.Version {
		return nil, false
	}
	if req.RawState.JSON == nil { // a flatmap state, which the framework refuses
		return nil, false
	}
	raw, err := stateFromJSON(req.RawState.JSON, s.shortcut.Type)
	if err != nil {
		return nil, false
	}
	upgraded, err := s.recent.Marshal(raw)
	if err != nil {
		return nil, false
	}
	return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: &upgraded}, true
}
