package resources

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// This file stays apart from istio_csr_plan.go: it is one self-contained
// mechanism (the plan modifier of every unset Optional+Computed attribute,
// fed by the field ownership recorded in private state), used by the schema
// and the CRUD methods alike and tested on its own (istio_csr_unset_unit_test.go).
//
// Attributes whose IstioCSR field the CRD defaults (or, for server, that
// another field manager may have set) are Optional+Computed without a
// provider default. The provider sends them only when they are configured,
// so an object someone else created keeps its values and imports with an
// empty plan, and the API server, not the provider, fills in the defaults.
// What an unset attribute will hold after the apply depends on who owns the
// field (server-side apply):
//   - a new object, or a field the object lacks: the CRD default (none for
//     server, which stays absent);
//   - a field this provider alone applied: the apply releases it, the API
//     server removes it and defaults it again, so the CRD default;
//   - a field another manager owns, or nobody (filled in by defaulting):
//     unchanged;
//   - a list or object this provider and another manager both hold parts
//     of: only the API server knows what remains, so unknown.
// Which fields this provider owns, alone or with others, is read from
// managedFields whenever the object is read, and kept in the resource's
// private state.
// Optional attributes without a CRD default work the same way, with null
// as the default, so a field another tool set is neither planned away nor
// claimed.

// istioCSRReleasable lists the fields an unset attribute may release.
var istioCSRReleasable = []string{
	"istioCSRConfig.logLevel",
	"istioCSRConfig.logFormat",
	"istioCSRConfig.istioDataPlaneNamespaceSelector",
	"istioCSRConfig.certManager.istioCACertificate",
	"istioCSRConfig.istiodTLSConfig.commonName",
	"istioCSRConfig.istiodTLSConfig.certificateDNSNames",
	"istioCSRConfig.istiodTLSConfig.certificateDuration",
	"istioCSRConfig.istiodTLSConfig.certificateRenewBefore",
	"istioCSRConfig.istiodTLSConfig.maxCertificateDuration",
	"istioCSRConfig.istiodTLSConfig.privateKeyAlgorithm",
	"istioCSRConfig.istiodTLSConfig.privateKeySize",
	"istioCSRConfig.server",
	"istioCSRConfig.server.clusterID",
	"istioCSRConfig.server.port",
	"istioCSRConfig.istio.revisions",
	"istioCSRConfig.resources",
	"istioCSRConfig.affinity",
	"istioCSRConfig.tolerations",
	"istioCSRConfig.nodeSelector",
	"controllerConfig",
}

// istioCSRFieldOwnership is the ownership record of obj: which releasable
// fields manager applied, and which of those another manager holds too.
func istioCSRFieldOwnership(obj *unstructured.Unstructured, manager string) ownershipRecord {
	paths := make(map[string][]string, len(istioCSRReleasable))
	for _, field := range istioCSRReleasable {
		paths[field] = append([]string{"spec"}, strings.Split(field, ".")...)
	}
	return recordOwnership(obj, applier(manager), istioCSRReleasable, paths)
}

// unsetIstioCSRField plans an Optional+Computed attribute the configuration
// leaves unset (see the comment at the top of the file).
type unsetIstioCSRField struct {
	// field is the object's field under spec; "" for a value the provider
	// always sends (so it is never released).
	field string
	// composite: the field is a list, map or object, which this provider and
	// another manager may each hold parts of.
	composite bool
	// def is what a new object gets: the CRD default, the provider's own
	// value where the CRD has none but its rules need one, or nil (null).
	def attr.Value
}

func (u unsetIstioCSRField) Description(context.Context) string {
	def := "nothing"
	if u.def != nil {
		def = u.def.String()
	}
	return fmt.Sprintf("Unset, a new object gets %s; an existing one keeps its value unless this provider set it.", def)
}

func (u unsetIstioCSRField) MarkdownDescription(ctx context.Context) string {
	return u.Description(ctx)
}

// unsetPlan is what an unset attribute is planned as.
type unsetPlan int

const (
	unsetConfigured unsetPlan = iota // configured: the plan stays as it is
	unsetDefault                     // def (null when def is nil)
	unsetState                       // the prior state value
	unsetUnknown                     // known only after the apply
)

func (u unsetIstioCSRField) decide(ctx context.Context, configNull bool, state attr.Value, private privateGetter) (unsetPlan, diag.Diagnostics) {
	if !configNull {
		return unsetConfigured, nil
	}
	if state == nil || state.IsNull() || state.IsUnknown() {
		return unsetDefault, nil
	}
	if u.field == "" || (u.def != nil && state.Equal(u.def)) {
		return unsetState, nil
	}
	owned, diags, err := readOwnership(ctx, private)
	if err != nil {
		// Written by an older provider and not refreshed since: whether the
		// apply releases the field is not known, so neither is the value.
		return unsetUnknown, diags
	}
	switch {
	case owned.releases(u.field):
		return unsetDefault, diags
	case u.composite && owned.held(u.field):
		return unsetUnknown, diags
	}
	return unsetState, diags
}

// planUnset plans one attribute of value type V as decide chooses; def and
// unknown are its default (null when it has none) and unknown values.
func planUnset[V attr.Value](ctx context.Context, u unsetIstioCSRField, configNull bool, state V, private privateGetter,
	def, unknown V, planned *V, diags *diag.Diagnostics,
) {
	choice, d := u.decide(ctx, configNull, state, private)
	diags.Append(d...)
	switch choice {
	case unsetDefault:
		*planned = def
	case unsetState:
		*planned = state
	case unsetUnknown:
		*planned = unknown
	}
}

func (u unsetIstioCSRField) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	def, ok := u.def.(types.String)
	if !ok {
		def = types.StringNull()
	}
	planUnset(ctx, u, req.ConfigValue.IsNull(), req.StateValue, req.Private, def, types.StringUnknown(), &resp.PlanValue, &resp.Diagnostics)
}

func (u unsetIstioCSRField) PlanModifyInt64(ctx context.Context, req planmodifier.Int64Request, resp *planmodifier.Int64Response) {
	if req.Plan.Raw.IsNull() {
		return
	}
	def, ok := u.def.(types.Int64)
	if !ok {
		def = types.Int64Null()
	}
	planUnset(ctx, u, req.ConfigValue.IsNull(), req.StateValue, req.Private, def, types.Int64Unknown(), &resp.PlanValue, &resp.Diagnostics)
}

func (u unsetIstioCSRField) PlanModifyList(ctx context.Context, req planmodifier.ListRequest, resp *planmodifier.ListResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	elem := req.PlanValue.ElementType(ctx)
	def, ok := u.def.(types.List)
	if !ok {
		def = types.ListNull(elem)
	}
	planUnset(ctx, u, req.ConfigValue.IsNull(), req.StateValue, req.Private, def, types.ListUnknown(elem), &resp.PlanValue, &resp.Diagnostics)
}

func (u unsetIstioCSRField) PlanModifyMap(ctx context.Context, req planmodifier.MapRequest, resp *planmodifier.MapResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	elem := req.PlanValue.ElementType(ctx)
	planUnset(ctx, u, req.ConfigValue.IsNull(), req.StateValue, req.Private, types.MapNull(elem), types.MapUnknown(elem),
		&resp.PlanValue, &resp.Diagnostics)
}

func (u unsetIstioCSRField) PlanModifyObject(ctx context.Context, req planmodifier.ObjectRequest, resp *planmodifier.ObjectResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	attrTypes := req.PlanValue.AttributeTypes(ctx)
	planUnset(ctx, u, req.ConfigValue.IsNull(), req.StateValue, req.Private, types.ObjectNull(attrTypes), types.ObjectUnknown(attrTypes),
		&resp.PlanValue, &resp.Diagnostics)
}

// setIstioCSRPrivate records who owns the releasable fields of obj, and
// drops the plan-only key istioCSRPrivateReplaces.
func setIstioCSRPrivate(ctx context.Context, private privateSetter, obj *unstructured.Unstructured, manager string) diag.Diagnostics {
	diags := writeOwnership(ctx, private, istioCSRFieldOwnership(obj, manager))
	diags.Append(private.SetKey(ctx, istioCSRPrivateReplaces, nil)...)
	return diags
}

func unsetString(field, def string) unsetIstioCSRField {
	return unsetIstioCSRField{field: field, def: types.StringValue(def)}
}

func unsetInt64(field string, def int64) unsetIstioCSRField {
	return unsetIstioCSRField{field: field, def: types.Int64Value(def)}
}

// unsetOptional plans an attribute whose field the CRD does not default:
// unset, a new object lacks it.
func unsetOptional(field string, composite bool) unsetIstioCSRField {
	return unsetIstioCSRField{field: field, composite: composite}
}

// istioCSRUnsetOptionalText says what an unset attribute without a CRD
// default holds.
const istioCSRUnsetOptionalText = "Unset, a new object has none, and an existing object keeps what another tool set " +
	"(this provider removes only what it set itself)."

// istioCSRUnsetText says what an unset attribute with a CRD default holds.
func istioCSRUnsetText(def string) string {
	return "Unset, the API server's CRD default " + def + " applies to a new object, and an existing object keeps its " +
		"value (set by another tool or by the default) unless only this provider had set it; the provider never sends " +
		"the default itself."
}
