package protoserver

import (
	"context"
	"net"
	"reflect"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
)

// recorder is both a terraform-plugin-go server (what tf6server hands the
// request to after its own conversion) and a fast path (what the wire lane
// hands it to after its conversion): it keeps the last request of each RPC
// and answers with canned responses, or declines when decline is set.
type recorder struct {
	tfprotov6.ProviderServer
	mu      sync.Mutex
	last    map[string]any
	decline bool
}

func (r *recorder) keep(rpc string, req any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last[rpc] = req
}

var (
	cannedState    = &tfprotov6.DynamicValue{MsgPack: []byte{0x81, 0xa1, 'a', 0x01}}
	cannedIdentity = &tfprotov6.ResourceIdentityData{IdentityData: &tfprotov6.DynamicValue{MsgPack: []byte{0x80}}}
)

func (r *recorder) ValidateResourceConfig(_ context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	r.keep("validate", req)
	return &tfprotov6.ValidateResourceConfigResponse{}, nil
}

func (r *recorder) UpgradeResourceState(_ context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	r.keep("upgrade", req)
	return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: cannedState}, nil
}

func (r *recorder) ReadResource(_ context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	r.keep("read", req)
	return &tfprotov6.ReadResourceResponse{NewState: cannedState, Private: []byte(`{"k":1}`), NewIdentity: cannedIdentity}, nil
}

func (r *recorder) PlanResourceChange(_ context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	r.keep("plan", req)
	return &tfprotov6.PlanResourceChangeResponse{PlannedState: cannedState, PlannedPrivate: []byte(`{"k":2}`), PlannedIdentity: cannedIdentity}, nil
}

// fastRecorder is the recorder as a fastpath.Resource.
type fastRecorder struct{ *recorder }

func (f fastRecorder) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, bool) {
	resp, _ := f.recorder.ValidateResourceConfig(ctx, req)
	return resp, !f.decline
}

func (f fastRecorder) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, bool) {
	resp, _ := f.recorder.UpgradeResourceState(ctx, req)
	return resp, !f.decline
}

func (f fastRecorder) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, bool) {
	resp, _ := f.recorder.ReadResource(ctx, req)
	return resp, !f.decline
}

func (f fastRecorder) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, bool) {
	resp, _ := f.recorder.PlanResourceChange(ctx, req)
	return resp, !f.decline
}

var _ fastpath.Resource = fastRecorder{}

// serveGRPC serves provider through terraform-plugin-go's own gRPC
// registration on a loopback port, with the given server options.
func serveGRPC(t *testing.T, provider tfprotov6.ProviderServer, opts ...grpc.ServerOption) *grpc.ClientConn {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on 127.0.0.1: %v", err)
	}
	s := grpc.NewServer(opts...)
	plugin := &tf6server.GRPCProviderPlugin{GRPCProvider: func() tfprotov6.ProviderServer { return provider }, Name: "registry.terraform.io/test/wire"}
	if err := plugin.GRPCServer(nil, s); err != nil {
		t.Fatalf("registering the provider: %v", err)
	}
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("dialing the test server: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// message builds a plugin protocol message by name, fields set by path
// ("current_state.msgpack").
func message(t *testing.T, name string, fields map[string]any) proto.Message {
	t.Helper()
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(name))
	if err != nil {
		t.Fatalf("message %s: %v", name, err)
	}
	m := mt.New()
	for path, v := range fields {
		set(t, m, path, v)
	}
	return m.Interface()
}

func set(t *testing.T, m protoreflect.Message, path string, v any) {
	t.Helper()
	for i := 0; i < len(path); i++ {
		if path[i] == '.' {
			fd := m.Descriptor().Fields().ByName(protoreflect.Name(path[:i]))
			if fd == nil {
				t.Fatalf("%s has no field %s", m.Descriptor().FullName(), path[:i])
			}
			set(t, m.Mutable(fd).Message(), path[i+1:], v)
			return
		}
	}
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(path))
	if fd == nil {
		t.Fatalf("%s has no field %s", m.Descriptor().FullName(), path)
	}
	if fd.IsMap() {
		mp := m.Mutable(fd).Map()
		entries, ok := v.(map[string]string)
		if !ok {
			t.Fatalf("%s: a map field takes a map[string]string, not %T", path, v)
		}
		for k, val := range entries {
			mp.Set(protoreflect.ValueOfString(k).MapKey(), protoreflect.ValueOfString(val))
		}
		return
	}
	m.Set(fd, protoreflect.ValueOf(v))
}

// TestWireConvertsLikeTerraformPluginGo sends the same requests, every field
// of the four RPCs set (and again with only the type name), to
// terraform-plugin-go's gRPC server alone and with the wire lane in front of
// it: the fast path must receive exactly the request terraform-plugin-go
// would have built, and the client exactly the response it would have
// encoded; a declined request must reach terraform-plugin-go unchanged.
func TestWireConvertsLikeTerraformPluginGo(t *testing.T) {
	t.Setenv("TF_LOG_SDK_PROTO", "off") // terraform-plugin-go's trace lines would flood the output
	m, err := resolveWire()
	if err != nil {
		t.Fatalf("the wire lane does not know this terraform-plugin-go's messages: %v", err)
	}
	plain := &recorder{last: map[string]any{}}
	viaPlugin := &recorder{last: map[string]any{}}
	viaLane := &recorder{last: map[string]any{}}
	const typeName = "zerotrust_thing"
	lane := wireLane{fast: map[string]fastpath.Resource{typeName: fastRecorder{viaLane}}, m: m}
	plainConn := serveGRPC(t, plain)
	laneConn := serveGRPC(t, viaPlugin, grpc.UnaryInterceptor(lane.intercept))

	full := map[string]map[string]any{
		"validate": {"type_name": typeName, "config.msgpack": []byte{0x81, 0xa1, 'c', 0x02}, "config.json": []byte(`{"c":2}`),
			"client_capabilities.write_only_attributes_allowed": true, "client_capabilities.deferral_allowed": true},
		"upgrade": {"type_name": typeName, "version": int64(3), "raw_state.json": []byte(`{"a":1}`),
			"raw_state.flatmap": map[string]string{"a": "1", "b.#": "0"}},
		"read": {"type_name": typeName, "current_state.msgpack": []byte{0x81, 0xa1, 'a', 0x01}, "current_state.json": []byte(`{"a":1}`),
			"private": []byte(`{"p":1}`), "provider_meta.msgpack": []byte{0xc0}, "client_capabilities.deferral_allowed": true,
			"current_identity.identity_data.msgpack": []byte{0x81, 0xa1, 'i', 0x01}},
		"plan": {"type_name": typeName, "prior_state.msgpack": []byte{0x81, 0xa1, 'a', 0x01}, "proposed_new_state.msgpack": []byte{0x81, 0xa1, 'a', 0x02},
			"config.msgpack": []byte{0x81, 0xa1, 'a', 0x03}, "prior_private": []byte(`{"p":2}`), "provider_meta.json": []byte(`null`),
			"client_capabilities.deferral_allowed": true, "prior_identity.identity_data.json": []byte(`{"i":1}`)},
	}
	rpcs := map[string]struct{ method, req, resp string }{
		"validate": {methodValidate, "tfplugin6.ValidateResourceConfig.Request", "tfplugin6.ValidateResourceConfig.Response"},
		"upgrade":  {methodUpgrade, "tfplugin6.UpgradeResourceState.Request", "tfplugin6.UpgradeResourceState.Response"},
		"read":     {methodRead, "tfplugin6.ReadResource.Request", "tfplugin6.ReadResource.Response"},
		"plan":     {methodPlan, "tfplugin6.PlanResourceChange.Request", "tfplugin6.PlanResourceChange.Response"},
	}
	ctx := context.Background()
	for _, decline := range []bool{false, true} {
		viaLane.decline = decline
		for rpc, fields := range full {
			for _, shape := range []map[string]any{fields, {"type_name": typeName}} {
				r := rpcs[rpc]
				clear(plain.last)
				clear(viaPlugin.last)
				clear(viaLane.last)
				want := message(t, r.resp, nil)
				if err := plainConn.Invoke(ctx, r.method, message(t, r.req, shape), want); err != nil {
					t.Fatalf("%s through terraform-plugin-go: %v", rpc, err)
				}
				got := message(t, r.resp, nil)
				if err := laneConn.Invoke(ctx, r.method, message(t, r.req, shape), got); err != nil {
					t.Fatalf("%s through the wire lane: %v", rpc, err)
				}
				if !proto.Equal(want, got) {
					t.Errorf("%s (%d fields, decline %v): the client got\n%v\nwhere terraform-plugin-go answers\n%v", rpc, len(shape), decline, got, want)
				}
				if !reflect.DeepEqual(viaLane.last[rpc], plain.last[rpc]) {
					t.Errorf("%s (%d fields): the fast path got\n%#v\nwhere terraform-plugin-go builds\n%#v", rpc, len(shape), viaLane.last[rpc], plain.last[rpc])
				}
				_, reachedPlugin := viaPlugin.last[rpc]
				if reachedPlugin != decline {
					t.Errorf("%s (%d fields, decline %v): reached terraform-plugin-go's server: %v", rpc, len(shape), decline, reachedPlugin)
				}
			}
		}
	}
}
