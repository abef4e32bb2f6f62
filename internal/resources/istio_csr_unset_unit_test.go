package resources

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The managedFields below are what a v1.35 API server recorded: a kubectl
// create (operation Update, which owns the fields defaulting filled in) and
// this provider's apply of log level and server.clusterID, and of an issuer
// both set with the same value.
func TestIstioCSRFieldOwnership(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "kubectl-create", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: &metav1.FieldsV1{Raw: []byte(
			`{"f:spec":{".":{},"f:istioCSRConfig":{".":{},"f:certManager":{".":{},"f:issuerRef":{".":{},"f:group":{},"f:kind":{},"f:name":{}}},` +
				`"f:istio":{".":{},"f:namespace":{},"f:revisions":{".":{},"v:\"default\"":{},"v:\"canary\"":{}}},` +
				`"f:istiodTLSConfig":{".":{},"f:privateKeySize":{},"f:trustDomain":{}},"f:logFormat":{}}}}`)}},
		{Manager: "zerotrust", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: &metav1.FieldsV1{Raw: []byte(
			`{"f:spec":{"f:istioCSRConfig":{"f:certManager":{"f:issuerRef":{"f:group":{},"f:kind":{},"f:name":{}}},` +
				`"f:istio":{"f:namespace":{},"f:revisions":{"v:\"canary\"":{}}},"f:logLevel":{},"f:server":{"f:clusterID":{}}}}}`)}},
		// Status written by the operator never counts.
		{Manager: "operator", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsV1: &metav1.FieldsV1{Raw: []byte(
			`{"f:status":{"f:conditions":{}}}`)}},
	})
	got := istioCSRFieldOwnership(obj, "zerotrust")
	// Held is the fields applied alone (logLevel, server, server.clusterID)
	// and those shared (istio.revisions), in istioCSRReleasable's order.
	want := ownershipRecord{
		Held:   []string{"istioCSRConfig.logLevel", "istioCSRConfig.server", "istioCSRConfig.server.clusterID", "istioCSRConfig.istio.revisions"},
		Shared: []string{"istioCSRConfig.istio.revisions"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ownership = %+v, want %+v", got, want)
	}
}

type fakePrivate map[string][]byte

func (p fakePrivate) GetKey(_ context.Context, key string) ([]byte, diag.Diagnostics) {
	return p[key], nil
}

// TestUnsetIstioCSRFieldDecide covers each way an unset attribute is planned,
// from the record an earlier provider version kept under its own key.
func TestUnsetIstioCSRFieldDecide(t *testing.T) {
	ownership := fakePrivate{legacyIstioCSROwnershipKey: []byte(
		`{"sole":["istioCSRConfig.logLevel","istioCSRConfig.server"],"shared":["istioCSRConfig.istio.revisions","istioCSRConfig.logFormat"]}`)}
	logLevel := unsetInt64("istioCSRConfig.logLevel", 1)
	logFormat := unsetString("istioCSRConfig.logFormat", "text")
	server := unsetOptional("istioCSRConfig.server", true)
	revisions := unsetIstioCSRField{field: "istioCSRConfig.istio.revisions", composite: true,
		def: types.ListValueMust(types.StringType, []attr.Value{types.StringValue("default")})}
	group := unsetString("", "cert-manager.io")
	canary := types.ListValueMust(types.StringType, []attr.Value{types.StringValue("canary")})
	serverValue := types.ObjectValueMust(istioCSRAttrTypes("server"), map[string]attr.Value{
		"cluster_id": types.StringValue("east"), "port": types.Int64Value(443),
	})
	for _, tc := range []struct {
		name       string
		field      unsetIstioCSRField
		configNull bool
		state      attr.Value
		private    fakePrivate
		want       unsetPlan
	}{
		{"configured", logLevel, false, types.Int64Value(3), ownership, unsetConfigured},
		{"new object", logLevel, true, types.Int64Null(), ownership, unsetDefault},
		{"state at the default", logLevel, true, types.Int64Value(1), ownership, unsetState},
		{"set only by this provider: released", logLevel, true, types.Int64Value(3), ownership, unsetDefault},
		{"shared scalar keeps its value", logFormat, true, types.StringValue("json"), ownership, unsetState},
		{"another manager's value", unsetInt64("istioCSRConfig.istiodTLSConfig.privateKeySize", 2048), true, types.Int64Value(4096), ownership, unsetState},
		{"object set only by this provider", server, true, serverValue, ownership, unsetDefault},
		{"list shared with another manager", revisions, true, canary, ownership, unsetUnknown},
		{"always sent", group, true, types.StringValue("CERT-MANAGER.IO"), ownership, unsetState},
		{"no ownership recorded", logLevel, true, types.Int64Value(3), fakePrivate{}, unsetUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, diags := tc.field.decide(context.Background(), tc.configNull, tc.state, tc.private)
			if diags.HasError() {
				t.Fatal(diags)
			}
			if got != tc.want {
				t.Errorf("decide = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestIstioCSRReleasableMatchesSchema checks istioCSRReleasable, CRD paths
// typed by hand, against the schema (every attribute, nested ones and those
// of list, set and map elements included): every path is the field of
// exactly one attribute's unset plan modifier, that attribute is
// Optional+Computed (an unset Required or plain Optional attribute never
// reaches the modifier's decision), and no modifier names a field missing
// from the list (its release would never be recorded in private state).
func TestIstioCSRReleasableMatchesSchema(t *testing.T) {
	type use struct {
		attribute          string
		optional, computed bool
	}
	uses := map[string][]use{}
	var walk func(prefix string, attrs map[string]schema.Attribute)
	walk = func(prefix string, attrs map[string]schema.Attribute) {
		for name, a := range attrs {
			full := prefix + name
			// Every attribute type keeps its plan modifiers in a field named
			// PlanModifiers, of a slice type specific to it.
			if mods := reflect.ValueOf(a).FieldByName("PlanModifiers"); mods.IsValid() {
				for i := range mods.Len() {
					if u, ok := mods.Index(i).Interface().(unsetIstioCSRField); ok && u.field != "" {
						uses[u.field] = append(uses[u.field], use{full, a.IsOptional(), a.IsComputed()})
					}
				}
			}
			switch nested := a.(type) {
			case schema.SingleNestedAttribute:
				walk(full+".", nested.Attributes)
			case schema.ListNestedAttribute:
				walk(full+"[].", nested.NestedObject.Attributes)
			case schema.MapNestedAttribute:
				walk(full+"{}.", nested.NestedObject.Attributes)
			case schema.SetNestedAttribute:
				walk(full+"[].", nested.NestedObject.Attributes)
			}
		}
	}
	walk("", istioCSRSchema(context.Background()).Attributes)
	for _, field := range istioCSRReleasable {
		switch u := uses[field]; {
		case len(u) != 1:
			t.Errorf("releasable field %s is the field of %d attributes' unset plan modifier (%v), want exactly 1", field, len(u), u)
		case !u[0].optional || !u[0].computed:
			t.Errorf("releasable field %s belongs to %s, which is not Optional+Computed", field, u[0].attribute)
		}
	}
	for field, u := range uses {
		if !slices.Contains(istioCSRReleasable, field) {
			t.Errorf("%v plan %s as releasable, but istioCSRReleasable lacks it", u, field)
		}
	}
}
