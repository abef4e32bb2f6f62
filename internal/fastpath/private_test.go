package fastpath

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"
)

// privateOf encodes m as the framework encodes private state.
func privateOf(t testing.TB, m map[string][]byte) []byte {
	t.Helper()
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestParsePrivateAccepts(t *testing.T) {
	for name, tc := range map[string]struct {
		raw  []byte
		key  string
		want []byte // GetKey(key); nil: absent
	}{
		"nil":                 {nil, "k", nil},
		"zero length":         {[]byte{}, "k", nil},
		"provider key":        {privateOf(t, map[string][]byte{"k": []byte(`"v"`)}), "k", []byte(`"v"`)},
		"absent provider key": {privateOf(t, map[string][]byte{"k": []byte(`"v"`)}), "other", nil},
		"two provider keys":   {privateOf(t, map[string][]byte{"a": []byte("1"), "b": []byte("true")}), "b", []byte("true")},
	} {
		t.Run(name, func(t *testing.T) {
			p, ok := ParsePrivate(tc.raw)
			if !ok {
				t.Fatalf("ParsePrivate(%q) refused", tc.raw)
			}
			got, diags := p.GetKey(t.Context(), tc.key)
			if diags.HasError() {
				t.Fatalf("GetKey(%q): %v", tc.key, diags)
			}
			if !bytes.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
				t.Errorf("GetKey(%q) = %q, want %q", tc.key, got, tc.want)
			}
		})
	}
}

func TestParsePrivateRefuses(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte("true"))
	for name, raw := range map[string]string{
		"framework key":                   `{".import_before_read":"` + b64 + `"}`,
		"framework key beside a provider": `{"k":"` + b64 + `",".import_before_read":"` + b64 + `"}`,
		"truncated JSON":                  `{`,
		"not JSON":                        `private`,
		"JSON array":                      `["` + b64 + `"]`,
		"value not base64":                `{"k":"@@@"}`,
		"value not a string (SDK style)":  `{"k":{"create":1}}`,
		"value that is no JSON":           `{"k":"YWJj"}`, // "abc": the framework refuses it
		"value that is no UTF-8":          `{"k":"/w=="}`,
	} {
		t.Run(name, func(t *testing.T) {
			p, ok := ParsePrivate([]byte(raw))
			if ok {
				t.Fatalf("ParsePrivate(%s) accepted", raw)
			}
			if v, _ := p.GetKey(t.Context(), "k"); v != nil {
				t.Errorf("refused Private still answers GetKey: %q", v)
			}
		})
	}
}

func TestPrivateRoundTrip(t *testing.T) {
	ctx := t.Context()
	for name, value := range map[string][]byte{
		"bool":   []byte("true"),
		"string": []byte(`"a \"quoted\" value"`),
		"object": []byte(`{"a":[1,2,3]}`),
	} {
		t.Run(name, func(t *testing.T) {
			empty, ok := ParsePrivate(nil)
			if !ok {
				t.Fatal("empty private state refused")
			}
			raw, err := empty.With("written", value)
			if err != nil {
				t.Fatal(err)
			}
			p, ok := ParsePrivate(raw)
			if !ok {
				t.Fatalf("ParsePrivate(%s) refused what With wrote", raw)
			}
			if got, _ := p.GetKey(ctx, "written"); !bytes.Equal(got, value) {
				t.Errorf("GetKey after round trip = %q, want %q", got, value)
			}
		})
	}
}

func TestPrivateWith(t *testing.T) {
	one := privateOf(t, map[string][]byte{"k": []byte("true")})
	two := privateOf(t, map[string][]byte{"k": []byte("true"), "other": []byte("1")})
	// Not the framework's canonical encoding: an unchanged value must still
	// give these very bytes back.
	spaced := []byte(`{ "k" : "` + base64.StdEncoding.EncodeToString([]byte("true")) + `" }`)
	for name, tc := range map[string]struct {
		raw   []byte
		key   string
		value []byte
		want  map[string][]byte // decoded result; nil: With returns nil
		same  bool              // With returns raw exactly
	}{
		"unchanged value":                 {raw: one, key: "k", value: []byte("true"), same: true},
		"unchanged value, spaced input":   {raw: spaced, key: "k", value: []byte("true"), same: true},
		"removing an absent key":          {raw: two, key: "absent", value: nil, same: true},
		"removing from empty":             {raw: nil, key: "k", value: nil, same: true},
		"no data written as {}":           {raw: []byte(`{}`), key: "k", value: nil}, // the framework encodes none as none
		"no data written as null":         {raw: []byte(`null`), key: "k", value: nil},
		"removing the last key":           {raw: one, key: "k", value: nil},
		"removing the last key (empty)":   {raw: one, key: "k", value: []byte{}},
		"removing one of two":             {raw: two, key: "other", value: nil, want: map[string][]byte{"k": []byte("true")}},
		"setting on empty":                {raw: nil, key: "k", value: []byte("false"), want: map[string][]byte{"k": []byte("false")}},
		"changing a value":                {raw: one, key: "k", value: []byte("false"), want: map[string][]byte{"k": []byte("false")}},
		"adding a key keeps the others":   {raw: one, key: "new", value: []byte(`"x"`), want: map[string][]byte{"k": []byte("true"), "new": []byte(`"x"`)}},
		"changing one keeps the other":    {raw: two, key: "other", value: []byte("2"), want: map[string][]byte{"k": []byte("true"), "other": []byte("2")}},
		"unchanged value among two":       {raw: two, key: "other", value: []byte("1"), same: true},
		"setting on empty, object value":  {raw: nil, key: "k", value: []byte(`{"a":1}`), want: map[string][]byte{"k": []byte(`{"a":1}`)}},
		"removing from empty (zero-len)":  {raw: []byte{}, key: "k", value: nil, same: true},
		"setting on zero-length, a value": {raw: []byte{}, key: "k", value: []byte("1"), want: map[string][]byte{"k": []byte("1")}},
	} {
		t.Run(name, func(t *testing.T) {
			p, ok := ParsePrivate(tc.raw)
			if !ok {
				t.Fatalf("ParsePrivate(%s) refused", tc.raw)
			}
			got, err := p.With(tc.key, tc.value)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.same:
				if !bytes.Equal(got, tc.raw) || (got == nil) != (tc.raw == nil) {
					t.Errorf("With = %q, want the input bytes %q", got, tc.raw)
				}
			case tc.want == nil:
				if got != nil {
					t.Errorf("With = %q, want nil", got)
				}
			default:
				// The framework's encoding: a JSON object whose values are
				// the base64 of the stored bytes.
				var m map[string][]byte
				if err := json.Unmarshal(got, &m); err != nil {
					t.Fatalf("With wrote %s: %v", got, err)
				}
				if len(m) != len(tc.want) {
					t.Errorf("With wrote %s, want the keys of %q", got, tc.want)
				}
				for k, v := range tc.want {
					if !bytes.Equal(m[k], v) {
						t.Errorf("With wrote %s: key %q holds %q, want %q", got, k, m[k], v)
					}
				}
				if want := privateOf(t, tc.want); !bytes.Equal(got, want) {
					t.Errorf("With = %s, want the framework's encoding %s", got, want)
				}
			}
		})
	}
}

// TestPrivateWithLeavesReceiver checks that With copies: the Private it is
// called on still reads as parsed.
func TestPrivateWithLeavesReceiver(t *testing.T) {
	p, ok := ParsePrivate(privateOf(t, map[string][]byte{"k": []byte("true")}))
	if !ok {
		t.Fatal("refused")
	}
	if _, err := p.With("k", []byte("false")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.With("added", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if v, _ := p.GetKey(t.Context(), "k"); string(v) != "true" {
		t.Errorf("GetKey(k) after With = %q, want %q", v, "true")
	}
	if v, _ := p.GetKey(t.Context(), "added"); v != nil {
		t.Errorf("GetKey(added) after With = %q, want nil", v)
	}
}

// BenchmarkParsePrivate parses the private state a refreshed
// zerotrust_federated_trust_domain carries (its ownership record), as every
// Read and unchanged plan of every instance does: the same bytes for most
// instances, or bytes that differ from one call to the next (more kinds of
// them than ParsePrivate keeps).
func BenchmarkParsePrivate(b *testing.B) {
	same := [][]byte{[]byte(`{"ownership":"eyJoZWxkIjpbImNsYXNzTmFtZSJdfQ=="}`)}
	var distinct [][]byte
	for i := range 32 {
		distinct = append(distinct, privateOf(b, map[string][]byte{"ownership": fmt.Appendf(nil, `{"held":["f%d"]}`, i)}))
	}
	for name, raws := range map[string][][]byte{"same bytes": same, "distinct bytes": distinct} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				p, ok := ParsePrivate(raws[i%len(raws)])
				if !ok {
					b.Fatal("refused")
				}
				if v, _ := p.GetKey(b.Context(), "ownership"); len(v) == 0 {
					b.Fatal("no ownership record")
				}
				i++
			}
		})
	}
}

// Privates parsed from equal bytes share what ParsePrivate parsed, and
// nothing one caller does shows in another's: each keeps its own bytes,
// With copies, and GetKey's value cannot be appended to in place.
func TestParsePrivateSharesNothingWritable(t *testing.T) {
	raw := privateOf(t, map[string][]byte{"k": []byte(`{"held":["className"]}`), "other": []byte("1")})
	first, ok := ParsePrivate(raw)
	if !ok {
		t.Fatal("refused")
	}
	again := bytes.Clone(raw)
	second, ok := ParsePrivate(again)
	if !ok {
		t.Fatal("refused")
	}
	if got, err := second.With("k", []byte(`{"held":["className"]}`)); err != nil || &got[0] != &again[0] {
		t.Fatalf("With of an unchanged value = %q, %v; want the caller's own bytes", got, err)
	}
	changed, err := first.With("k", []byte(`{"held":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := second.GetKey(t.Context(), "k"); string(v) != `{"held":["className"]}` {
		t.Fatalf("after another Private's With, GetKey = %q", v)
	}
	if reparsed, ok := ParsePrivate(changed); !ok {
		t.Fatal("refused")
	} else if v, _ := reparsed.GetKey(t.Context(), "k"); string(v) != `{"held":[]}` {
		t.Fatalf("GetKey of With's bytes = %q", v)
	}
	v1, _ := first.GetKey(t.Context(), "other")
	v2, _ := second.GetKey(t.Context(), "other")
	grown := append(v1, '0')
	if other := append(v2, 'x'); string(grown) != "10" || string(other) != "1x" {
		t.Fatalf("appends to two callers' values = %q, %q; want %q, %q", grown, other, "10", "1x")
	}
	// The input bytes are the caller's: changing them changes nothing parsed.
	copy(again, bytes.Repeat([]byte(" "), len(again)))
	if v, _ := first.GetKey(t.Context(), "k"); string(v) != `{"held":["className"]}` {
		t.Fatalf("after the input changed, GetKey = %q", v)
	}
}
