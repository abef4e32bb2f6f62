package protoserver

import (
	"context"
	"os"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
)

// countingFast is a fast path that answers or declines every request as
// told and counts what it was asked.
type countingFast struct {
	answer bool
	asked  map[string]int
}

func (f *countingFast) ValidateResourceConfig(context.Context, *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, bool) {
	f.asked["validate"]++
	return &tfprotov6.ValidateResourceConfigResponse{}, f.answer
}

func (f *countingFast) ReadResource(context.Context, *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, bool) {
	f.asked["read"]++
	return &tfprotov6.ReadResourceResponse{}, f.answer
}

func (f *countingFast) PlanResourceChange(context.Context, *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, bool) {
	f.asked["plan"]++
	return &tfprotov6.PlanResourceChangeResponse{}, f.answer
}

func (f *countingFast) UpgradeResourceState(context.Context, *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, bool) {
	f.asked["upgrade"]++
	return &tfprotov6.UpgradeResourceStateResponse{}, f.answer
}

// countingFramework stands for the framework's server: it counts the four
// RPCs a fast path may answer (any other RPC would panic on the nil
// embedded server).
type countingFramework struct {
	tfprotov6.ProviderServer
	asked map[string]int
}

func (f countingFramework) ValidateResourceConfig(context.Context, *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	f.asked["validate"]++
	return &tfprotov6.ValidateResourceConfigResponse{}, nil
}

func (f countingFramework) ReadResource(context.Context, *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	f.asked["read"]++
	return &tfprotov6.ReadResourceResponse{}, nil
}

func (f countingFramework) PlanResourceChange(context.Context, *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	f.asked["plan"]++
	return &tfprotov6.PlanResourceChangeResponse{}, nil
}

func (f countingFramework) UpgradeResourceState(context.Context, *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	f.asked["upgrade"]++
	return &tfprotov6.UpgradeResourceStateResponse{}, nil
}

// TestFastPathAskedOnce: every request reaches the fast path once and, only
// when it declines, the framework once. A fast path that claims something
// once per walk (a warning the framework's answer then says) relies on it.
func TestFastPathAskedOnce(t *testing.T) {
	const typeName = "zerotrust_thing"
	for _, answer := range []bool{true, false} {
		fast := &countingFast{answer: answer, asked: map[string]int{}}
		framework := countingFramework{asked: map[string]int{}}
		s := releasing{ProviderServer: framework, fast: map[string]fastpath.Resource{typeName: fast}}
		ctx := context.Background()
		_, _ = s.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: typeName})
		_, _ = s.UpgradeResourceState(ctx, &tfprotov6.UpgradeResourceStateRequest{TypeName: typeName})
		_, _ = s.ReadResource(ctx, &tfprotov6.ReadResourceRequest{TypeName: typeName})
		_, _ = s.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: typeName})
		// A type without a fast path goes to the framework only.
		_, _ = s.ReadResource(ctx, &tfprotov6.ReadResourceRequest{TypeName: "zerotrust_other"})
		for _, rpc := range []string{"validate", "upgrade", "read", "plan"} {
			wantFramework := 0
			if !answer {
				wantFramework = 1
			}
			if rpc == "read" {
				wantFramework++
			}
			if fast.asked[rpc] != 1 || framework.asked[rpc] != wantFramework {
				t.Errorf("fast path answering %v, %s: fast path asked %d times, framework %d; want 1 and %d",
					answer, rpc, fast.asked[rpc], framework.asked[rpc], wantFramework)
			}
		}
	}
}

// TestTuneQuietsLogsOnlyWhenNoneAsked: without any log variable the SDK's
// and the provider's loggers are turned off (Terraform would drop what they
// write); any log variable leaves every level to terraform-plugin-go.
func TestTuneQuietsLogsOnlyWhenNoneAsked(t *testing.T) {
	const logName = "ztthing"
	names := []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_PROVIDER_ZTTHING", "TF_LOG_SDK", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_SDK_PROTO"}
	unsetAll := func() {
		for _, n := range names {
			t.Setenv(n, "")
			_ = os.Unsetenv(n)
		}
	}
	unsetAll()
	quietLogs(logName)
	for _, n := range names[3:] {
		if os.Getenv(n) != "off" {
			t.Errorf("no log variable set: %s = %q, want off", n, os.Getenv(n))
		}
	}
	if os.Getenv("TF_LOG_PROVIDER_ZTTHING") != "off" {
		t.Errorf("no log variable set: TF_LOG_PROVIDER_ZERO_TRUST = %q, want off", os.Getenv("TF_LOG_PROVIDER_ZTTHING"))
	}
	for _, asked := range []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_PROVIDER_ZTTHING", "TF_LOG_SDK_PROTO"} {
		unsetAll()
		t.Setenv(asked, "debug")
		quietLogs(logName)
		for _, n := range names {
			if n != asked && os.Getenv(n) != "" {
				t.Errorf("%s set: %s = %q, want it left unset", asked, n, os.Getenv(n))
			}
		}
	}
}
