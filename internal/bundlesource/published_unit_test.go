package bundlesource

import (
	"strings"
	"testing"
)

func TestObjectFormat(t *testing.T) {
	for name, tc := range map[string]struct{ data, want string }{
		"spiffe": {`{"keys":[{"use":"x509-svid","kty":"EC","x5c":["AA=="]}],"spiffe_sequence":3}`, FormatSPIFFE},
		"pem":    {"\n-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n", FormatPEM},
		"jwks":   {`{"keys":[{"kty":"EC","x5c":["AA=="]}]}`, FormatJWKS},
		"html":   {`<html>AccessDenied</html>`, FormatUnknown},
		"empty":  {`{"keys":[]}`, FormatSPIFFE},
	} {
		if got := ObjectFormat([]byte(tc.data)); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}

func TestObjectStore(t *testing.T) {
	for url, want := range map[string]string{
		"https://b.s3.eu-west-1.amazonaws.com/k":           "Amazon S3",
		"https://s3.amazonaws.com/b.with.dots/k":           "Amazon S3",
		"https://b.s3-us-west-2.amazonaws.com/k":           "Amazon S3",
		"https://s3.dualstack.us-east-1.amazonaws.com/b/k": "Amazon S3",
		"https://b.s3.cn-north-1.amazonaws.com.cn/k":       "Amazon S3",
		"https://storage.googleapis.com/b/o":               "Google Cloud Storage",
		"https://b.storage.googleapis.com/o":               "Google Cloud Storage",
		"https://acct.blob.core.windows.net/c/b":           "Azure Blob Storage",
		"https://acct.blob.core.usgovcloudapi.net/c/b":     "Azure Blob Storage",
		"https://spire.west.example.org:8443":              "",
		"https://ec2.us-east-1.amazonaws.com/":             "",
		"https://s3-bundles.example.org/k":                 "",
		"https://127.0.0.1:9000/lab/west.json":             "",
		"https://storage.googleapis.com.attacker.test/b/o": "",
	} {
		if got := ObjectStore(url); got != want {
			t.Errorf("ObjectStore(%q) = %q, want %q", url, got, want)
		}
	}
}

func TestStatusProblem(t *testing.T) {
	for code, tc := range map[int]struct {
		permanent bool
		holds     string
	}{
		403: {true, "public read"},
		401: {true, "without credentials"},
		404: {true, "no such bucket or object"},
		400: {true, "400 Bad Request"},
		429: {false, "429 Too Many Requests"},
		500: {false, "500 Internal Server Error"},
		503: {false, "503 Service Unavailable"},
	} {
		err := statusProblem(code)
		if err == nil || IsPermanent(err) != tc.permanent || !strings.Contains(err.Error(), tc.holds) {
			t.Errorf("%d: %v (permanent %v), want permanent %v holding %q", code, err, IsPermanent(err), tc.permanent, tc.holds)
		}
	}
	if err := statusProblem(200); err != nil {
		t.Errorf("200: %v", err)
	}
}

func TestPublishedURLProblem(t *testing.T) {
	for url, ok := range map[string]bool{
		"https://b.s3.amazonaws.com/k": true,
		"http://b.s3.amazonaws.com/k":  false,
		"s3://b/k":                     false,
		"https:///k":                   false,
	} {
		if err := PublishedURLProblem(url); (err == nil) != ok {
			t.Errorf("%q: %v", url, err)
		}
	}
}
