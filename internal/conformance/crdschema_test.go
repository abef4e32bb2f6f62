package conformance

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// crdNode is one node of a CRD version's openAPIV3Schema.
type crdNode map[string]any

// crdSchema returns the openAPIV3Schema of the published CRD name at
// version: an operator's published copy, else the one the
// spire-controller-manager module publishes, else the project's own CRD for
// an API that publishes none.
func crdSchema(name, version string) (crdNode, error) {
	crd, err := harness.UpstreamCRD(name)
	if err != nil {
		own, ownErr := ownCRD(name)
		if ownErr != nil {
			return nil, errors.Join(err, ownErr)
		}
		crd = own
	}
	root, err := harness.CRDVersionSchema(crd, version)
	if err != nil {
		return nil, fmt.Errorf("CRD %s: %w", name, err)
	}
	return root, nil
}

func ownCRD(name string) (map[string]any, error) {
	docs, err := harness.CRDDocuments()
	if err != nil {
		return nil, err
	}
	return harness.CRDNamed(docs, name)
}

// lookup follows a field path such as "spec.federation.federatesWith[].trustDomain".
// preserved is true when the path runs into x-kubernetes-preserve-unknown-fields
// without declared properties (anything is accepted there).
func (n crdNode) lookup(field string) (node crdNode, preserved bool, err error) {
	node = n
	for _, step := range strings.Split(field, ".") {
		name, isArray := strings.CutSuffix(step, "[]")
		props, _ := node["properties"].(map[string]any)
		child, ok := props[name].(map[string]any)
		if !ok {
			if node["x-kubernetes-preserve-unknown-fields"] == true {
				return node, true, nil
			}
			return nil, false, fmt.Errorf("field %q is not declared (at %q)", field, name)
		}
		node = child
		if isArray {
			items, ok := node["items"].(map[string]any)
			if !ok {
				return nil, false, fmt.Errorf("field %q: %q is not an array", field, name)
			}
			node = items
		}
	}
	return node, false, nil
}

func (n crdNode) typ() string {
	if n["x-kubernetes-int-or-string"] == true {
		return "int-or-string"
	}
	t, _ := n["type"].(string)
	return t
}

// enum returns the allowed values, from enum or from allOf enums (the
// intersection, as the API server applies both).
func (n crdNode) enum() []string {
	var sets [][]string
	if e := strings1(n["enum"]); e != nil {
		sets = append(sets, e)
	}
	if all, ok := n["allOf"].([]any); ok {
		for _, a := range all {
			m, _ := a.(map[string]any)
			if e := strings1(m["enum"]); e != nil {
				sets = append(sets, e)
			}
		}
	}
	if len(sets) == 0 {
		return nil
	}
	out := sets[0]
	for _, s := range sets[1:] {
		out = slices.DeleteFunc(slices.Clone(out), func(v string) bool { return !slices.Contains(s, v) })
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func strings1(v any) []string {
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		out = append(out, fmt.Sprint(e))
	}
	return out
}

func (n crdNode) number(key string) (int64, bool) {
	switch v := n[key].(type) {
	case int64:
		return v, true
	case float64:
		return int64(v), true
	case int:
		return int64(v), true
	}
	return 0, false
}

// transitionRule is a CEL rule that compares the object with its previous
// version (it names oldSelf): immutability and one-way switches.
type transitionRule struct {
	Field   string // where the rule sits ("" for the root)
	Message string // its message, or the rule itself when it has none
	Rule    string
}

// transitionRules returns every transition rule in the tree, with field
// paths in lookup's notation.
func (n crdNode) transitionRules(prefix string) []transitionRule {
	var out []transitionRule
	if vs, ok := n["x-kubernetes-validations"].([]any); ok {
		for _, v := range vs {
			m, _ := v.(map[string]any)
			rule, _ := m["rule"].(string)
			if !strings.Contains(rule, "oldSelf") {
				continue
			}
			msg, _ := m["message"].(string)
			if msg == "" {
				msg = rule
			}
			out = append(out, transitionRule{Field: prefix, Message: msg, Rule: rule})
		}
	}
	join := func(name string) string {
		if prefix == "" {
			return name
		}
		return prefix + "." + name
	}
	if props, ok := n["properties"].(map[string]any); ok {
		for name, p := range props {
			child, _ := p.(map[string]any)
			out = append(out, crdNode(child).transitionRules(join(name))...)
		}
	}
	if items, ok := n["items"].(map[string]any); ok {
		out = append(out, crdNode(items).transitionRules(prefix+"[]")...)
	}
	return out
}
