package resources

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type fakePrivateState map[string][]byte

func (p fakePrivateState) GetKey(_ context.Context, key string) ([]byte, diag.Diagnostics) {
	return p[key], nil
}

func (p fakePrivateState) SetKey(_ context.Context, key string, value []byte) diag.Diagnostics {
	p[key] = value
	return nil
}

// State written by earlier provider versions keeps its meaning: each of the
// three records they kept, under its own key, reads as the one record; the
// new key wins over an old one; and a record written reads back the same.
func TestReadOwnershipOldKeys(t *testing.T) {
	for _, tc := range []struct {
		name    string
		private fakePrivateState
		want    ownershipRecord
		wantErr error
	}{
		{"nothing recorded", fakePrivateState{}, ownershipRecord{}, errNoOwnershipRecord},
		{"istio_csr's record", fakePrivateState{"field_ownership": []byte(`{"sole":["a","b"],"shared":["c"]}`)},
			ownershipRecord{Held: []string{"a", "b", "c"}, Shared: []string{"c"}}, nil},
		{"mesh_trust_domain's record", fakePrivateState{"owned_fields": []byte(`{"trust_domain":true,"kuma_mesh":true}`)},
			ownershipRecord{Held: []string{meshFieldTrustDomain, meshFieldKumaMesh}}, nil},
		{"mesh_trust_domain's record, nothing held", fakePrivateState{"owned_fields": []byte(`{"trust_domain":false,"kuma_mesh":false}`)},
			ownershipRecord{Held: []string{}}, nil},
		{"federated_trust_domain's className written", fakePrivateState{"class_name_written": []byte("true")},
			ownershipRecord{Held: []string{federatedTrustDomainFieldClassName}}, nil},
		{"federated_trust_domain's className not written", fakePrivateState{"class_name_written": []byte("false")},
			ownershipRecord{Held: []string{}}, nil},
		{"the new key wins", fakePrivateState{"ownership": []byte(`{"held":[]}`), "class_name_written": []byte("true")},
			ownershipRecord{Held: []string{}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, diags, err := readOwnership(context.Background(), tc.private)
			if diags.HasError() || !errors.Is(err, tc.wantErr) || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("readOwnership = %+v, %v, %v; want %+v, %v", got, err, diags, tc.want, tc.wantErr)
			}
		})
	}
	if _, _, err := readOwnership(context.Background(), fakePrivateState{"owned_fields": []byte("{")}); err == nil ||
		errors.Is(err, errNoOwnershipRecord) {
		t.Errorf("an undecodable record read as %v, want a decoding error", err)
	}
	private := fakePrivateState{}
	rec := ownershipRecord{Held: []string{"a", "b"}, Shared: []string{"b"}}
	if d := writeOwnership(context.Background(), private, rec); d.HasError() {
		t.Fatal(d)
	}
	if got, _, err := readOwnership(context.Background(), private); err != nil || !reflect.DeepEqual(got, rec) {
		t.Errorf("written %+v, read back %+v, %v", rec, got, err)
	}
	if !rec.releases("a") || rec.releases("b") || rec.releases("c") || !rec.held("b") {
		t.Errorf("releases/held of %+v are wrong", rec)
	}
	// What each resource asks of the record, from an old record.
	written, _ := classNameWritten(context.Background(), fakePrivateState{"class_name_written": []byte("true")})
	var diags diag.Diagnostics
	mesh := readMeshOwnership(context.Background(), fakePrivateState{"owned_fields": []byte(`{"kuma_mesh":true}`)}, &diags)
	if !written || mesh.held(meshFieldTrustDomain) || !mesh.held(meshFieldKumaMesh) || len(diags) > 0 {
		t.Errorf("classNameWritten = %v, mesh record %+v, %v", written, mesh, diags)
	}
	readMeshOwnership(context.Background(), fakePrivateState{"ownership": []byte("[")}, &diags)
	if len(diags) != 1 || diags[0].Severity() != diag.SeverityWarning {
		t.Errorf("an unreadable mesh record gave %v, want one warning", diags)
	}
}

// The two checks select entries by manager, operation and subresource as
// each caller asks, and others() is every entry the rest does not select.
func TestOwnerChecks(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "zerotrust", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: &metav1.FieldsV1{Raw: []byte(
			`{"f:spec":{"f:className":{},"f:list":{}}}`)}},
		{Manager: "zerotrust", Operation: metav1.ManagedFieldsOperationApply, Subresource: "status", FieldsV1: &metav1.FieldsV1{Raw: []byte(
			`{"f:status":{"f:phase":{}}}`)}},
		{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: &metav1.FieldsV1{Raw: []byte(
			`{"f:spec":{"f:list":{},"f:other":{}}}`)}},
	})
	className, list, other, phase := []string{"spec", "className"}, []string{"spec", "list"}, []string{"spec", "other"}, []string{"status", "phase"}
	objectOnly := applier("zerotrust")
	objectOnly.objectOnly = true
	for _, tc := range []struct {
		name string
		got  bool
		want bool
	}{
		{"zerotrust applied", applier("zerotrust").wrote(obj), true},
		{"kubectl applied nothing", applier("kubectl").wrote(obj), false},
		{"kubectl wrote", managerOf("kubectl").wrote(obj), true},
		{"zerotrust holds className", applier("zerotrust").holds(obj, className), true},
		{"the status is a subresource", objectOnly.holds(obj, phase), false},
		{"but zerotrust applied it", applier("zerotrust").holds(obj, phase), true},
		{"others hold the list", applier("zerotrust").others().holds(obj, list), true},
		{"others do not hold className", applier("zerotrust").others().holds(obj, className), false},
		{"either of two managers", managerOf("nobody", "kubectl").holds(obj, other), true},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	rec := recordOwnership(obj, applier("zerotrust"), []string{"className", "list", "other"},
		map[string][]string{"className": className, "list": list, "other": other})
	if want := (ownershipRecord{Held: []string{"className", "list"}, Shared: []string{"list"}}); !reflect.DeepEqual(rec, want) {
		t.Errorf("recordOwnership = %+v, want %+v", rec, want)
	}
}
