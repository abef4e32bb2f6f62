package fastpath

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// Private is a resource's private state in the framework's encoding (v1.19,
// internal/privatestate): a JSON object whose values are base64 JSON
// documents, the provider's keys as they are and the framework's own ones
// beginning with ".".
type Private struct {
	raw []byte
	m   map[string][]byte
}

// ParsePrivate parses private state; false leaves the request to the
// framework: state it cannot parse or would refuse (values that are not
// UTF-8 JSON), and any framework key (".import_before_read" is set by an
// import and consumed by the framework's next Read).
func ParsePrivate(raw []byte) (Private, bool) {
	p := Private{raw: raw}
	if len(raw) == 0 {
		return p, true
	}
	if m, ok := recentPrivate.get(raw); ok {
		p.m = m
		return p, true
	}
	if err := json.Unmarshal(raw, &p.m); err != nil {
		return Private{}, false
	}
	for k, v := range p.m {
		// The framework refuses values that are not UTF-8 JSON documents.
		if strings.HasPrefix(k, ".") || !utf8.Valid(v) || !json.Valid(v) {
			return Private{}, false
		}
	}
	if len(p.m) == 0 {
		p.raw = nil // the framework encodes no data as none ("{}" and "null" included)
		return p, true
	}
	recentPrivate.put(raw, p.m)
	return p, true
}

// recentPrivate holds the private states ParsePrivate accepted last. The
// instances of a resource a configuration holds by the hundred mostly carry
// one of a few byte strings (an ownership record with a field held or
// without), and parsing them (JSON, base64, then a check of each value) for
// every Read and plan was all of ParsePrivate's cost. Its maps are shared:
// nothing reads them but GetKey and With, and With copies.
var recentPrivate = newByBytes[map[string][]byte](8)

// GetKey reads a provider key, as the framework's ProviderData.GetKey does.
// The value is shared with every Private parsed from the same bytes: the
// caller reads it and never writes to it; capped, an append copies it.
func (p Private) GetKey(_ context.Context, key string) ([]byte, diag.Diagnostics) {
	v := p.m[key]
	return v[:len(v):len(v)], nil
}

// With returns the private state with key set to value (removed when value
// is empty), encoded as the framework encodes it; the bytes it was parsed
// from when that changes nothing.
func (p Private) With(key string, value []byte) ([]byte, error) {
	if bytes.Equal(p.m[key], value) {
		return p.raw, nil
	}
	m := make(map[string][]byte, len(p.m)+1)
	for k, v := range p.m {
		m[k] = v
	}
	if len(value) == 0 {
		delete(m, key)
	} else {
		m[key] = value
	}
	if len(m) == 0 {
		return nil, nil
	}
	return json.Marshal(m)
}
