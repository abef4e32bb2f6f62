package validate

import (
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
