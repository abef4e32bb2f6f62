package resources_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

// TestAccMeshTrustDomain_keepOnDestroy runs the terraform CLI, whose plan
// output carries the warnings terraform-plugin-testing cannot assert, against
// a Sail Istio whose trust domain only this provider sets:
//   - the destroy plan warns that the mesh reverts to cluster.local;
//   - with keep_on_destroy = true it does not, and the destroy leaves the trust
//     domain, aliases and CA address on the object, held by the field manager
//     zerotrust-kept instead of zerotrust (on the real API server);
//   - a new resource adopting the object with the same values needs no
//     force, and its destroy without keep_on_destroy hands everything back.
func TestAccMeshTrustDomain_keepOnDestroy(t *testing.T) {
	t.Parallel()
	name := acctest.UniqueName("sailkeep")
	td := "east-" + name + ".test"
	obj := sailOperatorObject(name, "")
	unstructured.RemoveNestedField(obj, "spec", "values", "meshConfig", "trustDomain")
	acctest.ApplyAsOperator(t, acctest.West, sailIstioGVR, obj)
	get := acctest.ObjectGetter(t, acctest.West, sailIstioGVR, "", name)
	config := func(keep bool) string {
		return acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_mesh_trust_domain" "this" {
  cluster              = "west"
  mesh                 = { kind = "istio_sail", name = %q }
  trust_domain         = %q
  trust_domain_aliases = ["cluster.local"]
  ca_address           = "cert-manager-istio-csr.cert-manager.svc:443"
  keep_on_destroy      = %t
}
`, name, td, keep)
	}
	kept := withFields(operatorSailFields, map[string]any{
		"spec.values.meshConfig.trustDomain":        td,
		"spec.values.meshConfig.trustDomainAliases": []any{"cluster.local"},
		"spec.values.global.caAddress":              "cert-manager-istio-csr.cert-manager.svc:443",
	})
	trustFields := []string{
		"spec.values.global.caAddress", "spec.values.meshConfig.trustDomain", "spec.values.meshConfig.trustDomainAliases",
	}

	w := newCLIWorkspace(t)
	t.Cleanup(func() {
		if out, code := acctest.Terraform(t, "terraform", w.dir, w.reattach, "destroy", "-auto-approve"); code != 0 {
			t.Errorf("cleanup: terraform destroy exited %d:\n%s", code, out)
		}
	})
	w.write(config(false))
	w.run("init")
	w.run("apply", "-auto-approve")
	out := w.run("plan", "-destroy")
	for _, want := range []string{
		"Warning: Mesh Reverts to cluster.local",
		fmt.Sprintf(`the mesh returns to its default trust domain "cluster.local" (from %q)`, td),
		"set keep_on_destroy = true and apply before destroying",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("destroy plan: want %q in the output:\n%s", want, out)
		}
	}

	w.write(config(true))
	w.run("apply", "-auto-approve")
	if out := w.run("plan", "-destroy"); strings.Contains(out, "Mesh Reverts") {
		t.Fatalf("destroy plan with keep_on_destroy = true warns:\n%s", out)
	}
	w.run("destroy", "-auto-approve")
	for _, check := range []func() error{
		func() error { return acctest.CheckObjectFields(t, get, kept)(nil) },
		func() error { return checkManagerFields(get, "zerotrust", nil) },
		func() error { return checkManagerFields(get, "zerotrust-kept", trustFields) },
	} {
		if err := check(); err != nil {
			t.Fatalf("after a destroy with keep_on_destroy = true: %v", err)
		}
	}

	// Adopted again with the same values: the provider's field manager
	// shares them with zerotrust-kept, no conflict. Its destroy without
	// keep_on_destroy warns and hands them all back.
	w.write(config(false))
	w.run("apply", "-auto-approve")
	if err := checkManagerFields(get, "zerotrust", trustFields); err != nil {
		t.Fatalf("after adopting the kept values: %v", err)
	}
	if out := w.run("plan", "-destroy"); !strings.Contains(out, "Warning: Mesh Reverts to cluster.local") {
		t.Fatalf("destroy plan of the adopting resource does not warn:\n%s", out)
	}
	w.run("destroy", "-auto-approve")
	for _, check := range []func() error{
		func() error {
			return acctest.CheckObjectFields(t, get, withFields(operatorSailFields, map[string]any{
				"spec.values.meshConfig.trustDomain":        nil,
				"spec.values.meshConfig.trustDomainAliases": nil,
				"spec.values.global.caAddress":              nil,
			}))(nil)
		},
		func() error { return checkManagerFields(get, "zerotrust", nil) },
		func() error { return checkManagerFields(get, "zerotrust-kept", nil) },
	} {
		if err := check(); err != nil {
			t.Fatalf("after a destroy without keep_on_destroy: %v", err)
		}
	}
}

// checkManagerFields checks that the field manager holds exactly the leaf
// fields want (dotted paths; nil: none), in Apply entries.
func checkManagerFields(get func() (*unstructured.Unstructured, error), manager string, want []string) error {
	obj, err := get()
	if err != nil {
		return err
	}
	var got []string
	for _, m := range obj.GetManagedFields() {
		if m.Manager != manager || m.FieldsV1 == nil {
			continue
		}
		if m.Operation != metav1.ManagedFieldsOperationApply {
			return fmt.Errorf("%s: field manager %q has a %s entry, want only Apply", obj.GetName(), manager, m.Operation)
		}
		var fields map[string]any
		if err := json.Unmarshal(m.FieldsV1.Raw, &fields); err != nil {
			return err
		}
		got = append(got, fieldsV1Leaves(fields, "")...)
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s: field manager %q holds %v, want %v", obj.GetName(), manager, got, want)
	}
	return nil
}
