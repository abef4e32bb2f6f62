package validate

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// SpelledExactly accepts only the given values, letter case included, and
// says why (because) when a value differs from one of them only in case:
// some APIs compare case-insensitively where a later consumer does not (the
// IstioCSR's rules accept "clusterissuer", cert-manager's webhook refuses
// it), so the case-insensitive spelling would pass the API server and fail
// later.
func SpelledExactly(because string, values ...string) validator.String {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = fmt.Sprintf("%q", v)
	}
	rule := "exactly " + strings.Join(quoted, " or ") + ", in this letter case"
	return funcValidator{
		summary: "Invalid Spelling",
		rule:    rule,
		check: func(v string) []string {
			for _, want := range values {
				switch {
				case v == want:
					return nil
				case strings.EqualFold(v, want):
					return []string{fmt.Sprintf("write %q: %s", want, because)}
				}
			}
			return []string{"not one of the accepted values"}
		},
	}
}

// DurationAtLeast accepts a Go duration of at least minimum; because says
// who refuses a shorter one. Text that does not parse is left to Duration.
func DurationAtLeast(minimum time.Duration, because string) validator.String {
	return funcValidator{
		summary: "Duration Too Short",
		rule:    "a duration of at least " + shortDuration(minimum),
		check: func(v string) []string {
			d, err := time.ParseDuration(v)
			if err != nil || d >= minimum {
				return nil
			}
			return []string{fmt.Sprintf("%s is shorter than %s: %s", shortDuration(d), shortDuration(minimum), because)}
		},
	}
}

// shortDuration writes 1h0m0s as 1h and 5m0s as 5m.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
