package protoserver

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/provider"
)

type payloadKey struct{}

// schemaCallRetains calls GetProviderSchema on server with a context carrying
// a large value and reports whether that value is still reachable after the
// call returned and the caller dropped it.
func schemaCallRetains(t *testing.T, server tfprotov6.ProviderServer) bool {
	t.Helper()
	payload := new([1 << 16]byte)
	ref := weak.Make(payload)
	ctx := context.WithValue(context.Background(), payloadKey{}, payload)
	resp, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || resp.Provider == nil || len(resp.ResourceSchemas) == 0 {
		t.Fatalf("GetProviderSchema: err=%v, resp=%+v", err, resp)
	}
	payload, ctx = nil, nil //nolint:ineffassign,wastedassign // drop the last references before collecting
	runtime.GC()
	runtime.GC()
	retained := ref.Value() != nil
	runtime.KeepAlive(server) // a serving provider lives on: only what it holds matters
	return retained
}

// The framework's own server keeps every request's context until
// StopProvider (the leak this package exists for). If this starts failing, a
// newer terraform-plugin-framework fixed it upstream and Release can go.
func TestFrameworkServerRetainsRequestContexts(t *testing.T) {
	if !schemaCallRetains(t, providerserver.NewProtocol6(provider.New("test")())()) {
		t.Fatal("terraform-plugin-framework no longer retains request contexts: remove internal/protoserver's wrapper")
	}
}

func TestReleaseDropsRequestContexts(t *testing.T) {
	server, err := New(provider.New("test"))()
	if err != nil {
		t.Fatal(err)
	}
	if schemaCallRetains(t, server) {
		t.Fatal("a request's context (and its values) is still reachable after GetProviderSchema returned")
	}
}

func TestDetachCarriesValuesCancellationAndDeadline(t *testing.T) {
	deadline := time.Now().Add(time.Hour)
	parent, cancelParent := context.WithDeadline(context.WithValue(context.Background(), payloadKey{}, "v"), deadline)
	ctx, release := detach(parent)
	defer release()

	if got := ctx.Value(payloadKey{}); got != "v" {
		t.Errorf("Value during the request = %v, want the parent's value", got)
	}
	if got, ok := ctx.Deadline(); !ok || !got.Equal(deadline) {
		t.Errorf("Deadline = %v, %v; want the parent's %v", got, ok, deadline)
	}
	child, cancelChild := context.WithCancel(ctx) // registers with detach's own context: no watcher goroutine
	defer cancelChild()

	cancelParent()
	for _, c := range []context.Context{ctx, child} {
		select {
		case <-c.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("cancelling the request's context did not cancel the detached one and its children")
		}
	}
	if !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Errorf("Cause = %v, want context.Canceled", context.Cause(ctx))
	}
}

func TestReleaseCutsTheLinkToTheRequest(t *testing.T) {
	parent := context.WithValue(context.Background(), payloadKey{}, "v")
	ctx, release := detach(parent)
	before := runtime.NumGoroutine()
	// Kept, not called, as the framework does with its per-request contexts.
	var cancels []context.CancelFunc
	for range 100 {
		_, cancel := context.WithCancel(ctx)
		cancels = append(cancels, cancel)
	}
	release()

	if got := ctx.Value(payloadKey{}); got != nil {
		t.Errorf("Value after release = %v, want nil", got)
	}
	select {
	case <-ctx.Done():
	default:
		t.Error("the detached context is not cancelled after release")
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("%d goroutines after deriving 100 contexts, %d before: derived contexts must register with the own context, not watch it", after, before)
	}
	for _, cancel := range cancels {
		cancel()
	}
}
