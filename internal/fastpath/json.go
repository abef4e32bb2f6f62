package fastpath

import (
	"encoding/json"
	"errors"
	"math/big"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	jsoniter "github.com/json-iterator/go"
)

// stateFromJSON decodes a stored state as tftypes.ValueFromJSONWithOpts
// does with IgnoreUndefinedAttributes (v0.31, tftypes/value_json.go), the
// decoding the framework's UpgradeResourceState runs: the same tokens
// accepted and converted the same way, the same values built. It reads the
// state in one pass where tftypes starts a new json.Decoder for every
// value it meets (a buffer of its own each time), which made that decoding
// a quarter of all the bytes the provider allocated in an N = 1000 plan
// (bench/REPORT.md, "Provider CPU"). Types the fast path never meets
// (dynamic, tuples) are an error, and so is anything that would have made
// tftypes fail or that is not one JSON document; the caller then leaves the
// request to the framework.
func stateFromJSON(data []byte, typ tftypes.Type) (tftypes.Value, error) {
	if !json.Valid(data) {
		// Text that is not one JSON document (Terraform never stores one)
		// goes to the framework, whose tftypes reads the first value and
		// ignores what follows.
		return tftypes.Value{}, errJSONShape
	}
	iter := jsonIterators.BorrowIterator(data)
	defer jsonIterators.ReturnIterator(iter)
	v, err := decodeJSON(iter, typ)
	if err == nil && iter.Error != nil {
		err = iter.Error
	}
	return v, err
}

// jsonIterators hands out json-iterator's Iterators, which read JSON in
// place: a string, a number or a key is one read, where encoding/json's
// Decoder.Token boxes every token in an interface (and the Decoder copies
// the input into a buffer of its own), two thirds of what the state
// upgrade cost after the one-pass change (bench/ANALYSIS.md). The library
// is already in the provider through client-go's dependencies.
var jsonIterators = jsoniter.Config{UseNumber: true}.Froze()

var errJSONShape = errors.New("JSON value does not fit the type")

func decodeJSON(iter *jsoniter.Iterator, typ tftypes.Type) (tftypes.Value, error) {
	next := iter.WhatIsNext()
	if iter.Error != nil {
		return tftypes.Value{}, iter.Error
	}
	if next == jsoniter.NilValue {
		iter.Skip()
		return tftypes.NewValue(typ, nil), iter.Error
	}
	switch {
	case typ.Is(tftypes.String):
		switch next {
		case jsoniter.StringValue:
			return tftypes.NewValue(tftypes.String, validUTF8(iter.ReadString())), iter.Error
		case jsoniter.NumberValue:
			return tftypes.NewValue(tftypes.String, string(iter.ReadNumber())), iter.Error
		case jsoniter.BoolValue:
			if iter.ReadBool() {
				return tftypes.NewValue(tftypes.String, "true"), iter.Error
			}
			return tftypes.NewValue(tftypes.String, "false"), iter.Error
		}
	case typ.Is(tftypes.Number):
		var s string
		switch next {
		case jsoniter.NumberValue:
			s = string(iter.ReadNumber())
		case jsoniter.StringValue:
			s = validUTF8(iter.ReadString())
		default:
			return tftypes.Value{}, errJSONShape
		}
		if iter.Error != nil {
			return tftypes.Value{}, iter.Error
		}
		f, _, err := big.ParseFloat(s, 10, 512, big.ToNearestEven)
		if err != nil {
			return tftypes.Value{}, err
		}
		return tftypes.NewValue(typ, f), nil
	case typ.Is(tftypes.Bool):
		switch next {
		case jsoniter.BoolValue:
			return tftypes.NewValue(tftypes.Bool, iter.ReadBool()), iter.Error
		case jsoniter.StringValue:
			switch validUTF8(iter.ReadString()) {
			case "true", "1":
				return tftypes.NewValue(tftypes.Bool, true), iter.Error
			case "false", "0":
				return tftypes.NewValue(tftypes.Bool, false), iter.Error
			}
		case jsoniter.NumberValue:
			switch iter.ReadNumber() {
			case "1":
				return tftypes.NewValue(tftypes.Bool, true), iter.Error
			case "0":
				return tftypes.NewValue(tftypes.Bool, false), iter.Error
			}
		}
	case typ.Is(tftypes.List{}), typ.Is(tftypes.Set{}):
		var elem tftypes.Type
		if l, ok := typ.(tftypes.List); ok {
			elem = l.ElementType
		} else if s, ok := typ.(tftypes.Set); ok {
			elem = s.ElementType
		}
		if elem == nil || elem.Is(tftypes.DynamicPseudoType) || next != jsoniter.ArrayValue {
			return tftypes.Value{}, errJSONShape
		}
		vals := []tftypes.Value{}
		var err error
		iter.ReadArrayCB(func(iter *jsoniter.Iterator) bool {
			var v tftypes.Value
			if v, err = decodeJSON(iter, elem); err != nil {
				return false
			}
			vals = append(vals, v)
			return true
		})
		if err != nil {
			return tftypes.Value{}, err
		}
		if iter.Error != nil {
			return tftypes.Value{}, iter.Error
		}
		if typ.Is(tftypes.List{}) {
			return tftypes.NewValue(tftypes.List{ElementType: elem}, vals), nil
		}
		return tftypes.NewValue(tftypes.Set{ElementType: elem}, vals), nil
	case typ.Is(tftypes.Map{}):
		m, _ := typ.(tftypes.Map)
		if m.ElementType == nil || next != jsoniter.ObjectValue {
			return tftypes.Value{}, errJSONShape
		}
		vals := map[string]tftypes.Value{}
		var err error
		iter.ReadMapCB(func(iter *jsoniter.Iterator, key string) bool {
			key = validUTF8(key)
			if vals[key], err = decodeJSON(iter, m.ElementType); err != nil {
				return false
			}
			return true
		})
		if err != nil {
			return tftypes.Value{}, err
		}
		if iter.Error != nil {
			return tftypes.Value{}, iter.Error
		}
		return tftypes.NewValue(tftypes.Map{ElementType: m.ElementType}, vals), nil
	case typ.Is(tftypes.Object{}):
		o, _ := typ.(tftypes.Object)
		if next != jsoniter.ObjectValue {
			return tftypes.Value{}, errJSONShape
		}
		vals := make(map[string]tftypes.Value, len(o.AttributeTypes))
		var err error
		iter.ReadMapCB(func(iter *jsoniter.Iterator, key string) bool {
			key = validUTF8(key)
			at, ok := o.AttributeTypes[key]
			if !ok {
				iter.Skip() // an attribute the schema no longer has
				return true
			}
			if vals[key], err = decodeJSON(iter, at); err != nil {
				return false
			}
			return true
		})
		if err != nil {
			return tftypes.Value{}, err
		}
		if iter.Error != nil {
			return tftypes.Value{}, iter.Error
		}
		for k, at := range o.AttributeTypes {
			if _, ok := vals[k]; !ok {
				vals[k] = tftypes.NewValue(at, nil)
			}
		}
		return tftypes.NewValue(tftypes.Object{AttributeTypes: o.AttributeTypes}, vals), nil
	}
	return tftypes.Value{}, errJSONShape
}

// validUTF8 is s with every byte that is not part of valid UTF-8 replaced by
// U+FFFD, as encoding/json unquotes a string (json-iterator keeps the bytes).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b []byte
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}
