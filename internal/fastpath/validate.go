package fastpath

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Validation is a resource schema's configuration checks, walked the way
// the framework walks them in ValidateResourceConfig (v1.19,
// fwserver.SchemaValidate, AttributeValidate, BlockValidate): per attribute
// the read-only and required checks, then the schema's own validators with
// the same requests, then the nested attributes of a known object; per
// single nested block its validators and its attributes, null or unknown
// with the block. It runs the schema's validators themselves, never a copy
// of their rules, and it only ever says "valid": a configuration with any
// diagnostic, error or warning, goes to the framework, which then says
// what is wrong in its own words.
//
// Why: the framework's walk asks the schema for the type at every
// attribute path (copying the attribute map each time) and decodes the
// configuration through reflection; at N = 1000 it was a fifth of the
// provider's CPU in a plan (bench/REPORT.md, "Provider CPU").
//
// A schema with anything whose checks this walk does not run (types that
// validate themselves, deprecations, write-only attributes, nesting other
// than single, attribute types without validators handled here) gets a
// Validation that refuses every request: Why says why.
type Validation struct {
	schema schema.Schema
	typ    tftypes.Object
	Why    string
	recent *Recent // set by New; nil decodes every configuration
}

// NewValidation reads s once.
func NewValidation(ctx context.Context, s schema.Schema) *Validation {
	typ, _ := s.Type().TerraformType(ctx).(tftypes.Object)
	v := &Validation{schema: s, typ: typ}
	if s.GetDeprecationMessage() != "" {
		v.Why = "a deprecated schema is not modelled"
		return v
	}
	for name, a := range s.Attributes {
		if why := checkAttribute(ctx, a); why != "" {
			v.Why = fmt.Sprintf("attribute %q: %s", name, why)
			return v
		}
	}
	for name, b := range s.Blocks {
		if why := checkBlock(ctx, b); why != "" {
			v.Why = fmt.Sprintf("block %q: %s", name, why)
			return v
		}
	}
	return v
}

func checkAttribute(ctx context.Context, a schema.Attribute) string {
	switch {
	case a.IsWriteOnly():
		return "write-only attributes are not modelled"
	case a.GetDeprecationMessage() != "":
		return "deprecated attributes are not modelled"
	case !a.IsRequired() && !a.IsOptional() && !a.IsComputed():
		return "neither required, optional nor computed"
	}
	if why := validatesItself(ctx, a.GetType()); why != "" {
		return why
	}
	switch a := a.(type) {
	case schema.StringAttribute, schema.BoolAttribute, schema.Int64Attribute,
		schema.ListAttribute, schema.SetAttribute, schema.MapAttribute:
		return ""
	case schema.SingleNestedAttribute:
		for n, nested := range a.Attributes {
			if why := checkAttribute(ctx, nested); why != "" {
				return fmt.Sprintf("attribute %q: %s", n, why)
			}
		}
		return ""
	}
	return "attributes of this type are not modelled"
}

func checkBlock(ctx context.Context, b schema.Block) string {
	single, ok := b.(schema.SingleNestedBlock)
	switch {
	case !ok:
		return "only single nested blocks are modelled"
	case single.DeprecationMessage != "":
		return "deprecated blocks are not modelled"
	case len(single.Blocks) > 0:
		return "nested blocks are not modelled"
	}
	if why := validatesItself(ctx, single.Type()); why != "" {
		return why
	}
	for n, a := range single.Attributes {
		if why := checkAttribute(ctx, a); why != "" {
			return fmt.Sprintf("attribute %q: %s", n, why)
		}
	}
	return ""
}

// validatesItself refuses types whose values the framework checks when it
// reads them from the configuration (fwschemadata.Data.ValueAtPath), at any
// depth.
func validatesItself(ctx context.Context, t attr.Type) string {
	_, byValue := t.ValueType(ctx).(xattr.ValidateableAttribute)
	_, byType := t.(xattr.TypeWithValidate) //nolint:staticcheck // the framework still runs the deprecated interface, so it must be refused
	if byValue || byType {
		return "types that validate their values are not modelled"
	}
	if o, ok := t.(attr.TypeWithAttributeTypes); ok {
		for _, at := range o.AttributeTypes() {
			if why := validatesItself(ctx, at); why != "" {
				return why
			}
		}
	}
	if e, ok := t.(attr.TypeWithElementType); ok {
		return validatesItself(ctx, e.ElementType())
	}
	return ""
}

// Valid reports whether the framework would find nothing to say about the
// configuration req carries: false for a configuration that does not
// decode, has a diagnostic, or that v refuses. r is a new instance of the
// resource type, which the framework also configures with the provider's
// resource data (providerData) and asks for its ConfigValidators and
// ValidateConfig (fwserver.ValidateResourceConfig).
func (v *Validation) Valid(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest, r resource.Resource, providerData any) bool {
	if v.Why != "" || req.Config == nil {
		return false
	}
	raw, err := v.recent.Unmarshal(req.Config, v.typ)
	if err != nil {
		return false
	}
	if c, ok := r.(resource.ResourceWithConfigure); ok {
		var resp resource.ConfigureResponse
		c.Configure(ctx, resource.ConfigureRequest{ProviderData: providerData}, &resp)
		if len(resp.Diagnostics) > 0 {
			return false
		}
	}
	config := tfsdk.Config{Schema: v.schema, Raw: raw}
	vreq := resource.ValidateConfigRequest{Config: config, ClientCapabilities: resource.ValidateConfigClientCapabilities{
		WriteOnlyAttributesAllowed: req.ClientCapabilities != nil && req.ClientCapabilities.WriteOnlyAttributesAllowed}}
	if cv, ok := r.(resource.ResourceWithConfigValidators); ok {
		for _, check := range cv.ConfigValidators(ctx) {
			var resp resource.ValidateConfigResponse
			check.ValidateResource(ctx, vreq, &resp)
			if len(resp.Diagnostics) > 0 {
				return false
			}
		}
	}
	if vc, ok := r.(resource.ResourceWithValidateConfig); ok {
		var resp resource.ValidateConfigResponse
		vc.ValidateConfig(ctx, vreq, &resp)
		if len(resp.Diagnostics) > 0 {
			return false
		}
	}
	var attrs map[string]tftypes.Value
	if raw.IsNull() || !raw.IsKnown() || raw.As(&attrs) != nil {
		return false
	}
	w := walk{ctx: ctx, config: config, caps: validator.ValidateSchemaClientCapabilities{
		WriteOnlyAttributesAllowed: vreq.ClientCapabilities.WriteOnlyAttributesAllowed}}
	for name, a := range v.schema.Attributes {
		if !w.attribute(a, attrs[name], path.Root(name), path.MatchRoot(name)) {
			return false
		}
	}
	for name, b := range v.schema.Blocks {
		single, _ := b.(schema.SingleNestedBlock) // NewValidation admits no other
		if !w.block(single, attrs[name], path.Root(name), path.MatchRoot(name)) {
			return false
		}
	}
	return true
}

type walk struct {
	ctx    context.Context
	config tfsdk.Config
	caps   validator.ValidateSchemaClientCapabilities
}

// attribute is AttributeValidate for one attribute whose configuration
// value is raw (a null or unknown parent makes it null or unknown).
func (w walk) attribute(a schema.Attribute, raw tftypes.Value, p path.Path, e path.Expression) bool {
	if a.IsComputed() && !a.IsOptional() && !raw.IsNull() || a.IsRequired() && raw.IsNull() {
		return false
	}
	value, err := a.GetType().ValueFromTerraform(w.ctx, raw)
	if err != nil {
		return false
	}
	switch a := a.(type) {
	case schema.StringAttribute:
		return w.strings(a.Validators, value, p, e)
	case schema.BoolAttribute:
		return w.bools(a.Validators, value, p, e)
	case schema.Int64Attribute:
		return w.int64s(a.Validators, value, p, e)
	case schema.ListAttribute:
		return w.lists(a.Validators, value, p, e)
	case schema.SetAttribute:
		return w.sets(a.Validators, value, p, e)
	case schema.MapAttribute:
		return w.maps(a.Validators, value, p, e)
	case schema.SingleNestedAttribute:
		// The framework runs these validators twice, the second time as the
		// nested object's (SingleNestedAttribute.GetNestedObject) when the
		// object is known; once tells whether they have anything to say.
		if !w.objects(a.Validators, value, p, e) {
			return false
		}
		return raw.IsNull() || !raw.IsKnown() || w.children(a.Attributes, raw, p, e)
	}
	return false
}

// block is BlockValidate for a single nested block: its validators (which
// the framework runs a second time as its nested object's, see attribute)
// and its attributes, also when the block is null or unknown.
func (w walk) block(b schema.SingleNestedBlock, raw tftypes.Value, p path.Path, e path.Expression) bool {
	value, err := b.Type().ValueFromTerraform(w.ctx, raw)
	if err != nil {
		return false
	}
	return w.objects(b.Validators, value, p, e) && w.children(b.Attributes, raw, p, e)
}

func (w walk) children(attributes map[string]schema.Attribute, raw tftypes.Value, p path.Path, e path.Expression) bool {
	var attrs map[string]tftypes.Value
	if raw.IsKnown() && !raw.IsNull() && raw.As(&attrs) != nil {
		return false
	}
	for name, a := range attributes {
		child, ok := attrs[name]
		if !ok {
			t := a.GetType().TerraformType(w.ctx)
			if raw.IsKnown() {
				child = tftypes.NewValue(t, nil)
			} else {
				child = tftypes.NewValue(t, tftypes.UnknownValue)
			}
		}
		if !w.attribute(a, child, p.AtName(name), e.AtName(name)) {
			return false
		}
	}
	return true
}

func (w walk) strings(checks []validator.String, value attr.Value, p path.Path, e path.Expression) bool {
	v, ok := value.(basetypes.StringValuable)
	if !ok {
		return false
	}
	cv, d := v.ToStringValue(w.ctx)
	if len(d) > 0 {
		return false
	}
	for _, c := range checks {
		var resp validator.StringResponse
		c.ValidateString(w.ctx, validator.StringRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}, &resp)
		if len(resp.Diagnostics) > 0 {
			return false
		}
	}
	return true
}

func (w walk) bools(checks []validator.Bool, value attr.Value, p path.Path, e path.Expression) bool {
	v, ok := value.(basetypes.BoolValuable)
	if !ok {
		return false
	}
	cv, d := v.ToBoolValue(w.ctx)
	if len(d) > 0 {
		return false
	}
	for _, c := range checks {
		var resp validator.BoolResponse
		c.ValidateBool(w.ctx, validator.BoolRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}, &resp)
		if len(resp.Diagnostics) > 0 {
			return false
		}
	}
	return true
}

func (w walk) int64s(checks []validator.Int64, value attr.Value, p path.Path, e path.Expression) bool {
	v, ok := value.(basetypes.Int64Valuable)
	if !ok {
		return false
	}
	cv, d := v.ToInt64Value(w.ctx)
	if len(d) > 0 {
		return false
	}
	for _, c := range checks {
		var resp validator.Int64Response
		c.ValidateInt64(w.ctx, validator.Int64Request{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}, &resp)
		if len(resp.Diagnostics) > 0 {
			return false
		}
	}
	return true
}

func (w walk) lists(checks []validator.List, value attr.Value, p path.Path, e path.Expression) bool {
	v, ok := value.(basetypes.ListValuable)
	if !ok {
		return false
	}
	cv, d := v.ToListValue(w.ctx)
	if len(d) > 0 {
		return false
	}
	for _, c := range checks {
		var resp validator.ListResponse
		c.ValidateList(w.ctx, validator.ListRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}, &resp)
		if len(resp.Diagnostics) > 0 {
			return false
		}
	}
	return true
}

func (w walk) sets(checks []validator.Set, value attr.Value, p path.Path, e path.Expression) bool {
	v, ok := value.(basetypes.SetValuable)
	if !ok {
		return false
	}
	cv, d := v.ToSetValue(w.ctx)
	if len(d) > 0 {
		return false
	}
	for _, c := range checks {
		var resp validator.SetResponse
		c.ValidateSet(w.ctx, validator.SetRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}, &resp)
		if len(resp.Diagnostics) > 0 {
			return false
		}
	}
	return true
}

func (w walk) maps(checks []validator.Map, value attr.Value, p path.Path, e path.Expression) bool {
	v, ok := value.(basetypes.MapValuable)
	if !ok {
		return false
	}
	cv, d := v.ToMapValue(w.ctx)
	if len(d) > 0 {
		return false
	}
	for _, c := range checks {
		var resp validator.MapResponse
		c.ValidateMap(w.ctx, validator.MapRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}, &resp)
		if len(resp.Diagnostics) > 0 {
			return false
		}
	}
	return true
}

func (w walk) objects(checks []validator.Object, value attr.Value, p path.Path, e path.Expression) bool {
	v, ok := value.(basetypes.ObjectValuable)
	if !ok {
		return false
	}
	cv, d := v.ToObjectValue(w.ctx)
	if len(d) > 0 {
		return false
	}
	for _, c := range checks {
		var resp validator.ObjectResponse
		c.ValidateObject(w.ctx, validator.ObjectRequest{ClientCapabilities: w.caps, Config: w.config, ConfigValue: cv, Path: p, PathExpression: e}, &resp)
		if len(resp.Diagnostics) > 0 {
			return false
		}
	}
	return true
}
