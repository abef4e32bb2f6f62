package standin

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// How the IstioCSR stand-in writes the IstioCSR (conditions, status fields,
// the re-serialised spec) and its own objects, and how it compares them with
// what the API server holds.

type istioCSRCond struct{ typ, status, reason, message string }

// setConditions is conditions.go SetCondition: a condition changes (message
// and lastTransitionTime included) only when its status or reason does; no
// observedGeneration; no write when nothing changes.
func (s *IstioCSR) setConditions(ctx context.Context, obj *unstructured.Unstructured, conds []istioCSRCond) {
	fresh, err := s.istioCSRs().Namespace(obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return
	}
	items, _, _ := unstructured.NestedSlice(fresh.Object, "status", "conditions")
	changed := false
	for _, c := range conds {
		found := false
		for i, item := range items {
			old, ok := item.(map[string]any)
			if !ok || old["type"] != c.typ {
				continue
			}
			found = true
			if old["status"] != c.status || old["reason"] != c.reason {
				items[i] = newCondition(c)
				changed = true
			}
		}
		if !found {
			items = append(items, newCondition(c))
			changed = true
		}
	}
	if !changed {
		return
	}
	if err := unstructured.SetNestedSlice(fresh.Object, items, "status", "conditions"); err != nil {
		return
	}
	_, _ = s.istioCSRs().Namespace(fresh.GetNamespace()).UpdateStatus(ctx, fresh, metav1.UpdateOptions{FieldManager: istioCSRStandInManager})
}

func newCondition(c istioCSRCond) map[string]any {
	return map[string]any{
		"type": c.typ, "status": c.status, "reason": c.reason, "message": c.message,
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	}
}

// setStatusField writes one status field, as the operator does after each
// step (its own Status().Update); fields are never cleared.
func (s *IstioCSR) setStatusField(ctx context.Context, obj *unstructured.Unstructured, field, value string) {
	fresh, err := s.istioCSRs().Namespace(obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return
	}
	if v, _, _ := unstructured.NestedString(fresh.Object, "status", field); v == value {
		return
	}
	if err := unstructured.SetNestedField(fresh.Object, value, "status", field); err != nil {
		return
	}
	_, _ = s.istioCSRs().Namespace(fresh.GetNamespace()).UpdateStatus(ctx, fresh, metav1.UpdateOptions{FieldManager: istioCSRStandInManager})
}

// updateIstioCSR is the operator's UpdateWithRetry of its typed copy: a
// full Update, whose spec is the Go types' serialisation.
// obj becomes the object the API server returned (its generation changes
// when the re-serialised spec differs from what was stored).
func (s *IstioCSR) updateIstioCSR(ctx context.Context, obj *unstructured.Unstructured) error {
	reserialiseIstioCSRSpec(obj)
	out, err := s.istioCSRs().Namespace(obj.GetNamespace()).Update(ctx, obj, metav1.UpdateOptions{FieldManager: istioCSRStandInManager})
	if err == nil {
		obj.Object = out.Object
	}
	return err
}

// reserialiseIstioCSRSpec makes the spec what encoding the operator's Go
// types writes: the three *metav1.Duration fields in time.Duration.String()
// form (1h -> 1h0m0s), resources always present (a non-pointer
// ResourceRequirements: `{}` at least), quantities canonical (0.5 -> 500m).
func reserialiseIstioCSRSpec(obj *unstructured.Unstructured) {
	cfg, found, _ := unstructured.NestedMap(obj.Object, "spec", "istioCSRConfig")
	if !found {
		return
	}
	if tls, ok := cfg["istiodTLSConfig"].(map[string]any); ok {
		for _, field := range []string{"certificateDuration", "certificateRenewBefore", "maxCertificateDuration"} {
			if text, ok := tls[field].(string); ok {
				if d, err := time.ParseDuration(text); err == nil {
					tls[field] = d.String()
				}
			}
		}
	}
	res, ok := cfg["resources"].(map[string]any)
	if !ok {
		res = map[string]any{}
	}
	for _, group := range []string{"limits", "requests"} {
		if quantities, ok := res[group].(map[string]any); ok {
			for name, v := range quantities {
				if q, err := resource.ParseQuantity(objString(v)); err == nil {
					quantities[name] = q.String()
				}
			}
		}
	}
	cfg["resources"] = res
	_ = unstructured.SetNestedMap(obj.Object, cfg, "spec", "istioCSRConfig")
}

// ensure creates obj, or updates it when its labels or content differ
// (the operator's create-or-update with ObjectMetadataModified and the
// per-kind spec comparisons).
func (s *IstioCSR) ensure(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
	ri := s.resource(gvr, obj.GetNamespace())
	live, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: istioCSRStandInManager})
		return err
	}
	if err != nil {
		return err
	}
	if !istioCSRContentDiffers(live, obj) {
		return nil
	}
	for k, v := range obj.Object {
		if k != "metadata" && k != "status" {
			live.Object[k] = v
		}
	}
	live.SetLabels(obj.GetLabels())
	_, err = ri.Update(ctx, live, metav1.UpdateOptions{FieldManager: istioCSRStandInManager})
	return err
}

// ensureGenerated is rbacs.go createOrApplyClusterRoles (and ...Bindings):
// the object named in status (statusName) is updated, or recreated under
// that name when gone; without a status name, the one object with the full
// label set is (more than one is irrecoverable), else a new one is created
// with generateName. It returns the name.
func (s *IstioCSR) ensureGenerated(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured,
	content map[string]any, statusName string) (string, error) {
	for k, v := range content {
		obj.Object[k] = v
	}
	ri := s.resource(gvr, "")
	if statusName != "" {
		obj.SetName(statusName)
		err := s.ensure(ctx, gvr, obj)
		return statusName, err
	}
	var selector []string
	for k, v := range obj.GetLabels() {
		selector = append(selector, k+"="+v)
	}
	sort.Strings(selector)
	list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: strings.Join(selector, ",")})
	if err != nil {
		return "", err
	}
	switch len(list.Items) {
	case 0:
		obj.SetGenerateName(istioCSRAgentName + "-")
		created, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: istioCSRStandInManager})
		if err != nil {
			return "", err
		}
		return created.GetName(), nil
	case 1:
		obj.SetName(list.Items[0].GetName())
		err := s.ensure(ctx, gvr, obj)
		return obj.GetName(), err
	}
	return "", irrecoverable("more than 1 %s resources exist with matching labels", strings.TrimSuffix(gvr.Resource, "s"))
}

func (s *IstioCSR) resource(gvr schema.GroupVersionResource, ns string) dynamic.ResourceInterface {
	if ns == "" {
		return s.dyn.Resource(gvr)
	}
	return s.dyn.Resource(gvr).Namespace(ns)
}

// istioCSRContentDiffers compares labels and every top-level field but
// metadata and status.
func istioCSRContentDiffers(live, want *unstructured.Unstructured) bool {
	if !reflect.DeepEqual(live.GetLabels(), want.GetLabels()) {
		return true
	}
	for k, v := range want.Object {
		if k == "metadata" || k == "status" || k == "apiVersion" || k == "kind" {
			continue
		}
		if !reflect.DeepEqual(istioCSRNormalizeJSON(live.Object[k]), istioCSRNormalizeJSON(v)) {
			if k == "spec" && live.Object[k] != nil && specContains(live.Object[k], v) {
				continue // the API server filled in defaults
			}
			return true
		}
	}
	return false
}

// specContains reports whether every field of want is in have with the same
// value (have may hold more: defaults the API server added).
func specContains(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if !specContains(h[k], v) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return false
		}
		for i := range w {
			if !specContains(h[i], w[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(istioCSRNormalizeJSON(have), istioCSRNormalizeJSON(want))
}

func objString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	default:
		return fmt.Sprint(x)
	}
}

func nestedValue(m map[string]any, fields ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(m, fields...)
	return v
}

func containsString(items []string, s string) bool {
	for _, item := range items {
		if item == s {
			return true
		}
	}
	return false
}

func removeString(items []string, s string) []string {
	out := make([]string, 0, len(items))
	for _, item := range items {
		if item != s {
			out = append(out, item)
		}
	}
	return out
}

// istioCSRNormalizeJSON makes values read from the API comparable with values built
// here (int vs int64, []any of maps).
func istioCSRNormalizeJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = istioCSRNormalizeJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = istioCSRNormalizeJSON(e)
		}
		return out
	case int:
		return int64(x)
	case float64:
		return int64(x)
	default:
		return v
	}
}
