package kube

import (
	"bytes"
	"encoding/json"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Refreshed is an object as GetForRefresh serves it. A listed object's
// metadata.managedFields, most of its bytes, are not in Object but kept
// undecoded: a refresh reads them for one field's owner at most, and
// decoded into unstructured maps they were most of a refresh's
// allocations. ManagedFields decodes them when asked, Full puts them back.
type Refreshed struct {
	// Object is the object, without metadata.managedFields when it came
	// from a list.
	Object *unstructured.Unstructured
	// managedFields is the JSON of metadata.managedFields cut out of
	// Object; nil when Object holds its own (a GET) or there were none.
	managedFields []byte
	once          sync.Once
	entries       []metav1.ManagedFieldsEntry
}

// ManagedFields returns the object's managed fields, as
// Object.GetManagedFields returns them on the whole object (nil when they
// do not decode), decoded once.
func (r *Refreshed) ManagedFields() []metav1.ManagedFieldsEntry {
	if r.managedFields == nil {
		return r.Object.GetManagedFields()
	}
	r.once.Do(func() {
		// A typed decode: FieldsV1 keeps its JSON, and no entry becomes
		// maps only to be converted back.
		if json.Unmarshal(r.managedFields, &r.entries) != nil {
			r.entries = nil
		}
	})
	return r.entries
}

// Full returns Object with its managed fields back in place, as a GET
// would have decoded it, for code that reads them from the object.
func (r *Refreshed) Full() *unstructured.Unstructured {
	if r.managedFields == nil {
		return r.Object
	}
	var managedFields any
	// The raw item decoded before it was cut, so this does too.
	if utiljson.Unmarshal(r.managedFields, &managedFields) == nil {
		if metadata, ok := r.Object.Object["metadata"].(map[string]any); ok {
			metadata["managedFields"] = managedFields
		}
	}
	r.managedFields = nil
	return r.Object
}

// cutManagedFields returns obj, the JSON of an object, without the member
// metadata.managedFields, and that member's value. ok is false when obj
// has no such member or gives metadata or managedFields twice (a decoder
// keeps the last): the caller then decodes obj whole. obj must be valid
// JSON; the values skipped are not checked.
func cutManagedFields(obj []byte) (rest, managedFields []byte, ok bool) {
	var cut, value span
	metadata, managed := 0, 0
	ok = eachMember(obj, skipSpace(obj, 0), func(key []byte, m member) bool {
		if string(key) != "metadata" {
			return true
		}
		metadata++
		return metadata == 1 && eachMember(obj, m.value.start, func(key []byte, m member) bool {
			if string(key) != "managedFields" {
				return true
			}
			managed++
			cut, value = m.cut(obj), m.value
			return managed == 1
		})
	})
	if !ok || managed != 1 {
		return nil, nil, false
	}
	rest = make([]byte, 0, len(obj)-(cut.end-cut.start))
	rest = append(append(rest, obj[:cut.start]...), obj[cut.end:]...)
	return rest, obj[value.start:value.end], true
}

// span is obj[start:end].
type span struct{ start, end int }

// member is where an object member is: its key's first byte, its value,
// and the end of the member before it (just after the '{' for the first).
type member struct {
	keyStart, prevEnd int
	value             span
	first             bool
}

// cut is the span of obj to remove to leave the object without m, with
// one comma between what remains.
func (m member) cut(obj []byte) span {
	if !m.first {
		return span{m.prevEnd, m.value.end} // the comma before m included
	}
	if next := skipSpace(obj, m.value.end); next < len(obj) && obj[next] == ',' {
		return span{m.keyStart, skipSpace(obj, next+1)} // the comma after m included
	}
	return span{m.keyStart, m.value.end}
}

// eachMember calls f for each member of the object at obj[at] with its
// key; false when f does, or when obj[at] is no object.
func eachMember(obj []byte, at int, f func(key []byte, m member) bool) bool {
	if at >= len(obj) || obj[at] != '{' {
		return false
	}
	m := member{prevEnd: at + 1, first: true}
	i := skipSpace(obj, m.prevEnd)
	if i < len(obj) && obj[i] == '}' {
		return true
	}
	for i < len(obj) && obj[i] == '"' {
		keyEnd, escaped := skipString(obj, i)
		if keyEnd > len(obj) {
			return false
		}
		key := obj[i+1 : keyEnd-1]
		if escaped {
			// Rare (the keys of keyed list items in a field set): an
			// escape could spell any key, so it is decoded.
			var unescaped string
			if json.Unmarshal(obj[i:keyEnd], &unescaped) != nil {
				return false
			}
			key = []byte(unescaped)
		}
		colon := skipSpace(obj, keyEnd)
		if colon >= len(obj) || obj[colon] != ':' {
			return false
		}
		m.keyStart = i
		m.value.start = skipSpace(obj, colon+1)
		m.value.end = skipValue(obj, m.value.start)
		if !f(key, m) {
			return false
		}
		m.prevEnd, m.first = m.value.end, false
		i = skipSpace(obj, m.value.end)
		if i < len(obj) && obj[i] == '}' {
			return true
		}
		if i >= len(obj) || obj[i] != ',' {
			return false
		}
		i = skipSpace(obj, i+1)
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] (a '"'),
// and whether it holds an escape.
func skipString(b []byte, i int) (end int, escaped bool) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return i + 1, escaped
		}
	}
	return len(b) + 1, escaped
}

// skipValue returns the index after the JSON value starting at b[i].
func skipValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			end, _ := skipString(b, i)
			if depth == 0 {
				return end
			}
			i = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of the enclosing value: a literal ended
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
	}
	return len(b)
}

// FieldSetHolds reports whether fieldsV1, a managed-fields entry's field set
// (FieldsV1), holds the field at fieldPath (object keys from the root, as in
// ["spec", "className"]: the set's keys are "f:spec", "f:className"), read
// in place rather than decoded into maps. ok is false when fieldsV1 is not
// JSON after all; it must be valid JSON, as every FieldsV1 decoded from an
// object is, because the values skipped are not checked.
func FieldSetHolds(fieldsV1 []byte, fieldPath ...string) (holds, ok bool) {
	at := skipSpace(fieldsV1, 0)
	for _, name := range fieldPath {
		if at >= len(fieldsV1) || fieldsV1[at] != '{' {
			return false, true // no object here, so no field below it
		}
		next := -1
		if !eachMember(fieldsV1, at, func(key []byte, m member) bool {
			if len(key) == len(name)+2 && string(key[:2]) == "f:" && string(key[2:]) == name {
				next = m.value.start // the last one, as a decoder keeps
			}
			return true
		}) {
			return false, false
		}
		if next < 0 {
			return false, true
		}
		at = next
	}
	return !bytes.HasPrefix(fieldsV1[at:], []byte("null")), true
}
