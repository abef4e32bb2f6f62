package fastpath

import (
	"sync"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// recentSize bounds Recent: Terraform plans at most 10 instances at once
// (its default -parallelism) and each sends a handful of values in a row,
// so 64 entries catch every repeat (3 of every 4 decodes in an N = 1000
// plan) with room to spare.
const recentSize = 64

// byBytes remembers what was derived from the last size distinct byte
// strings, the oldest forgotten first. What it holds must be a function of
// the bytes alone (so it is never stale) and shared read-only by every
// caller that gets it.
type byBytes[V any] struct {
	mu   sync.Mutex
	m    map[string]V
	ring []string
	next int
}

func newByBytes[V any](size int) *byBytes[V] {
	return &byBytes[V]{m: make(map[string]V, size), ring: make([]string, size)}
}

func (c *byBytes[V]) get(b []byte) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[string(b)]
	return v, ok
}

func (c *byBytes[V]) put(b []byte, v V) {
	key := string(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; ok {
		return
	}
	if old := c.ring[c.next]; old != "" {
		delete(c.m, old)
	}
	c.ring[c.next] = key
	c.next = (c.next + 1) % len(c.ring)
	c.m[key] = v
}

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
	typ    tftypes.Type
	values *byBytes[tftypes.Value] // by msgpack
}

// NewRecent is an empty Recent for values of typ.
func NewRecent(typ tftypes.Type) *Recent {
	return &Recent{typ: typ, values: newByBytes[tftypes.Value](recentSize)}
}

// Unmarshal is dv.Unmarshal(typ), from memory when the same bytes came
// before. typ is the Recent's type (a nil Recent only decodes); dv is
// not nil.
func (r *Recent) Unmarshal(dv *tfprotov6.DynamicValue, typ tftypes.Type) (tftypes.Value, error) {
	if r == nil || len(dv.MsgPack) == 0 {
		return dv.Unmarshal(typ)
	}
	if v, ok := r.values.get(dv.MsgPack); ok {
		return v, nil
	}
	v, err := dv.Unmarshal(typ)
	if err == nil {
		r.values.put(dv.MsgPack, v)
	}
	return v, err
}

// Marshal is tfprotov6.NewDynamicValue(typ, v), remembered: its bytes are
// what Terraform sends back next.
func (r *Recent) Marshal(v tftypes.Value) (tfprotov6.DynamicValue, error) {
	dv, err := tfprotov6.NewDynamicValue(r.typ, v)
	if err == nil {
		r.values.put(dv.MsgPack, v)
	}
	return dv, err
}
