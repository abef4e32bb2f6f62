package protoserver

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
)

// The wire lane answers the four RPCs a plan sends for every managed
// instance (ValidateResourceConfig, UpgradeResourceState, ReadResource,
// PlanResourceChange) straight from the gRPC messages, when the resource's
// fast path answers them, so those requests skip terraform-plugin-go's
// per-request server work: for every request, whatever the log level, it
// builds three hclog loggers with their option copies, a request UUID from
// crypto/rand and a stoppable context, and converts the messages twice. At
// 1000 objects that machinery cost a third of the provider's CPU once the
// fast paths had made the answers themselves cheap (bench/ANALYSIS.md), and
// no ServeOpt turns it off.
//
// How: a gRPC unary interceptor, the server hook grpc-go offers for exactly
// this, sees each request after grpc-go has decoded it into
// terraform-plugin-go's generated message. The lane reads and writes those
// messages through protobuf reflection (the generated package is internal
// to terraform-plugin-go), by the field names of the plugin protocol,
// converting exactly as terraform-plugin-go's own fromproto and toproto do
// for these messages (TestWireConvertsLikeTerraformPluginGo compares them
// through a real tf6server). Anything else, and any request the fast path
// declines, goes on to terraform-plugin-go's handler unchanged, so the
// fast path's decline-before-any-side-effect rule keeps the answer the same.
// A fast answer never carries diagnostics, deferral or replacement paths
// (fastpath.Resource answers only "nothing to say"); one that does is handed
// to the handler too.
//
// The lane is off when someone asked for logs (TF_LOG, TF_LOG_PROVIDER):
// then every request takes terraform-plugin-go's path and logs as usual.
type wireLane struct {
	fast map[string]fastpath.Resource
	m    *wireMessages
}

// Full method names of the plugin protocol's hot RPCs.
const (
	methodValidate = "/tfplugin6.Provider/ValidateResourceConfig"
	methodUpgrade  = "/tfplugin6.Provider/UpgradeResourceState"
	methodRead     = "/tfplugin6.Provider/ReadResource"
	methodPlan     = "/tfplugin6.Provider/PlanResourceChange"
)

// wireMessages holds the descriptors the lane reads and writes, resolved
// once from the registry terraform-plugin-go's generated code fills.
type wireMessages struct {
	dynamic  dynamicFields
	identity protoreflect.FieldDescriptor // ResourceIdentityData.identity_data
	caps     capsFields

	validateReq struct{ typeName, config, caps protoreflect.FieldDescriptor }
	validateRes protoreflect.MessageType

	upgradeReq struct{ typeName, version, rawState protoreflect.FieldDescriptor }
	rawState   struct{ json, flatmap protoreflect.FieldDescriptor }
	upgradeRes protoreflect.MessageType
	upgraded   protoreflect.FieldDescriptor

	readReq struct {
		typeName, state, private, meta, caps, identity protoreflect.FieldDescriptor
	}
	readRes   protoreflect.MessageType
	readReply replyFields

	planReq struct {
		typeName, prior, proposed, config, private, meta, caps, identity protoreflect.FieldDescriptor
	}
	planRes   protoreflect.MessageType
	planReply replyFields
}

// replyFields are where ReadResource's and PlanResourceChange's responses
// hold the same three things: the state, the private state and the
// identity.
type replyFields struct{ state, private, identity protoreflect.FieldDescriptor }

type dynamicFields struct{ msgpack, json protoreflect.FieldDescriptor }

type capsFields struct{ deferral, writeOnly protoreflect.FieldDescriptor }

// resolveWire finds every message and field the lane uses; an error means a
// terraform-plugin-go whose protocol messages differ, and then the lane
// stays off.
func resolveWire() (*wireMessages, error) {
	var m wireMessages
	var errs []error
	msg := func(name string) protoreflect.MessageDescriptor {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		md, ok := d.(protoreflect.MessageDescriptor)
		if !ok {
			errs = append(errs, fmt.Errorf("%s is not a message", name))
		}
		return md
	}
	typ := func(name string) protoreflect.MessageType {
		t, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(name))
		if err != nil {
			errs = append(errs, err)
		}
		return t
	}
	field := func(md protoreflect.MessageDescriptor, name string, kind protoreflect.Kind) protoreflect.FieldDescriptor {
		if md == nil {
			return nil
		}
		fd := md.Fields().ByName(protoreflect.Name(name))
		if fd == nil || fd.Kind() != kind || fd.Cardinality() == protoreflect.Repeated {
			errs = append(errs, fmt.Errorf("%s has no singular %s field %q", md.FullName(), kind, name))
		}
		return fd
	}
	str, byt, msgK, boolK, i64 := protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind, protoreflect.BoolKind, protoreflect.Int64Kind

	dv := msg("tfplugin6.DynamicValue")
	m.dynamic = dynamicFields{field(dv, "msgpack", byt), field(dv, "json", byt)}
	m.identity = field(msg("tfplugin6.ResourceIdentityData"), "identity_data", msgK)
	cc := msg("tfplugin6.ClientCapabilities")
	m.caps = capsFields{field(cc, "deferral_allowed", boolK), field(cc, "write_only_attributes_allowed", boolK)}

	vq := msg("tfplugin6.ValidateResourceConfig.Request")
	m.validateReq.typeName, m.validateReq.config, m.validateReq.caps = field(vq, "type_name", str), field(vq, "config", msgK), field(vq, "client_capabilities", msgK)
	m.validateRes = typ("tfplugin6.ValidateResourceConfig.Response")

	uq := msg("tfplugin6.UpgradeResourceState.Request")
	m.upgradeReq.typeName, m.upgradeReq.version, m.upgradeReq.rawState = field(uq, "type_name", str), field(uq, "version", i64), field(uq, "raw_state", msgK)
	rs := msg("tfplugin6.RawState")
	m.rawState.json = field(rs, "json", byt)
	if rs != nil {
		m.rawState.flatmap = rs.Fields().ByName("flatmap")
		if m.rawState.flatmap == nil || !m.rawState.flatmap.IsMap() {
			errs = append(errs, fmt.Errorf("tfplugin6.RawState has no map field flatmap"))
		}
	}
	m.upgradeRes = typ("tfplugin6.UpgradeResourceState.Response")
	if m.upgradeRes != nil {
		m.upgraded = field(m.upgradeRes.Descriptor(), "upgraded_state", msgK)
	}

	rq := msg("tfplugin6.ReadResource.Request")
	m.readReq.typeName, m.readReq.state, m.readReq.private = field(rq, "type_name", str), field(rq, "current_state", msgK), field(rq, "private", byt)
	m.readReq.meta, m.readReq.caps, m.readReq.identity = field(rq, "provider_meta", msgK), field(rq, "client_capabilities", msgK), field(rq, "current_identity", msgK)
	m.readRes = typ("tfplugin6.ReadResource.Response")
	if m.readRes != nil {
		d := m.readRes.Descriptor()
		m.readReply = replyFields{field(d, "new_state", msgK), field(d, "private", byt), field(d, "new_identity", msgK)}
	}

	pq := msg("tfplugin6.PlanResourceChange.Request")
	m.planReq.typeName, m.planReq.prior, m.planReq.proposed = field(pq, "type_name", str), field(pq, "prior_state", msgK), field(pq, "proposed_new_state", msgK)
	m.planReq.config, m.planReq.private, m.planReq.meta = field(pq, "config", msgK), field(pq, "prior_private", byt), field(pq, "provider_meta", msgK)
	m.planReq.caps, m.planReq.identity = field(pq, "client_capabilities", msgK), field(pq, "prior_identity", msgK)
	m.planRes = typ("tfplugin6.PlanResourceChange.Response")
	if m.planRes != nil {
		d := m.planRes.Descriptor()
		m.planReply = replyFields{field(d, "planned_state", msgK), field(d, "planned_private", byt), field(d, "planned_identity", msgK)}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("plugin protocol messages not as expected: %v", errs)
	}
	return &m, nil
}

// intercept is the lane's grpc.UnaryServerInterceptor.
func (w wireLane) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	msg, ok := req.(proto.Message)
	if !ok || w.m == nil {
		return handler(ctx, req)
	}
	var resp proto.Message
	switch info.FullMethod {
	case methodValidate:
		resp = w.validate(ctx, msg.ProtoReflect())
	case methodUpgrade:
		resp = w.upgrade(ctx, msg.ProtoReflect())
	case methodRead:
		resp = w.read(ctx, msg.ProtoReflect())
	case methodPlan:
		resp = w.plan(ctx, msg.ProtoReflect())
	}
	if resp == nil {
		return handler(ctx, req)
	}
	return resp, nil
}

func (w wireLane) validate(ctx context.Context, r protoreflect.Message) proto.Message {
	f := &w.m.validateReq
	typeName := r.Get(f.typeName).String()
	fp := w.fast[typeName]
	if fp == nil {
		return nil
	}
	req := &tfprotov6.ValidateResourceConfigRequest{TypeName: typeName, Config: w.dynamicFrom(r, f.config)}
	if c := w.sub(r, f.caps); c != nil {
		req.ClientCapabilities = &tfprotov6.ValidateResourceConfigClientCapabilities{WriteOnlyAttributesAllowed: c.Get(w.m.caps.writeOnly).Bool()}
	}
	resp, ok := fp.ValidateResourceConfig(ctx, req)
	if !ok || len(resp.Diagnostics) > 0 {
		return nil
	}
	return w.m.validateRes.New().Interface()
}

func (w wireLane) upgrade(ctx context.Context, r protoreflect.Message) proto.Message {
	f := &w.m.upgradeReq
	typeName := r.Get(f.typeName).String()
	fp := w.fast[typeName]
	if fp == nil {
		return nil
	}
	req := &tfprotov6.UpgradeResourceStateRequest{TypeName: typeName, Version: r.Get(f.version).Int()}
	if rs := w.sub(r, f.rawState); rs != nil {
		req.RawState = &tfprotov6.RawState{JSON: rs.Get(w.m.rawState.json).Bytes()}
		if fm := rs.Get(w.m.rawState.flatmap).Map(); fm.Len() > 0 {
			req.RawState.Flatmap = map[string]string{}
			fm.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
				req.RawState.Flatmap[k.String()] = v.String()
				return true
			})
		}
	}
	resp, ok := fp.UpgradeResourceState(ctx, req)
	if !ok || len(resp.Diagnostics) > 0 {
		return nil
	}
	out := w.m.upgradeRes.New()
	w.setDynamic(out, w.m.upgraded, resp.UpgradedState)
	return out.Interface()
}

func (w wireLane) read(ctx context.Context, r protoreflect.Message) proto.Message {
	f := &w.m.readReq
	typeName := r.Get(f.typeName).String()
	fp := w.fast[typeName]
	if fp == nil {
		return nil
	}
	req := &tfprotov6.ReadResourceRequest{
		TypeName:        typeName,
		CurrentState:    w.dynamicFrom(r, f.state),
		Private:         r.Get(f.private).Bytes(),
		ProviderMeta:    w.dynamicFrom(r, f.meta),
		CurrentIdentity: w.identityFrom(r, f.identity),
	}
	if c := w.sub(r, f.caps); c != nil {
		req.ClientCapabilities = &tfprotov6.ReadResourceClientCapabilities{DeferralAllowed: c.Get(w.m.caps.deferral).Bool()}
	}
	resp, ok := fp.ReadResource(ctx, req)
	if !ok || len(resp.Diagnostics) > 0 || resp.Deferred != nil {
		return nil
	}
	return w.reply(w.m.readRes, w.m.readReply, resp.NewState, resp.Private, resp.NewIdentity)
}

func (w wireLane) plan(ctx context.Context, r protoreflect.Message) proto.Message {
	f := &w.m.planReq
	typeName := r.Get(f.typeName).String()
	fp := w.fast[typeName]
	if fp == nil {
		return nil
	}
	req := &tfprotov6.PlanResourceChangeRequest{
		TypeName:         typeName,
		PriorState:       w.dynamicFrom(r, f.prior),
		ProposedNewState: w.dynamicFrom(r, f.proposed),
		Config:           w.dynamicFrom(r, f.config),
		PriorPrivate:     r.Get(f.private).Bytes(),
		ProviderMeta:     w.dynamicFrom(r, f.meta),
		PriorIdentity:    w.identityFrom(r, f.identity),
	}
	if c := w.sub(r, f.caps); c != nil {
		req.ClientCapabilities = &tfprotov6.PlanResourceChangeClientCapabilities{DeferralAllowed: c.Get(w.m.caps.deferral).Bool()}
	}
	resp, ok := fp.PlanResourceChange(ctx, req)
	if !ok || len(resp.Diagnostics) > 0 || resp.Deferred != nil || len(resp.RequiresReplace) > 0 || resp.UnsafeToUseLegacyTypeSystem { //nolint:staticcheck // refused, not used
		return nil
	}
	return w.reply(w.m.planRes, w.m.planReply, resp.PlannedState, resp.PlannedPrivate, resp.PlannedIdentity)
}

// reply is a response of type mt holding a state, a private state and an
// identity in the fields f names.
func (w wireLane) reply(mt protoreflect.MessageType, f replyFields, state *tfprotov6.DynamicValue, private []byte, identity *tfprotov6.ResourceIdentityData) proto.Message {
	out := mt.New()
	w.setDynamic(out, f.state, state)
	setBytes(out, f.private, private)
	w.setIdentity(out, f.identity, identity)
	return out.Interface()
}

// sub is the message in field fd of r, nil when unset (as the generated
// getter's nil pointer is).
func (w wireLane) sub(r protoreflect.Message, fd protoreflect.FieldDescriptor) protoreflect.Message {
	if !r.Has(fd) {
		return nil
	}
	return r.Get(fd).Message()
}

func (w wireLane) dynamicFrom(r protoreflect.Message, fd protoreflect.FieldDescriptor) *tfprotov6.DynamicValue {
	v := w.sub(r, fd)
	if v == nil {
		return nil
	}
	return &tfprotov6.DynamicValue{MsgPack: v.Get(w.m.dynamic.msgpack).Bytes(), JSON: v.Get(w.m.dynamic.json).Bytes()}
}

func (w wireLane) identityFrom(r protoreflect.Message, fd protoreflect.FieldDescriptor) *tfprotov6.ResourceIdentityData {
	v := w.sub(r, fd)
	if v == nil {
		return nil
	}
	return &tfprotov6.ResourceIdentityData{IdentityData: w.dynamicFrom(v, w.m.identity)}
}

func (w wireLane) setDynamic(out protoreflect.Message, fd protoreflect.FieldDescriptor, v *tfprotov6.DynamicValue) {
	if v == nil {
		return
	}
	dv := out.Mutable(fd).Message()
	setBytes(dv, w.m.dynamic.msgpack, v.MsgPack)
	setBytes(dv, w.m.dynamic.json, v.JSON)
}

func (w wireLane) setIdentity(out protoreflect.Message, fd protoreflect.FieldDescriptor, v *tfprotov6.ResourceIdentityData) {
	if v == nil {
		return
	}
	idn := out.Mutable(fd).Message()
	w.setDynamic(idn, w.m.identity, v.IdentityData)
}

// setBytes sets a bytes field; nil leaves it unset, as the generated
// struct's nil slice is.
func setBytes(m protoreflect.Message, fd protoreflect.FieldDescriptor, b []byte) {
	if b != nil {
		m.Set(fd, protoreflect.ValueOfBytes(b))
	}
}
