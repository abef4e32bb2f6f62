package validate

import (
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"unicode"
	"unicode/utf8"
)

// capitalize turns an error text, which Go writes in lower case, into the
// start of a sentence for a diagnostic detail.
func capitalize(text string) string {
	first, size := utf8.DecodeRuneInString(text)
	if first == utf8.RuneError {
		return text
	}
	return string(unicode.ToUpper(first)) + text[size:]
}

// AttributeError names the attribute in the detail too: Terraform points
// at the attribute's line only for top-level attributes, and inside an object
// value (a nested attribute) it can only show the enclosing block.
func AttributeError(diags *diag.Diagnostics, p path.Path, summary, detail string) {
	diags.AddAttributeError(p, summary, "Attribute "+p.String()+": "+detail)
}

// AttributeWarning is AttributeError's twin for warnings.
func AttributeWarning(diags *diag.Diagnostics, p path.Path, summary, detail string) {
	diags.AddAttributeWarning(p, summary, "Attribute "+p.String()+": "+detail)
}
