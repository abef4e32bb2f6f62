// Package protoserver builds the provider's plugin protocol 6 server: the
// framework's server behind a wrapper that stops it from keeping every
// request's context alive.
//
// Why: terraform-plugin-framework (v1.19, internal/proto6server) derives a
// cancellable context for every RPC and appends its CancelFunc to a slice
// that only StopProvider empties, so each finished request keeps its whole
// context chain reachable: terraform-plugin-go's per-request loggers
// (hclog instances and their options), the gRPC stream and every value on
// the way, four RPCs per resource instance during a plan: the provider's
// heap grew linearly with N (figures: bench/ANALYSIS.md, "Measurements the
// code's comments point to"). The wrapper gives the framework a small context of its
// own per request and, when the request returns, cancels it and drops its
// link to the request's values, so what the framework keeps is a few hundred
// bytes per RPC.
package protoserver

import (
	"context"
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
)

// New returns a factory for the provider's protocol 6 server, in the shape
// tf6server.Serve and terraform-plugin-testing's ProtoV6ProviderFactories take.
// Every server gets a provider of its own from newProvider.
func New(newProvider func() provider.Provider, opts ...Option) func() (tfprotov6.ProviderServer, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return func() (tfprotov6.ProviderServer, error) {
		p := newProvider()
		server := releasing{ProviderServer: providerserver.NewProtocol6(p)()}
		if o.fastPaths != nil {
			if enabled, _ := fastpath.Enabled(); enabled {
				server.fast = o.fastPaths(p)
			}
		}
		return server, nil
	}
}

// Option configures the servers New builds.
type Option func(*options)

type options struct {
	fastPaths func(provider.Provider) map[string]fastpath.Resource
}

// WithFastPaths has every server try fast paths first for
// ValidateResourceConfig, UpgradeResourceState, ReadResource and
// PlanResourceChange (see
// internal/fastpath): the ones fastPaths returns, by resource type name, for
// the server's provider, which answer from what that server's
// ConfigureProvider configured; none when fastpath.Enabled says no
// (switched off, or other framework versions).
func WithFastPaths(fastPaths func(provider.Provider) map[string]fastpath.Resource) Option {
	return func(o *options) { o.fastPaths = fastPaths }
}

// Release wraps inner so that no request's context outlives its request
// inside inner. It serves tfprotov6.ProviderServer and the optional list
// resource and action servers (inner must implement them, as the
// framework's server does); state stores are not forwarded, and this
// provider defines none. A ProviderServer method added by a newer
// terraform-plugin-go would pass through the embedded interface unwrapped:
// TestEveryRPCIsReleased fails until it is declared here.
func Release(inner tfprotov6.ProviderServer) tfprotov6.ProviderServer {
	return releasing{ProviderServer: inner}
}

// full returns the wrapped server's optional RPCs; a server without them is
// a bug in New's caller (the framework's server has them all).
func (s releasing) full() inner {
	full, ok := s.ProviderServer.(inner)
	if !ok {
		panic("protoserver: the wrapped server implements no list resource or action RPCs")
	}
	return full
}

type releasing struct {
	tfprotov6.ProviderServer
	// fast is tried first for ValidateResourceConfig, UpgradeResourceState,
	// ReadResource and PlanResourceChange of its resource types; the
	// framework answers whenever it declines.
	fast map[string]fastpath.Resource
}

var (
	_ tfprotov6.ActionServer       = releasing{}
	_ tfprotov6.ListResourceServer = releasing{}
)

// inner is the framework's server with the optional interfaces Release
// forwards.
type inner interface {
	tfprotov6.ProviderServer
	tfprotov6.ActionServer
	tfprotov6.ListResourceServer
}

// call runs one RPC against a request-scoped context that is released as
// soon as the RPC returns.
func call[Req, Resp any](ctx context.Context, req Req, rpc func(context.Context, Req) (Resp, error)) (Resp, error) {
	rctx, release := detach(ctx)
	defer release()
	return rpc(rctx, req)
}

// fastFirst asks fast (the request's resource type's fast path, if it has
// one) once, and the framework only when fast declines: every request
// reaches each of them at most once, so what a fast path does once per walk
// (claiming a warning that the framework's answer then says) happens once.
// A fast answer is logged at debug level through the provider's logger
// (terraform-plugin-log), which carries the RPC and resource type, so a user
// who asks for logs sees which requests the framework did not answer.
func fastFirst[Req, Resp any](ctx context.Context, fast fastpath.Resource, req Req,
	answer func(fastpath.Resource, context.Context, Req) (Resp, bool), framework func(context.Context, Req) (Resp, error)) (Resp, error) {
	if fast != nil {
		if resp, ok := answer(fast, ctx, req); ok {
			tflog.Debug(ctx, "Answered by the fast path, without the framework")
			return resp, nil
		}
	}
	return call(ctx, req, framework)
}

// requestContext answers Done, Err, Deadline and cancellation lookups from
// its own small context and value lookups from the request's context until
// it is released; after that it holds no reference to the request.
type requestContext struct {
	context.Context // own: a cancel (or deadline) context rooted at Background
	values          atomic.Pointer[context.Context]
}

// Value asks the own context first: it is rooted at Background, so the only
// key it answers is the context package's internal cancellation lookup, and
// answering that from own is what lets contexts derived from this one
// register with own instead of starting a watcher goroutine each.
func (c *requestContext) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	if parent := c.values.Load(); parent != nil {
		return (*parent).Value(key)
	}
	return nil
}

// detach returns a context carrying parent's values, cancellation and
// deadline, and a release func that cuts every link back to parent.
func detach(parent context.Context) (context.Context, func()) {
	own, cancel := context.WithCancelCause(context.Background())
	cancelDeadline := context.CancelFunc(func() {})
	if deadline, ok := parent.Deadline(); ok {
		own, cancelDeadline = context.WithDeadline(own, deadline)
	}
	stop := context.AfterFunc(parent, func() { cancel(context.Cause(parent)) })

	c := &requestContext{Context: own}
	c.values.Store(&parent)
	return c, func() {
		stop()
		c.values.Store(nil)
		cancelDeadline()
		cancel(context.Canceled)
	}
}

func (s releasing) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	return call(ctx, req, s.ProviderServer.ApplyResourceChange)
}

func (s releasing) CallFunction(ctx context.Context, req *tfprotov6.CallFunctionRequest) (*tfprotov6.CallFunctionResponse, error) {
	return call(ctx, req, s.ProviderServer.CallFunction)
}

func (s releasing) CloseEphemeralResource(ctx context.Context, req *tfprotov6.CloseEphemeralResourceRequest) (*tfprotov6.CloseEphemeralResourceResponse, error) {
	return call(ctx, req, s.ProviderServer.CloseEphemeralResource)
}

func (s releasing) ConfigureProvider(ctx context.Context, req *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	return call(ctx, req, s.ProviderServer.ConfigureProvider)
}

func (s releasing) GenerateResourceConfig(ctx context.Context, req *tfprotov6.GenerateResourceConfigRequest) (*tfprotov6.GenerateResourceConfigResponse, error) {
	return call(ctx, req, s.ProviderServer.GenerateResourceConfig)
}

func (s releasing) GetFunctions(ctx context.Context, req *tfprotov6.GetFunctionsRequest) (*tfprotov6.GetFunctionsResponse, error) {
	return call(ctx, req, s.ProviderServer.GetFunctions)
}

func (s releasing) GetMetadata(ctx context.Context, req *tfprotov6.GetMetadataRequest) (*tfprotov6.GetMetadataResponse, error) {
	return call(ctx, req, s.ProviderServer.GetMetadata)
}

func (s releasing) GetProviderSchema(ctx context.Context, req *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	return call(ctx, req, s.ProviderServer.GetProviderSchema)
}

func (s releasing) GetResourceIdentitySchemas(ctx context.Context, req *tfprotov6.GetResourceIdentitySchemasRequest) (*tfprotov6.GetResourceIdentitySchemasResponse, error) {
	return call(ctx, req, s.ProviderServer.GetResourceIdentitySchemas)
}

func (s releasing) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	return call(ctx, req, s.ProviderServer.ImportResourceState)
}

func (s releasing) MoveResourceState(ctx context.Context, req *tfprotov6.MoveResourceStateRequest) (*tfprotov6.MoveResourceStateResponse, error) {
	return call(ctx, req, s.ProviderServer.MoveResourceState)
}

func (s releasing) OpenEphemeralResource(ctx context.Context, req *tfprotov6.OpenEphemeralResourceRequest) (*tfprotov6.OpenEphemeralResourceResponse, error) {
	return call(ctx, req, s.ProviderServer.OpenEphemeralResource)
}

func (s releasing) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return fastFirst(ctx, s.fast[req.TypeName], req, fastpath.Resource.PlanResourceChange, s.ProviderServer.PlanResourceChange)
}

func (s releasing) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	return call(ctx, req, s.ProviderServer.ReadDataSource)
}

func (s releasing) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return fastFirst(ctx, s.fast[req.TypeName], req, fastpath.Resource.ReadResource, s.ProviderServer.ReadResource)
}

func (s releasing) RenewEphemeralResource(ctx context.Context, req *tfprotov6.RenewEphemeralResourceRequest) (*tfprotov6.RenewEphemeralResourceResponse, error) {
	return call(ctx, req, s.ProviderServer.RenewEphemeralResource)
}

// StopProvider is passed the caller's context as it is: it is the one RPC
// after which the framework drops what it kept, and it outlives nothing.
func (s releasing) StopProvider(ctx context.Context, req *tfprotov6.StopProviderRequest) (*tfprotov6.StopProviderResponse, error) {
	return s.ProviderServer.StopProvider(ctx, req)
}

func (s releasing) UpgradeResourceIdentity(ctx context.Context, req *tfprotov6.UpgradeResourceIdentityRequest) (*tfprotov6.UpgradeResourceIdentityResponse, error) {
	return call(ctx, req, s.ProviderServer.UpgradeResourceIdentity)
}

func (s releasing) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	return fastFirst(ctx, s.fast[req.TypeName], req, fastpath.Resource.UpgradeResourceState, s.ProviderServer.UpgradeResourceState)
}

func (s releasing) ValidateDataResourceConfig(ctx context.Context, req *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	return call(ctx, req, s.ProviderServer.ValidateDataResourceConfig)
}

func (s releasing) ValidateEphemeralResourceConfig(ctx context.Context, req *tfprotov6.ValidateEphemeralResourceConfigRequest) (*tfprotov6.ValidateEphemeralResourceConfigResponse, error) {
	return call(ctx, req, s.ProviderServer.ValidateEphemeralResourceConfig)
}

func (s releasing) ValidateProviderConfig(ctx context.Context, req *tfprotov6.ValidateProviderConfigRequest) (*tfprotov6.ValidateProviderConfigResponse, error) {
	return call(ctx, req, s.ProviderServer.ValidateProviderConfig)
}

func (s releasing) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	return fastFirst(ctx, s.fast[req.TypeName], req, fastpath.Resource.ValidateResourceConfig, s.ProviderServer.ValidateResourceConfig)
}

func (s releasing) ValidateActionConfig(ctx context.Context, req *tfprotov6.ValidateActionConfigRequest) (*tfprotov6.ValidateActionConfigResponse, error) {
	return call(ctx, req, s.full().ValidateActionConfig)
}

func (s releasing) PlanAction(ctx context.Context, req *tfprotov6.PlanActionRequest) (*tfprotov6.PlanActionResponse, error) {
	return call(ctx, req, s.full().PlanAction)
}

// InvokeAction keeps the request context until the stream is drained: the
// framework runs the action while Terraform reads its events, with the
// context given here.
func (s releasing) InvokeAction(ctx context.Context, req *tfprotov6.InvokeActionRequest) (*tfprotov6.InvokeActionServerStream, error) {
	rctx, release := detach(ctx)
	stream, err := s.full().InvokeAction(rctx, req)
	if err != nil || stream == nil || stream.Events == nil {
		release()
		return stream, err
	}
	events := stream.Events
	stream.Events = func(push func(tfprotov6.InvokeActionEvent) bool) {
		defer release()
		events(push)
	}
	return stream, nil
}

func (s releasing) ValidateListResourceConfig(ctx context.Context, req *tfprotov6.ValidateListResourceConfigRequest) (*tfprotov6.ValidateListResourceConfigResponse, error) {
	return call(ctx, req, s.full().ValidateListResourceConfig)
}

// ListResource keeps the request context until the results are drained, as
// InvokeAction does.
func (s releasing) ListResource(ctx context.Context, req *tfprotov6.ListResourceRequest) (*tfprotov6.ListResourceServerStream, error) {
	rctx, release := detach(ctx)
	stream, err := s.full().ListResource(rctx, req)
	if err != nil || stream == nil || stream.Results == nil {
		release()
		return stream, err
	}
	results := stream.Results
	stream.Results = func(push func(tfprotov6.ListResourceResult) bool) {
		defer release()
		results(push)
	}
	return stream, nil
}
