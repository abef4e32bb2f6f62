package bundlesource

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
)

// Published is a trust bundle that a SPIRE server's BundlePublisher
// (aws_s3, gcp_cloudstorage, azure_blob) writes to object storage, read
// over HTTPS as a peer's SPIRE reads it with the https_web profile: a plain
// GET of the object, verified with Web PKI. Bundles are public documents;
// the reader needs read access to the object, nothing else.
type Published struct {
	URL string
	// Roots verify the object store's certificate; nil means the system roots.
	Roots *x509.CertPool
}

// publishedMaxBytes bounds the object read: a SPIFFE bundle of a few
// authorities is a few kilobytes; anything far larger is not a bundle.
const publishedMaxBytes = 1 << 20

func (p Published) String() string { return "published bundle " + p.URL }

// Fetch implements Source. A store that does not answer or answers 5xx or
// 429 is an outage, retried by Read within its bound; a URL that is not
// https, a 4xx answer (403: no read access; 404: no such bucket or object)
// and an object that is not a SPIFFE bundle are permanent, named.
func (p Published) Fetch(ctx context.Context, td spiffeid.TrustDomain) (*spiffebundle.Bundle, error) {
	if err := PublishedURLProblem(p.URL); err != nil {
		return nil, Permanent(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return nil, Permanent(err)
	}
	transport, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return nil, Permanent(errors.New("the default HTTP transport is not an *http.Transport"))
	}
	transport = transport.Clone()
	transport.TLSClientConfig = &tls.Config{RootCAs: p.Roots, MinVersion: tls.VersionTLS12}
	defer transport.CloseIdleConnections()
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		var unknown x509.UnknownAuthorityError
		var hostname x509.HostnameError
		if errors.As(err, &unknown) || errors.As(err, &hostname) {
			return nil, Permanent(fmt.Errorf("the object store's certificate is not trusted for %s (give its CA in "+
				"ca_certificates for a private store): %w", p.URL, err))
		}
		return nil, fmt.Errorf("the object store does not answer: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, publishedMaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the object: %w", err)
	}
	if err := statusProblem(resp.StatusCode); err != nil {
		return nil, err
	}
	if len(body) > publishedMaxBytes {
		return nil, Permanent(fmt.Errorf("the object is larger than %d bytes, far more than a SPIFFE bundle", publishedMaxBytes))
	}
	if format := ObjectFormat(body); format != FormatSPIFFE {
		return nil, Permanent(fmt.Errorf("the object is %s, not a SPIFFE bundle: set the BundlePublisher's format to "+
			"\"spiffe\" (SPIRE's https_web profile reads SPIFFE bundles only)", format))
	}
	b, err := trustbundle.Parse(td, body)
	if err != nil {
		return nil, Permanent(fmt.Errorf("the object is not a valid SPIFFE bundle: %w", err))
	}
	return b, nil
}

// statusProblem is the error for an HTTP status other than 200 OK:
// permanent for 4xx other than 429, retried otherwise.
func statusProblem(code int) error {
	status := fmt.Sprintf("%d %s", code, http.StatusText(code))
	switch {
	case code == http.StatusOK:
		return nil
	case code == http.StatusForbidden || code == http.StatusUnauthorized:
		return Permanent(fmt.Errorf("the object store answered %s: the object is not readable without credentials; "+
			"grant public read on that one object (or serve it through a CDN), as peers' SPIRE servers read it "+
			"anonymously", status))
	case code == http.StatusNotFound:
		return Permanent(fmt.Errorf("the object store answered %s: no such bucket or object; check the URL against "+
			"zerotrust_spire_server's bundle_publishers (SPIRE publishes at start and at every bundle change, and logs "+
			"a failed publish)", status))
	case code == http.StatusTooManyRequests || code >= 500:
		return fmt.Errorf("the object store answered %s", status)
	}
	return Permanent(fmt.Errorf("the object store answered %s", status))
}

// Bundle formats a BundlePublisher writes (its `format`), as ObjectFormat
// tells them apart, and what is none of them.
const (
	FormatSPIFFE  = "spiffe"
	FormatPEM     = "PEM certificates (format \"pem\")"
	FormatJWKS    = "a JWK set without SPIFFE key uses (format \"jwks\")"
	FormatUnknown = "neither JSON nor PEM"
)

// ObjectFormat tells which format a published object is in. A SPIFFE
// bundle and a JWKS are both JWK sets; only the SPIFFE one marks its keys
// with a use (x509-svid, jwt-svid).
func ObjectFormat(data []byte) string {
	trimmed := bytes.TrimSpace(data)
	if bytes.HasPrefix(trimmed, []byte("-----BEGIN ")) {
		return FormatPEM
	}
	var doc struct {
		Keys []struct {
			Use string `json:"use"`
		} `json:"keys"`
	}
	if json.Unmarshal(trimmed, &doc) != nil {
		return FormatUnknown
	}
	for _, k := range doc.Keys {
		if k.Use != "" {
			return FormatSPIFFE
		}
	}
	if len(doc.Keys) > 0 {
		return FormatJWKS
	}
	// An empty key set: trustbundle.Check names what is missing.
	return FormatSPIFFE
}

// PublishedURLProblem says why rawURL cannot be a published bundle's URL:
// peers read it with https_web, over HTTPS only.
func PublishedURLProblem(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", rawURL, err)
	}
	if u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("%q is not an https:// URL with a host: peers read a published bundle with SPIRE's "+
			"https_web profile, over HTTPS only", rawURL)
	}
	return nil
}

// ObjectStore names the object storage service rawURL's host belongs to
// (Amazon S3, Google Cloud Storage, Azure Blob Storage), or "" for any
// other host. Such a host serves a Web PKI certificate of the cloud, never
// an X.509-SVID of a peer's SPIRE server.
func ObjectStore(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	switch {
	case host == "storage.googleapis.com" || strings.HasSuffix(host, ".storage.googleapis.com"):
		return "Google Cloud Storage"
	case strings.Contains(host, ".blob.core."):
		// blob.core.windows.net and the sovereign clouds' blob.core.* hosts.
		return "Azure Blob Storage"
	case (strings.HasSuffix(host, ".amazonaws.com") || strings.HasSuffix(host, ".amazonaws.com.cn")) &&
		(strings.HasPrefix(host, "s3.") || strings.HasPrefix(host, "s3-") || strings.Contains(host, ".s3.") ||
			strings.Contains(host, ".s3-")):
		return "Amazon S3"
	}
	return ""
}

// PublishedHTTPSSPIFFEProblem is the refusal of the https_spiffe profile for
// a bundle endpoint URL that is a published bundle; what says what the URL
// is, e.g. "an object in Amazon S3" (see ObjectStore).
func PublishedHTTPSSPIFFEProblem(rawURL, what string) string {
	return fmt.Sprintf("bundle_endpoint_url %s is %s. The https_spiffe profile authenticates the bundle endpoint by the X.509-SVID of the "+
		"peer's SPIRE server (endpoint_spiffe_id); an object store presents its own Web PKI certificate and cannot "+
		"present it, so SPIRE would never fetch the bundle. Use bundle_endpoint_profile.type = \"https_web\" without "+
		"endpoint_spiffe_id.", rawURL, what)
}
