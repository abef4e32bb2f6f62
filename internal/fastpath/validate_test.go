package fastpath

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

func TestNewValidationPlainSchema(t *testing.T) {
	ctx := t.Context()
	if why := NewValidation(ctx, shortcutSchema(ctx, nil, nil)).Why; why != "" {
		t.Fatalf("plain schema refused: %s", why)
	}
}

// TestNewValidationRefusals: every schema feature whose checks the walk does
// not run makes it refuse the whole type, so that the framework checks it.
func TestNewValidationRefusals(t *testing.T) {
	ctx := t.Context()
	for name, tc := range map[string]struct {
		attr  schema.Attribute // added as "odd"
		block schema.Block     // added as "odd"
	}{
		"write-only":             {attr: schema.StringAttribute{WriteOnly: true, Optional: true}},
		"deprecated":             {attr: schema.StringAttribute{Optional: true, DeprecationMessage: "use x"}},
		"no mode":                {attr: schema.StringAttribute{}},
		"type that validates":    {attr: schema.StringAttribute{Optional: true, CustomType: jsontypes.NormalizedType{}}},
		"element that validates": {attr: schema.ListAttribute{Optional: true, ElementType: jsontypes.NormalizedType{}}},
		"nested type that validates": {attr: schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
			"x": schema.StringAttribute{Optional: true, CustomType: jsontypes.NormalizedType{}}}}},
		"nested deprecated": {attr: schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
			"x": schema.StringAttribute{Optional: true, DeprecationMessage: "use y"}}}},
		"float64 attribute": {attr: schema.Float64Attribute{Optional: true}},
		"list nested attribute": {attr: schema.ListNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{
			Attributes: map[string]schema.Attribute{"x": schema.StringAttribute{Optional: true}}}}},
		"list nested block": {block: schema.ListNestedBlock{NestedObject: schema.NestedBlockObject{
			Attributes: map[string]schema.Attribute{"x": schema.StringAttribute{Optional: true}}}}},
		"deprecated block": {block: schema.SingleNestedBlock{DeprecationMessage: "gone",
			Attributes: map[string]schema.Attribute{"x": schema.StringAttribute{Optional: true}}}},
		"block in a block": {block: schema.SingleNestedBlock{Blocks: map[string]schema.Block{"inner": schema.SingleNestedBlock{
			Attributes: map[string]schema.Attribute{"x": schema.StringAttribute{Optional: true}}}}}},
		"block with a write-only attribute": {block: schema.SingleNestedBlock{Attributes: map[string]schema.Attribute{
			"x": schema.StringAttribute{Optional: true, WriteOnly: true}}}},
		"block with a map of JSON": {block: schema.SingleNestedBlock{Attributes: map[string]schema.Attribute{
			"x": schema.MapAttribute{Optional: true, ElementType: jsontypes.NormalizedType{}}}}},
	} {
		t.Run(name, func(t *testing.T) {
			s := shortcutSchema(ctx, nil, nil)
			if tc.attr != nil {
				s.Attributes["odd"] = tc.attr
			} else {
				s.Blocks["odd"] = tc.block
			}
			why := NewValidation(ctx, s).Why
			if why == "" {
				t.Fatal("accepted")
			}
			if !strings.Contains(why, `"odd"`) {
				t.Errorf("Why = %q, want it to name %q", why, "odd")
			}
		})
	}
	s := shortcutSchema(ctx, nil, nil)
	s.DeprecationMessage = "whole resource"
	if NewValidation(ctx, s).Why == "" {
		t.Error("deprecated schema accepted")
	}
}
