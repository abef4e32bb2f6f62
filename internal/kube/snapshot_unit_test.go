package kube

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// listedFederatedTrustDomain is one item of a LIST of
// ClusterFederatedTrustDomains as the API server writes it after the
// provider's server-side apply (field manager "zerotrust") created it: the
// managed fields take most of the bytes.
func listedFederatedTrustDomain(name string) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"spire.spiffe.io/v1alpha1","kind":"ClusterFederatedTrustDomain",`+
		`"metadata":{"creationTimestamp":"2026-11-29T10:02:17Z","generation":1,`+
		`"managedFields":[{"apiVersion":"spire.spiffe.io/v1alpha1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{`+
		`"f:bundleEndpointProfile":{"f:endpointSPIFFEID":{},"f:type":{}},"f:bundleEndpointURL":{},"f:className":{},`+
		`"f:trustDomain":{}}},"manager":"zerotrust","operation":"Apply","time":"2026-11-29T10:02:17Z"}],`+
		`"name":%q,"resourceVersion":"48213","uid":"5b0c6f0e-8f43-4a55-9d7e-2f1d3c9a7b21"},`+
		`"spec":{"bundleEndpointProfile":{"endpointSPIFFEID":"spiffe://%s.example.org/spire/server","type":"https_spiffe"},`+
		`"bundleEndpointURL":"https://spire-bundle.%s.example.org:8443","className":"zerotrust",`+
		`"trustDomain":"%s.example.org"}}`, name, name, name, name)
}

// DecodeListItem serves what a decode of the whole item holds: Object all
// but the managed fields, ManagedFields what the whole object returns, and
// Full the whole object; however the item is spelled.
func TestDecodeListItem(t *testing.T) {
	entry := `{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:className":{}}},` +
		`"manager":"zerotrust","operation":"Apply","time":"2026-11-29T10:02:17Z"}`
	for name, tc := range map[string]struct {
		raw string
		cut bool // the managed fields are kept out of Object
	}{
		"as listed":             {string(listedFederatedTrustDomain("peer-0042")), true},
		"first member":          {`{"metadata":{"managedFields":[` + entry + `],"name":"a"},"spec":{}}`, true},
		"only member":           {`{"metadata":{"managedFields":[` + entry + `]},"spec":{}}`, true},
		"last member":           {`{"spec":{"x":"}],\"managedFields\":1"},"metadata":{"name":"a","uid":"u","managedFields":[` + entry + `]}}`, true},
		"indented":              {"{\n  \"metadata\" : {\n    \"name\": \"a\" ,\n    \"managedFields\" : [ " + entry + " ] ,\n    \"generation\": 2\n  }\n}", true},
		"first member indented": {"{ \"metadata\": { \"managedFields\": [] , \"name\": \"a\" } }", true},
		"space before":          {" \n" + `{"apiVersion":"v1","kind":"K","metadata":{"name":"a","managedFields":[]}}`, true},
		"none":                  {`{"metadata":{"name":"a"},"spec":{"managedFields":[1]}}`, false},
		"escaped key":           {`{"metadata":{"name":"a","managed\u0046ields":[` + entry + `]}}`, true},
		"given twice":           {`{"metadata":{"managedFields":[],"managedFields":[` + entry + `]}}`, false},
		"metadata twice":        {`{"metadata":{"managedFields":[]},"metadata":{"managedFields":[` + entry + `]}}`, false},
		"not a list":            {`{"metadata":{"name":"a","managedFields":"x"}}`, true},
		"not an object":         {`{"metadata":{"name":"a","managedFields":[1]}}`, true},
	} {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(tc.raw, `"kind"`) {
				// Unstructured refuses an object without kind.
				tc.raw = `{"apiVersion":"v1","kind":"K",` + strings.TrimPrefix(tc.raw, "{")
			}
			whole := &unstructured.Unstructured{}
			if err := whole.UnmarshalJSON([]byte(tc.raw)); err != nil {
				t.Fatal(err)
			}
			got, err := DecodeListItem([]byte(tc.raw), ClusterFederatedTrustDomain)
			if err != nil {
				t.Fatal(err)
			}
			_, held := got.Object.Object["metadata"].(map[string]any)["managedFields"]
			_, inWhole := whole.Object["metadata"].(map[string]any)["managedFields"]
			if want := inWhole && !tc.cut; held != want {
				t.Errorf("managedFields in Object: %v, want %v", held, want)
			}
			if mf, want := got.ManagedFields(), whole.GetManagedFields(); !reflect.DeepEqual(mf, want) {
				t.Errorf("ManagedFields = %+v, want %+v", mf, want)
			}
			if full := got.Full(); !reflect.DeepEqual(full.Object, whole.Object) {
				t.Errorf("Full = %v, want %v", full.Object, whole.Object)
			}
			if mf, want := got.ManagedFields(), whole.GetManagedFields(); !reflect.DeepEqual(mf, want) {
				t.Errorf("after Full, ManagedFields = %+v, want %+v", mf, want)
			}
		})
	}
}

// BenchmarkDecodeListItem is GetForRefresh's work for each listed object.
func BenchmarkDecodeListItem(b *testing.B) {
	raw := listedFederatedTrustDomain("peer-0042")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeListItem(raw, ClusterFederatedTrustDomain); err != nil {
			b.Fatal(err)
		}
	}
}

// FieldSetHolds answers what a decode of the field set into maps answers,
// or says it cannot.
func TestFieldSetHolds(t *testing.T) {
	decoded := func(set []byte, fieldPath []string) bool {
		var m map[string]any
		if json.Unmarshal(set, &m) != nil {
			return false
		}
		node := any(m)
		for _, name := range fieldPath {
			m, _ := node.(map[string]any)
			node = m["f:"+name]
		}
		return node != nil
	}
	className := []string{"spec", "className"}
	for name, tc := range map[string]struct {
		set    string
		path   []string
		cannot bool
	}{
		"held":              {set: `{"f:spec":{"f:bundleEndpointURL":{},"f:className":{}}}`, path: className},
		"held, spaced":      {set: ` { "f:spec" : { "f:className" : { } } } `, path: className},
		"not held":          {set: `{"f:spec":{"f:trustDomain":{}}}`, path: className},
		"other parent":      {set: `{"f:status":{"f:className":{}},"f:spec":{}}`, path: className},
		"null":              {set: `{"f:spec":{"f:className":null}}`, path: className},
		"parent null":       {set: `{"f:spec":null}`, path: className},
		"parent not object": {set: `{"f:spec":"f:className"}`, path: className},
		"set null":          {set: `null`, path: className},
		"set not object":    {set: `["f:spec"]`, path: className},
		"no prefix":         {set: `{"f:spec":{"className":{}}}`, path: className},
		"last one counts":   {set: `{"f:spec":{"f:className":{}},"f:spec":{"f:x":{}}}`, path: className},
		"last one holds":    {set: `{"f:spec":{"f:className":null,"f:className":{}}}`, path: className},
		"string with brace": {set: `{"f:spec":{"k:{\"a\":\"}\"}":{},"f:className":{}}}`, path: className},
		"deeper":            {set: `{"f:spec":{"f:bundleEndpointProfile":{"f:type":{}}}}`, path: []string{"spec", "bundleEndpointProfile", "type"}},
		"escaped key":       {set: `{"f:spec":{"f:class\u004eame":{}}}`, path: className},
		"not JSON":          {set: `{"f:spec":{"f:className`, path: className, cannot: true},
	} {
		t.Run(name, func(t *testing.T) {
			holds, ok := FieldSetHolds([]byte(tc.set), tc.path...)
			if ok == tc.cannot {
				t.Fatalf("FieldSetHolds ok = %v, want %v", ok, !tc.cannot)
			}
			if want := decoded([]byte(tc.set), tc.path); ok && holds != want {
				t.Fatalf("FieldSetHolds = %v, decoded set says %v", holds, want)
			}
		})
	}
}

// listedKey reads what a decode of the item reads.
func TestListedKey(t *testing.T) {
	for name, raw := range map[string]string{
		"as listed":         string(listedFederatedTrustDomain("peer-0042")),
		"namespaced":        `{"metadata":{"namespace":"ns","labels":{"name":"no"},"name":"a"}}`,
		"nested names":      `{"spec":{"name":"no"},"metadata":{"ownerReferences":[{"name":"no","namespace":"no"}],"name":"a"}}`,
		"indented":          "{\n \"metadata\" : {\n  \"name\" : \"a\" ,\n  \"namespace\" : \"b\"\n }\n}",
		"escaped name":      `{"metadata":{"name":"a\u002db"}}`,
		"escaped key":       `{"metadata":{"na\u006de":"a"}}`,
		"metadata twice":    `{"metadata":{"name":"a","namespace":"x"},"metadata":{"name":"b"}}`,
		"null namespace":    `{"metadata":{"name":"a","namespace":null}}`,
		"no metadata":       `{"spec":{}}`,
		"name not a string": `{"metadata":{"name":5}}`,
	} {
		t.Run(name, func(t *testing.T) {
			var meta struct {
				Metadata struct {
					Name      string `json:"name"`
					Namespace string `json:"namespace"`
				} `json:"metadata"`
			}
			werr := json.Unmarshal([]byte(raw), &meta)
			got, err := listedKey([]byte(raw))
			if (err != nil) != (werr != nil) {
				t.Fatalf("listedKey err = %v, decode err = %v", err, werr)
			}
			if want := meta.Metadata.Namespace + "/" + meta.Metadata.Name; err == nil && got != want {
				t.Fatalf("listedKey = %q, want %q", got, want)
			}
		})
	}
}

// BenchmarkListedKey is listRaw's work for each listed object: the key
// GetForRefresh finds it by.
func BenchmarkListedKey(b *testing.B) {
	raw := listedFederatedTrustDomain("peer-0042")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := listedKey(raw); err != nil {
			b.Fatal(err)
		}
	}
}
