package resources

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// Field ownership in one place: who wrote an object or a field of it (the
// two checks below, over managed_fields.go), and the private-state record of
// which fields this provider's field manager held at the last read or apply.
// A resource leaves an attribute's field out of its apply when the
// configuration leaves the attribute unset; server-side apply then releases
// the field if the provider held it, and leaves it to its owner otherwise.
// The record is what lets a plan tell the two apart without a read.

// owner selects managed-fields entries: those of managers, or with except
// every other one (the entries the rest does not select).
type owner struct {
	managers []string
	// applied: only server-side apply entries (operation Apply), not
	// Update ones (create, update, patch).
	applied bool
	// objectOnly: only entries of the object itself, not of a subresource
	// such as status.
	objectOnly bool
	// except inverts the selection: every entry the fields above do not
	// select.
	except bool
}

func (o owner) selects(e metav1.ManagedFieldsEntry) bool {
	mine := slices.Contains(o.managers, e.Manager) &&
		(!o.applied || e.Operation == metav1.ManagedFieldsOperationApply) &&
		(!o.objectOnly || e.Subresource == "")
	return mine != o.except
}

// wrote reports whether an entry o selects exists on obj: o wrote some part
// of the object.
func (o owner) wrote(obj *unstructured.Unstructured) bool {
	return slices.ContainsFunc(obj.GetManagedFields(), o.selects)
}

// others is the owner of every entry o does not select.
func (o owner) others() owner {
	o.except = !o.except
	return o
}

// holds reports whether an entry o selects holds any of the fields at paths
// (object keys from the root, as in ["spec", "className"]).
func (o owner) holds(obj *unstructured.Unstructured, paths ...[]string) bool {
	return o.holdsIn(obj.GetManagedFields(), paths...)
}

// holdsIn is holds over an object's managed fields.
func (o owner) holdsIn(entries []metav1.ManagedFieldsEntry, paths ...[]string) bool {
	return fieldsOwned(entries, o.selects, paths...)
}

// managerOf is the owner of whatever managers wrote, by any operation.
func managerOf(managers ...string) owner { return owner{managers: managers} }

// applier is the owner of what manager's server-side apply wrote.
func applier(manager string) owner { return owner{managers: []string{manager}, applied: true} }

// releaseFields gives back every field client's field manager holds on obj,
// by applying an object that holds none: a field no other manager holds is
// removed. It does nothing to an object the manager never wrote, where an
// empty apply is no no-op (the API server would record every field as
// "before-first-apply"), or one deleted meanwhile (the apply carries obj's
// UID as a precondition, so it cannot create one).
func releaseFields(ctx context.Context, client *kube.Client, kind kube.Kind, obj *unstructured.Unstructured) error {
	if !managerOf(client.FieldManager).wrote(obj) {
		return nil
	}
	release := &unstructured.Unstructured{Object: map[string]any{}}
	release.SetName(obj.GetName())
	release.SetNamespace(obj.GetNamespace())
	release.SetUID(obj.GetUID())
	if _, err := client.Apply(ctx, kind, release, false); err != nil && !kube.IsUIDMismatch(err) {
		return err
	}
	return nil
}

// ownershipKey is the private-state key of a resource's ownershipRecord.
const ownershipKey = "ownership"

// Keys and formats earlier provider versions kept the record under, one per
// resource; readOwnership still reads them, so state written then keeps
// planning as it did until the next refresh rewrites it under ownershipKey.
const (
	// istio_csr: {"sole": [fields], "shared": [fields]}.
	legacyIstioCSROwnershipKey = "field_ownership"
	// mesh_trust_domain: {"trust_domain": bool, "kuma_mesh": bool}.
	legacyMeshOwnershipKey = "owned_fields"
	// federated_trust_domain: "true" when the provider applied spec.className.
	legacyClassNameWrittenKey = "class_name_written"
)

// ownershipRecord lists the fields, each named as its resource chooses, that
// the provider's field manager held at the last read or apply.
type ownershipRecord struct {
	// Held: the fields the provider applied, alone or with other managers.
	Held []string `json:"held"`
	// Shared: the held fields (lists, maps, objects) another manager holds
	// parts of too, so that what remains after a release is the API
	// server's to say.
	Shared []string `json:"shared,omitempty"`
}

// held reports whether the provider held field.
func (r ownershipRecord) held(field string) bool { return slices.Contains(r.Held, field) }

// releases reports whether an apply without field releases all of it: the
// provider held it, and no other manager holds any part of it.
func (r ownershipRecord) releases(field string) bool {
	return r.held(field) && !slices.Contains(r.Shared, field)
}

// recordOwnership is the record of which of fields (name to path from the
// object's root, in the order given by names) o holds on obj, and which of
// those the other managers hold parts of too.
func recordOwnership(obj *unstructured.Unstructured, o owner, names []string, paths map[string][]string) ownershipRecord {
	rec := ownershipRecord{Held: []string{}}
	others := o.others()
	for _, name := range names {
		if !o.holds(obj, paths[name]) {
			continue
		}
		rec.Held = append(rec.Held, name)
		if others.holds(obj, paths[name]) {
			rec.Shared = append(rec.Shared, name)
		}
	}
	return rec
}

// value is the record as private state stores it.
func (r ownershipRecord) value() []byte {
	data, _ := json.Marshal(r)
	return data
}

// errNoOwnershipRecord: the private state holds no record, as for state
// written before the provider recorded ownership and not refreshed since.
var errNoOwnershipRecord = errors.New("no field ownership recorded")

// privateGetter and privateSetter are the parts of the framework's private
// state (whose type is internal to it) that plans read and responses write.
type (
	privateGetter interface {
		GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
	}
	privateSetter interface {
		SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
	}
)

// readOwnership reads the record, under ownershipKey or one of the legacy
// keys. err is errNoOwnershipRecord when there is none, or says why the one
// there does not decode; the record is then empty.
func readOwnership(ctx context.Context, private privateGetter) (ownershipRecord, diag.Diagnostics, error) {
	var diags diag.Diagnostics
	get := func(key string) []byte {
		v, d := private.GetKey(ctx, key)
		diags.Append(d...)
		return v
	}
	var rec ownershipRecord
	if raw := get(ownershipKey); len(raw) > 0 {
		if err := json.Unmarshal(raw, &rec); err != nil {
			return ownershipRecord{}, diags, err
		}
		return rec, diags, nil
	}
	if raw := get(legacyIstioCSROwnershipKey); len(raw) > 0 {
		var old struct{ Sole, Shared []string }
		if err := json.Unmarshal(raw, &old); err != nil {
			return ownershipRecord{}, diags, err
		}
		return ownershipRecord{Held: append(old.Sole, old.Shared...), Shared: old.Shared}, diags, nil
	}
	if raw := get(legacyMeshOwnershipKey); len(raw) > 0 {
		var old struct {
			TrustDomain bool `json:"trust_domain"`
			KumaMesh    bool `json:"kuma_mesh"`
		}
		if err := json.Unmarshal(raw, &old); err != nil {
			return ownershipRecord{}, diags, err
		}
		rec.Held = []string{}
		if old.TrustDomain {
			rec.Held = append(rec.Held, meshFieldTrustDomain)
		}
		if old.KumaMesh {
			rec.Held = append(rec.Held, meshFieldKumaMesh)
		}
		return rec, diags, nil
	}
	if raw := get(legacyClassNameWrittenKey); len(raw) > 0 {
		rec.Held = []string{}
		if string(raw) == "true" {
			rec.Held = append(rec.Held, federatedTrustDomainFieldClassName)
		}
		return rec, diags, nil
	}
	return ownershipRecord{}, diags, errNoOwnershipRecord
}

// writeOwnership stores the record under ownershipKey.
func writeOwnership(ctx context.Context, private privateSetter, rec ownershipRecord) diag.Diagnostics {
	return private.SetKey(ctx, ownershipKey, rec.value())
}

// Names of the optional fields in the ownership record of a mesh object:
// the resource writes each only when its attribute is configured. An
// attribute removed from the configuration releases a held field (its value
// after the apply is the operator's or absent), while a field never held
// only mirrors what another manager set and stays as it is.
const (
	meshFieldTrustDomain = "trust_domain"
	meshFieldKumaMesh    = "kuma_mesh"
)

// federatedTrustDomainFieldClassName names spec.className in the
// ownership record. An unset class_name means "the provider's
// spire.class_name" only on objects whose class the provider wrote (it
// created them, or class_name was set before); an object adopted with its
// own class, or with none, keeps it, so importing plans no change.
const federatedTrustDomainFieldClassName = "className"
