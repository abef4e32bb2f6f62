package trustbundle

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
)

// Normalize renders b as SPIFFE bundle JSON that depends only on the bundle's
// content: spiffebundle's Marshal walks Go maps, so its key order changes from
// call to call, and a Terraform attribute holding that text would show a diff
// on every refresh. Object members are sorted by name, the JWKs by (use, kid,
// first x5c entry), and the text is indented by two spaces.
func Normalize(b *spiffebundle.Bundle) (string, error) {
	if b == nil {
		return "", errors.New("the SPIFFE bundle is missing")
	}
	marshaled, err := b.Marshal()
	if err != nil {
		return "", fmt.Errorf("marshal the SPIFFE bundle: %w", err)
	}

	// Decoding into maps makes encoding/json write every object's members
	// sorted by name; UseNumber keeps spiffe_sequence, a uint64, exact.
	decoder := json.NewDecoder(bytes.NewReader(marshaled))
	decoder.UseNumber()
	var document map[string]any
	if err := decoder.Decode(&document); err != nil {
		return "", fmt.Errorf("decode the marshaled SPIFFE bundle: %w", err)
	}

	keys, _ := document["keys"].([]any)
	sortable := make([]map[string]any, 0, len(keys))
	for index, key := range keys {
		jwk, ok := key.(map[string]any)
		if !ok {
			return "", fmt.Errorf("key %d of the marshaled SPIFFE bundle is a %T, not a JSON object", index, key)
		}
		sortable = append(sortable, jwk)
	}
	slices.SortStableFunc(sortable, compareJWK)
	// An empty bundle must still say "keys": [], which the SPIFFE bundle
	// format requires, instead of the null that Marshal writes.
	document["keys"] = sortable

	var out bytes.Buffer
	encoder := json.NewEncoder(&out)
	encoder.SetEscapeHTML(false)
	encoder.SetIndent("", "  ")
	if err := encoder.Encode(document); err != nil {
		return "", fmt.Errorf("encode the SPIFFE bundle: %w", err)
	}
	return strings.TrimSuffix(out.String(), "\n"), nil
}

func compareJWK(a, b map[string]any) int {
	return cmp.Or(
		strings.Compare(stringMember(a, "use"), stringMember(b, "use")),
		strings.Compare(stringMember(a, "kid"), stringMember(b, "kid")),
		strings.Compare(firstCertificate(a), firstCertificate(b)),
	)
}

func stringMember(jwk map[string]any, name string) string {
	value, _ := jwk[name].(string)
	return value
}

func firstCertificate(jwk map[string]any) string {
	chain, _ := jwk["x5c"].([]any)
	if len(chain) == 0 {
		return ""
	}
	first, _ := chain[0].(string)
	return first
}

// Equal reports whether a and b are SPIFFE bundle JSON documents for td with
// the same authorities, refresh hint and sequence number, whatever their
// formatting or key order. Text that is not a valid bundle equals only
// identical text. It serves diff suppression, so it never fails.
func Equal(a, b string, td spiffeid.TrustDomain) bool {
	if a == b {
		return true
	}
	normalizedA, err := parseAndNormalize(td, a)
	if err != nil {
		return false
	}
	normalizedB, err := parseAndNormalize(td, b)
	if err != nil {
		return false
	}
	return normalizedA == normalizedB
}

// parseAndNormalize relies on Parse dropping duplicate authorities and keys of
// unknown use, so the normalised text holds exactly what SPIRE would keep.
func parseAndNormalize(td spiffeid.TrustDomain, document string) (string, error) {
	bundle, err := Parse(td, []byte(document))
	if err != nil {
		return "", err
	}
	return Normalize(bundle)
}
