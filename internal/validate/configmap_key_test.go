package validate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

func TestConfigMapKey(t *testing.T) {
	const summary = "Invalid ConfigMap Key"
	runValidatorCases(t, validate.ConfigMapKey(), map[string]validatorCase{
		"null":       {value: types.StringNull()},
		"pem":        {value: types.StringValue("bundle.crt")},
		"underscore": {value: types.StringValue("CA_Bundle.pem")},
		"slash":      {value: types.StringValue("a/b"), wantSummary: summary, wantDetail: []string{"a valid config key"}},
		"dot dot":    {value: types.StringValue(".."), wantSummary: summary},
		"too long":   {value: types.StringValue(strings.Repeat("k", 254)), wantSummary: summary, wantDetail: []string{"no more than 253"}},
		"empty":      {value: types.StringValue(""), wantSummary: summary},
	})
}

func TestConfigMapKeyDescription(t *testing.T) {
	ctx := context.Background()
	v := validate.ConfigMapKey()
	if !strings.HasPrefix(v.Description(ctx), "value must be ") || !strings.HasPrefix(v.MarkdownDescription(ctx), "value must be ") {
		t.Errorf("descriptions %q / %q do not read \"value must be ...\"", v.Description(ctx), v.MarkdownDescription(ctx))
	}
}
