package trustbundle_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
)

var (
	td    = spiffeid.RequireTrustDomainFromString("east.example.org")
	other = spiffeid.RequireTrustDomainFromString("west.example.org")
	now   = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
)

func validCA(t *testing.T, trustDomain spiffeid.TrustDomain) *bundletest.CA {
	t.Helper()
	return bundletest.NewCA(t, trustDomain, now.Add(-time.Hour), now.Add(24*time.Hour))
}

func TestParse(t *testing.T) {
	ca := validCA(t, td)
	bundle, err := trustbundle.Parse(td, []byte("\n  "+bundletest.BundleJSON(t, td, ca)+"\n"))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if bundle.TrustDomain() != td {
		t.Errorf("trust domain = %q, want %q", bundle.TrustDomain(), td)
	}
	if got := bundle.X509Authorities(); len(got) != 1 || !got[0].Equal(ca.Cert) {
		t.Errorf("X.509 authorities = %d certificates, want the CA", len(got))
	}
}

func TestParseErrors(t *testing.T) {
	tests := map[string]struct {
		data string
		want string
	}{
		"empty":        {data: " \n", want: "empty"},
		"pem":          {data: string(bundletest.PEM(validCA(t, td))), want: "is PEM"},
		"not json":     {data: "{keys", want: "unable to parse JWKS"},
		"missing keys": {data: `{"spiffe_refresh_hint": 300}`, want: "no authorities found"},
		"two certificates in one key": {
			data: twoCertificateKey(t),
			want: "expected a single certificate",
		},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := trustbundle.Parse(td, []byte(test.data))
			if err == nil || !strings.Contains(err.Error(), test.want) {
				t.Fatalf("Parse error = %v, want one containing %q", err, test.want)
			}
		})
	}
}

func twoCertificateKey(t *testing.T) string {
	t.Helper()
	first, second := validCA(t, td), validCA(t, td)
	var document map[string]any
	if err := json.Unmarshal([]byte(bundletest.BundleJSON(t, td, first)), &document); err != nil {
		t.Fatal(err)
	}
	keys, _ := document["keys"].([]any)
	key, _ := keys[0].(map[string]any)
	chain, _ := key["x5c"].([]any)
	key["x5c"] = append(chain, base64DER(second))
	data, err := json.Marshal(document)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func base64DER(ca *bundletest.CA) string {
	return base64.StdEncoding.EncodeToString(ca.Cert.Raw)
}

func TestParsePEM(t *testing.T) {
	first, second := validCA(t, td), validCA(t, td)
	data := append([]byte("subject=first CA\n"), bundletest.PEM(first, second, first)...)
	bundle, err := trustbundle.ParsePEM(td, data)
	if err != nil {
		t.Fatalf("ParsePEM: %v", err)
	}
	got := bundle.X509Authorities()
	if len(got) != 2 || !got[0].Equal(first.Cert) || !got[1].Equal(second.Cert) {
		t.Fatalf("X.509 authorities: got %d, want the two distinct CAs in order", len(got))
	}
}

func TestParsePEMErrors(t *testing.T) {
	ca := validCA(t, td)
	certPEM := bundletest.PEM(ca)
	keyDER, err := x509.MarshalECPrivateKey(ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	garbled := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("not DER")})

	tests := map[string]struct {
		data []byte
		want string
	}{
		"empty":         {data: nil, want: "no CERTIFICATE block"},
		"text only":     {data: []byte("hello"), want: "no CERTIFICATE block"},
		"private key":   {data: append(slices.Clone(certPEM), keyPEM...), want: `PEM block 1 is a "EC PRIVATE KEY" block`},
		"not a cert":    {data: garbled, want: "PEM block 0 is not a valid X.509 certificate"},
		"truncated end": {data: append(slices.Clone(certPEM), certPEM[:len(certPEM)/2]...), want: "truncated"},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := trustbundle.ParsePEM(td, test.data)
			if err == nil || !strings.Contains(err.Error(), test.want) {
				t.Fatalf("ParsePEM error = %v, want one containing %q", err, test.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	valid := validCA(t, td)
	expired := bundletest.NewCA(t, td, now.Add(-48*time.Hour), now.Add(-time.Hour))
	future := bundletest.NewCA(t, td, now.Add(time.Hour), now.Add(48*time.Hour))
	foreign := validCA(t, other)
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}

	tests := map[string]struct {
		bundle       *spiffebundle.Bundle
		wantErr      []string
		wantWarnings []string
	}{
		"one valid authority": {
			bundle: x509Bundle(td, valid),
		},
		"valid and not yet valid": {
			bundle: x509Bundle(td, valid, future),
		},
		"expired next to a valid one warns": {
			bundle:       x509Bundle(td, expired, valid),
			wantWarnings: []string{"expired at " + expired.Cert.NotAfter.UTC().Format(time.RFC3339)},
		},
		"all expired": {
			bundle:  x509Bundle(td, expired),
			wantErr: []string{"no X.509 authority of the bundle is valid at 2026-06-01T12:00:00Z", "expired at"},
		},
		"expired and not yet valid": {
			bundle:  x509Bundle(td, expired, future),
			wantErr: []string{"no X.509 authority", "expired at", "is not valid before"},
		},
		"no x509 authority": {
			bundle:  spiffebundle.FromJWTAuthorities(td, map[string]crypto.PublicKey{"k1": ecKey.Public()}),
			wantErr: []string{"no X.509 authority (no key with use x509-svid)"},
		},
		"another trust domain": {
			bundle:  x509Bundle(td, foreign),
			wantErr: []string{`belongs to trust domain "west.example.org", not "east.example.org"`, "bundle of another trust domain"},
		},
		"bundle read for another trust domain": {
			bundle:  x509Bundle(other, valid),
			wantErr: []string{`read for trust domain "west.example.org"`},
		},
		"symmetric jwt key": {
			bundle:  withJWT(x509Bundle(td, valid), "hmac", []byte("secret")),
			wantErr: []string{`JWT authority "hmac" is not an RSA, ECDSA or Ed25519 public key`},
		},
		"asymmetric jwt key": {
			bundle: withJWT(x509Bundle(td, valid), "ec", ecKey.Public()),
		},
		"missing": {
			bundle:  nil,
			wantErr: []string{"missing"},
		},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			warnings, err := trustbundle.Check(td, test.bundle, now)
			if len(test.wantErr) == 0 && err != nil {
				t.Fatalf("Check error: %v", err)
			}
			for _, want := range test.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("Check error = %v, want one containing %q", err, want)
				}
			}
			if len(warnings) != len(test.wantWarnings) {
				t.Fatalf("Check warnings = %q, want %d", warnings, len(test.wantWarnings))
			}
			for i, want := range test.wantWarnings {
				if !strings.Contains(warnings[i], want) {
					t.Errorf("warning %d = %q, want it to contain %q", i, warnings[i], want)
				}
			}
		})
	}
}

func x509Bundle(trustDomain spiffeid.TrustDomain, cas ...*bundletest.CA) *spiffebundle.Bundle {
	bundle := spiffebundle.New(trustDomain)
	for _, ca := range cas {
		bundle.AddX509Authority(ca.Cert)
	}
	return bundle
}

func withJWT(bundle *spiffebundle.Bundle, keyID string, key any) *spiffebundle.Bundle {
	if err := bundle.AddJWTAuthority(keyID, key); err != nil {
		panic(err)
	}
	return bundle
}

// richBundle has several authorities of every kind, so the maps spiffebundle
// marshals from have enough entries for their iteration order to vary.
func richBundle(t *testing.T) *spiffebundle.Bundle {
	t.Helper()
	bundle := spiffebundle.New(td)
	for range 4 {
		bundle.AddX509Authority(validCA(t, td).Cert)
	}
	for _, keyID := range []string{"kid-c", "kid-a", "kid-e", "kid-b", "kid-d", "kid-f"} {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		withJWT(bundle, keyID, key.Public())
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	withJWT(bundle, "kid-rsa", rsaKey.Public())
	edKey, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	withJWT(bundle, "kid-ed25519", edKey)
	bundle.SetRefreshHint(5 * time.Minute)
	bundle.SetSequenceNumber(18446744073709551615)
	return bundle
}

func TestNormalizeIsDeterministic(t *testing.T) {
	bundle := richBundle(t)
	want, err := trustbundle.Normalize(bundle)
	if err != nil {
		t.Fatalf("Normalize: %v", err)
	}

	rawOrders := map[string]bool{}
	for range 200 {
		raw, err := bundle.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		rawOrders[string(raw)] = true

		// Round-trip through go-spiffe too: a bundle parsed from any of
		// Marshal's orders must normalise to the same text.
		reparsed, err := trustbundle.Parse(td, raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, candidate := range []*spiffebundle.Bundle{bundle, reparsed} {
			got, err := trustbundle.Normalize(candidate)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("Normalize is not deterministic:\n%s\n---\n%s", got, want)
			}
		}
	}
	if len(rawOrders) < 2 {
		t.Logf("go-spiffe's Marshal produced one order in 200 runs; the test proved less than it could")
	}
}

func TestNormalizeLayout(t *testing.T) {
	normalized, err := trustbundle.Normalize(richBundle(t))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(normalized, "\n") {
		t.Error("normalised text ends with a newline")
	}
	for _, want := range []string{`"spiffe_refresh_hint": 300`, `"spiffe_sequence": 18446744073709551615`} {
		if !strings.Contains(normalized, want) {
			t.Errorf("normalised text lacks %s", want)
		}
	}
	// Top-level members in sorted order.
	keysAt := strings.Index(normalized, `"keys"`)
	hintAt := strings.Index(normalized, `"spiffe_refresh_hint"`)
	sequenceAt := strings.Index(normalized, `"spiffe_sequence"`)
	if keysAt >= hintAt || hintAt >= sequenceAt {
		t.Errorf("top-level members out of order: keys@%d refresh_hint@%d sequence@%d", keysAt, hintAt, sequenceAt)
	}

	var document struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal([]byte(normalized), &document); err != nil {
		t.Fatal(err)
	}
	type sortKey struct{ use, kid, x5c string }
	var order []sortKey
	for _, raw := range document.Keys {
		var jwk struct {
			Use string   `json:"use"`
			Kid string   `json:"kid"`
			X5c []string `json:"x5c"`
		}
		if err := json.Unmarshal(raw, &jwk); err != nil {
			t.Fatal(err)
		}
		first := ""
		if len(jwk.X5c) > 0 {
			first = jwk.X5c[0]
		}
		order = append(order, sortKey{jwk.Use, jwk.Kid, first})
		assertMembersSorted(t, raw)
	}
	if len(order) != 12 {
		t.Fatalf("normalised bundle has %d keys, want 12", len(order))
	}
	sorted := slices.IsSortedFunc(order, func(a, b sortKey) int {
		return strings.Compare(a.use+"\x00"+a.kid+"\x00"+a.x5c, b.use+"\x00"+b.kid+"\x00"+b.x5c)
	})
	if !sorted {
		t.Errorf("keys are not sorted by (use, kid, x5c): %v", order)
	}
}

func assertMembersSorted(t *testing.T, raw json.RawMessage) {
	t.Helper()
	decoder := json.NewDecoder(bytes.NewReader(raw))
	if _, err := decoder.Token(); err != nil { // the opening brace
		t.Fatal(err)
	}
	var names []string
	for decoder.More() {
		name, err := decoder.Token()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, name.(string)) //nolint:forcetypeassert // object member names are strings
		var value json.RawMessage
		if err := decoder.Decode(&value); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("JWK members are not sorted: %v", names)
	}
}

func TestNormalizeEmptyBundleKeepsKeysArray(t *testing.T) {
	normalized, err := trustbundle.Normalize(spiffebundle.New(td))
	if err != nil {
		t.Fatal(err)
	}
	if normalized != "{\n  \"keys\": []\n}" {
		t.Errorf("Normalize(empty) = %q", normalized)
	}
}

func TestEqual(t *testing.T) {
	first, second := validCA(t, td), validCA(t, td)
	base := x509Bundle(td, first, second)
	base.SetRefreshHint(300 * time.Second)
	base.SetSequenceNumber(7)
	text := mustMarshal(t, base)

	reordered := x509Bundle(td, second, first)
	reordered.SetRefreshHint(300 * time.Second)
	reordered.SetSequenceNumber(7)

	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(mustNormalize(t, reordered))); err != nil {
		t.Fatal(err)
	}

	changedHint := base.Clone()
	changedHint.SetRefreshHint(600 * time.Second)
	changedSequence := base.Clone()
	changedSequence.SetSequenceNumber(8)
	rotated := base.Clone()
	rotated.AddX509Authority(validCA(t, td).Cert)

	tests := map[string]struct {
		a, b string
		want bool
	}{
		"identical":                   {a: text, b: text, want: true},
		"reordered and reformatted":   {a: text, b: compact.String(), want: true},
		"normalised":                  {a: mustNormalize(t, base), b: text, want: true},
		"refresh hint differs":        {a: text, b: mustMarshal(t, changedHint), want: false},
		"sequence differs":            {a: text, b: mustMarshal(t, changedSequence), want: false},
		"authority added":             {a: text, b: mustMarshal(t, rotated), want: false},
		"one side invalid":            {a: text, b: "{", want: false},
		"identical invalid text":      {a: "{", b: "{", want: true},
		"different invalid text":      {a: "{", b: "[", want: false},
		"duplicate authority ignored": {a: text, b: duplicateFirstKey(t, text), want: true},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			if got := trustbundle.Equal(test.a, test.b, td); got != test.want {
				t.Errorf("Equal = %v, want %v", got, test.want)
			}
		})
	}
}

func duplicateFirstKey(t *testing.T, text string) string {
	t.Helper()
	var document map[string]any
	if err := json.Unmarshal([]byte(text), &document); err != nil {
		t.Fatal(err)
	}
	keys, _ := document["keys"].([]any)
	document["keys"] = append(keys, keys[0])
	data, err := json.Marshal(document)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func mustMarshal(t *testing.T, bundle *spiffebundle.Bundle) string {
	t.Helper()
	data, err := bundle.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func mustNormalize(t *testing.T, bundle *spiffebundle.Bundle) string {
	t.Helper()
	text, err := trustbundle.Normalize(bundle)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

func TestSummary(t *testing.T) {
	older := bundletest.NewCA(t, td, now.Add(-2*time.Hour), now.Add(10*time.Hour))
	newer := bundletest.NewCA(t, td, now.Add(-time.Hour), now.Add(5*time.Hour))
	bundle := x509Bundle(td, newer, older)
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	withJWT(bundle, "jwt-1", ecKey.Public())

	t.Run("X509AuthoritiesPEM", func(t *testing.T) {
		want := string(bundletest.PEM(older, newer))
		if got := trustbundle.X509AuthoritiesPEM(bundle); got != want {
			t.Errorf("X509AuthoritiesPEM:\n%s\nwant oldest first:\n%s", got, want)
		}
	})

	t.Run("FingerprintsSHA256", func(t *testing.T) {
		var want []string
		for _, ca := range []*bundletest.CA{older, newer} {
			sum := sha256.Sum256(ca.Cert.Raw)
			want = append(want, hex.EncodeToString(sum[:]))
		}
		slices.Sort(want)
		if got := trustbundle.FingerprintsSHA256(bundle); !slices.Equal(got, want) {
			t.Errorf("FingerprintsSHA256 = %v, want %v", got, want)
		}
	})

	t.Run("EarliestExpiry", func(t *testing.T) {
		got, ok := trustbundle.EarliestExpiry(bundle)
		if !ok || !got.Equal(newer.Cert.NotAfter) {
			t.Errorf("EarliestExpiry = %v, %v; want %v, true", got, ok, newer.Cert.NotAfter)
		}
		if _, ok := trustbundle.EarliestExpiry(spiffebundle.New(td)); ok {
			t.Error("EarliestExpiry of an empty bundle reported a time")
		}
	})

	t.Run("JWTAuthorities", func(t *testing.T) {
		withJWT(bundle, "hmac", []byte("secret"))
		got := trustbundle.JWTAuthorities(bundle)
		if len(got) != 1 {
			t.Fatalf("JWTAuthorities = %v, want only jwt-1", got)
		}
		block, rest := pem.Decode([]byte(got["jwt-1"]))
		if block == nil || block.Type != "PUBLIC KEY" || len(rest) != 0 {
			t.Fatalf("jwt-1 is not one PUBLIC KEY block: %q", got["jwt-1"])
		}
		key, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if !ecKey.PublicKey.Equal(key) {
			t.Error("jwt-1 decodes to another key")
		}
	})
}

// TestSameAuthorities: order, sequence number and refresh hint do not
// count; an X.509 or JWT authority more, less or different does.
func TestSameAuthorities(t *testing.T) {
	a, b := validCA(t, td), validCA(t, td)
	key1, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key2, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	base := withJWT(x509Bundle(td, a, b), "k1", key1.Public())
	reordered := withJWT(x509Bundle(td, b, a), "k1", key1.Public())
	reordered.SetSequenceNumber(99)
	reordered.SetRefreshHint(time.Minute)
	for _, c := range []struct {
		name  string
		other *spiffebundle.Bundle
		want  bool
	}{
		{"reordered, other sequence and hint", reordered, true},
		{"an X.509 authority less", withJWT(x509Bundle(td, a), "k1", key1.Public()), false},
		{"another X.509 authority", withJWT(x509Bundle(td, a, validCA(t, td)), "k1", key1.Public()), false},
		{"no JWT authority", x509Bundle(td, a, b), false},
		{"another JWT key", withJWT(x509Bundle(td, a, b), "k1", key2.Public()), false},
		{"another JWT key ID", withJWT(x509Bundle(td, a, b), "k2", key1.Public()), false},
		{"nil", nil, false},
	} {
		if got := trustbundle.SameAuthorities(base, c.other); got != c.want {
			t.Errorf("%s: SameAuthorities = %v, want %v", c.name, got, c.want)
		}
	}
}
