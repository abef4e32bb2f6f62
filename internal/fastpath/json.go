package fastpath

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
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
// tftypes fail; the caller then leaves the request to the framework.
func stateFromJSON(data []byte, typ tftypes.Type) (tftypes.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return decodeJSON(dec, typ)
}

var errJSONShape = errors.New("JSON value does not fit the type")

func decodeJSON(dec *json.Decoder, typ tftypes.Type) (tftypes.Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return tftypes.Value{}, err
	}
	if tok == nil {
		return tftypes.NewValue(typ, nil), nil
	}
	switch {
	case typ.Is(tftypes.String):
		switch v := tok.(type) {
		case string:
			return tftypes.NewValue(tftypes.String, v), nil
		case json.Number:
			return tftypes.NewValue(tftypes.String, string(v)), nil
		case bool:
			if v {
				return tftypes.NewValue(tftypes.String, "true"), nil
			}
			return tftypes.NewValue(tftypes.String, "false"), nil
		}
	case typ.Is(tftypes.Number):
		var s string
		switch v := tok.(type) {
		case json.Number:
			s = string(v)
		case string:
			s = v
		default:
			return tftypes.Value{}, errJSONShape
		}
		f, _, err := big.ParseFloat(s, 10, 512, big.ToNearestEven)
		if err != nil {
			return tftypes.Value{}, err
		}
		return tftypes.NewValue(typ, f), nil
	case typ.Is(tftypes.Bool):
		switch v := tok.(type) {
		case bool:
			return tftypes.NewValue(tftypes.Bool, v), nil
		case string:
			switch v {
			case "true", "1":
				return tftypes.NewValue(tftypes.Bool, true), nil
			case "false", "0":
				return tftypes.NewValue(tftypes.Bool, false), nil
			}
		case json.Number:
			switch v {
			case "1":
				return tftypes.NewValue(tftypes.Bool, true), nil
			case "0":
				return tftypes.NewValue(tftypes.Bool, false), nil
			}
		}
	case typ.Is(tftypes.List{}), typ.Is(tftypes.Set{}):
		var elem tftypes.Type
		if l, ok := typ.(tftypes.List); ok {
			elem = l.ElementType
		} else if s, ok := typ.(tftypes.Set); ok {
			elem = s.ElementType
		}
		if elem == nil || elem.Is(tftypes.DynamicPseudoType) || tok != json.Delim('[') {
			return tftypes.Value{}, errJSONShape
		}
		vals := []tftypes.Value{}
		for dec.More() {
			v, err := decodeJSON(dec, elem)
			if err != nil {
				return tftypes.Value{}, err
			}
			vals = append(vals, v)
		}
		if err := closing(dec, ']'); err != nil {
			return tftypes.Value{}, err
		}
		if typ.Is(tftypes.List{}) {
			return tftypes.NewValue(tftypes.List{ElementType: elem}, vals), nil
		}
		return tftypes.NewValue(tftypes.Set{ElementType: elem}, vals), nil
	case typ.Is(tftypes.Map{}):
		m, _ := typ.(tftypes.Map)
		if m.ElementType == nil || tok != json.Delim('{') {
			return tftypes.Value{}, errJSONShape
		}
		vals := map[string]tftypes.Value{}
		for dec.More() {
			key, err := objectKey(dec)
			if err != nil {
				return tftypes.Value{}, err
			}
			if vals[key], err = decodeJSON(dec, m.ElementType); err != nil {
				return tftypes.Value{}, err
			}
		}
		if err := closing(dec, '}'); err != nil {
			return tftypes.Value{}, err
		}
		return tftypes.NewValue(tftypes.Map{ElementType: m.ElementType}, vals), nil
	case typ.Is(tftypes.Object{}):
		o, _ := typ.(tftypes.Object)
		if tok != json.Delim('{') {
			return tftypes.Value{}, errJSONShape
		}
		vals := map[string]tftypes.Value{}
		for dec.More() {
			key, err := objectKey(dec)
			if err != nil {
				return tftypes.Value{}, err
			}
			at, ok := o.AttributeTypes[key]
			if !ok {
				// an attribute the schema no longer has
				if err := dec.Decode(new(json.RawMessage)); err != nil {
					return tftypes.Value{}, err
				}
				continue
			}
			if vals[key], err = decodeJSON(dec, at); err != nil {
				return tftypes.Value{}, err
			}
		}
		if err := closing(dec, '}'); err != nil {
			return tftypes.Value{}, err
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

func objectKey(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	key, ok := tok.(string)
	if !ok {
		return "", errJSONShape
	}
	return key, nil
}

func closing(dec *json.Decoder, delim json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != delim {
		return errJSONShape
	}
	return nil
}
