package bundlesource_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
)

var td = spiffeid.RequireTrustDomainFromString("east.example.org")

// flaky fails with errs in turn, then returns a bundle.
type flaky struct {
	errs  []error
	calls atomic.Int32
}

func (f *flaky) String() string { return "the flaky source" }

func (f *flaky) Fetch(ctx context.Context, td spiffeid.TrustDomain) (*spiffebundle.Bundle, error) {
	n := int(f.calls.Add(1)) - 1
	if n < len(f.errs) {
		return nil, f.errs[n]
	}
	return spiffebundle.New(td), nil
}

func TestReadRetriesUntilSuccess(t *testing.T) {
	src := &flaky{errs: []error{errors.New("connection refused"), errors.New("connection refused")}}
	start := time.Now()
	b, err := bundlesource.Read(context.Background(), src, td, 10*time.Second)
	if err != nil || b == nil {
		t.Fatalf("Read: %v", err)
	}
	if got := src.calls.Load(); got != 3 {
		t.Fatalf("Fetch called %d times, want 3", got)
	}
	// Backoff 250ms then 500ms.
	if d := time.Since(start); d < 700*time.Millisecond || d > 5*time.Second {
		t.Fatalf("Read took %v, want about 750ms of backoff", d)
	}
}

func TestReadStopsAtPermanentError(t *testing.T) {
	src := &flaky{errs: []error{errors.New("refused"), bundlesource.Permanent(errors.New("not a bundle")), nil}}
	_, err := bundlesource.Read(context.Background(), src, td, 10*time.Second)
	if !bundlesource.IsPermanent(err) || err.Error() != "not a bundle" {
		t.Fatalf("Read error = %v, want the permanent error", err)
	}
	if got := src.calls.Load(); got != 2 {
		t.Fatalf("Fetch called %d times, want 2", got)
	}
}

func TestReadTimesOutWithLastError(t *testing.T) {
	errs := make([]error, 100)
	for i := range errs {
		errs[i] = fmt.Errorf("attempt %d: connection refused", i+1)
	}
	src := &flaky{errs: errs}
	start := time.Now()
	_, err := bundlesource.Read(context.Background(), src, td, 1200*time.Millisecond)
	elapsed := time.Since(start)
	var timeout *bundlesource.TimeoutError
	if !errors.As(err, &timeout) {
		t.Fatalf("Read error = %v, want *TimeoutError", err)
	}
	if elapsed < time.Second || elapsed > 3*time.Second {
		t.Fatalf("Read took %v with a 1.2s timeout", elapsed)
	}
	n := int(src.calls.Load())
	if timeout.Attempts != n || !strings.Contains(err.Error(), fmt.Sprintf("attempt %d: connection refused", n)) ||
		!strings.Contains(err.Error(), "the flaky source") {
		t.Fatalf("timeout error %q does not name the source and the last of %d attempts", err, n)
	}
}

// slow blocks each fetch until its context ends.
type slow struct{ calls atomic.Int32 }

func (s *slow) String() string { return "the slow source" }

func (s *slow) Fetch(ctx context.Context, _ spiffeid.TrustDomain) (*spiffebundle.Bundle, error) {
	n := s.calls.Add(1)
	if n == 1 {
		return nil, errors.New("connection refused")
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestReadReportsTheErrorBeforeTheDeadline(t *testing.T) {
	_, err := bundlesource.Read(context.Background(), &slow{}, td, 800*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Read error = %v, want the last error that was not the deadline", err)
	}
}

func TestDecode(t *testing.T) {
	now := time.Now()
	ca := bundletest.NewCA(t, td, now.Add(-time.Hour), now.Add(time.Hour))
	fromJSON, err := bundlesource.Decode(td, []byte(bundletest.BundleJSON(t, td, ca)))
	if err != nil {
		t.Fatalf("Decode JSON: %v", err)
	}
	fromPEM, err := bundlesource.Decode(td, append([]byte("\n"), bundletest.PEM(ca)...))
	if err != nil {
		t.Fatalf("Decode PEM: %v", err)
	}
	if a, b := trustbundle.X509AuthoritiesPEM(fromJSON), trustbundle.X509AuthoritiesPEM(fromPEM); a != b || a == "" {
		t.Fatalf("JSON and PEM decode to different authorities:\n%s\n%s", a, b)
	}
	if _, err := bundlesource.Decode(td, []byte("garbage")); err == nil {
		t.Fatalf("Decode of garbage succeeded")
	}
}

func TestParseCertificates(t *testing.T) {
	now := time.Now()
	ca := bundletest.NewCA(t, td, now.Add(-time.Hour), now.Add(time.Hour))
	pemData := string(bundletest.PEM(ca))
	if _, err := bundlesource.ParseCertificates("# comment\n" + pemData + pemData); err != nil {
		t.Fatalf("ParseCertificates: %v", err)
	}
	for name, tc := range map[string]struct{ data, want string }{
		"empty":     {"", "no PEM CERTIFICATE block"},
		"key":       {"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", `"PRIVATE KEY" block`},
		"truncated": {pemData + "-----BEGIN CERTIFICATE-----\nMIIB", "malformed or truncated"},
		"bad der":   {"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "not a valid X.509 certificate"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := bundlesource.ParseCertificates(tc.data); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseCertificates error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestEndpointNeedsAuthentication(t *testing.T) {
	_, err := bundlesource.Endpoint{URL: "https://127.0.0.1:1", Profile: spireexec.ProfileHTTPSSPIFFE}.Fetch(context.Background(), td)
	if !bundlesource.IsPermanent(err) {
		t.Fatalf("https_spiffe without bootstrap bundle: error %v, want a permanent error", err)
	}
}
