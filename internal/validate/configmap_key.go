package validate

import (
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ConfigMapKey accepts a key of a ConfigMap's data, as the API server does:
// at most 253 letters, digits, '-', '_' and '.', and not "." or "..".
func ConfigMapKey() validator.String {
	return dnsNameValidator{
		summary: "Invalid ConfigMap Key",
		rule:    `a ConfigMap key: at most 253 letters, digits, dashes, underscores and dots, and not "." or ".."`,
		check:   validation.IsConfigMapKey,
	}
}
