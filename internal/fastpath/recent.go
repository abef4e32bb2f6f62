package fastpath

import (
	"sync"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// recentSize bounds Recent: Terraform plans at most 10 instances at once
// (its default -parallelism) and each sends a handful of values in a row,
// so a few hundred entries catch every repeat with room to spare, at a few
// hundred KiB at most.
const recentSize = 64

// Recent remembers the last values a resource type's fast path decoded or
// encoded, by their msgpack bytes. Terraform sends the same value several
// times per instance in one plan: the state the upgrade returned comes back
// as the refresh's current state, the refreshed state as the plan's prior
// state and, unchanged, as its proposed new state; the configuration the
// check decoded comes back with the plan. msgpack encoding is canonical in
// both Terraform (cty) and tftypes (object attributes in name order, the
// shortest integer forms), so equal bytes mean an equal value of the type,
// and decoding each only once halves what a plan decodes. A tftypes.Value is
// immutable (its As hands out its own maps, which no fast path writes), so
// a remembered value is safe to share between requests.
type Recent struct {
	typ tftypes.Type

	mu   sync.Mutex
	byMP map[string]tftypes.Value
	ring [recentSize]string
	next int
}

// NewRecent is an empty Recent for values of typ.
func NewRecent(typ tftypes.Type) *Recent {
	return &Recent{typ: typ, byMP: make(map[string]tftypes.Value, recentSize)}
}

// Unmarshal is dv.Unmarshal(typ), from memory when the same bytes came
// before. typ is the Recent's type (a nil Recent only decodes); dv is
// not nil.
func (r *Recent) Unmarshal(dv *tfprotov6.DynamicValue, typ tftypes.Type) (tftypes.Value, error) {
	if r == nil || len(dv.MsgPack) == 0 {
		return dv.Unmarshal(typ)
	}
	r.mu.Lock()
	v, ok := r.byMP[string(dv.MsgPack)]
	r.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := dv.Unmarshal(typ)
	if err == nil {
		r.Remember(dv.MsgPack, v)
	}
	return v, err
}

// Marshal is tfprotov6.NewDynamicValue(typ, v), remembered: its bytes are
// what Terraform sends back next.
func (r *Recent) Marshal(v tftypes.Value) (tfprotov6.DynamicValue, error) {
	dv, err := tfprotov6.NewDynamicValue(r.typ, v)
	if err == nil {
		r.Remember(dv.MsgPack, v)
	}
	return dv, err
}

// Remember records that msgpack decodes to v.
func (r *Recent) Remember(msgpack []byte, v tftypes.Value) {
	key := string(msgpack)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.byMP[key]; ok {
		return
	}
	if old := r.ring[r.next]; old != "" {
		delete(r.byMP, old)
	}
	r.ring[r.next] = key
	r.next = (r.next + 1) % recentSize
	r.byMP[key] = v
}
