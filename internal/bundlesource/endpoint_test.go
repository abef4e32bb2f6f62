package bundlesource_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
)

// standaloneSpire starts a real SPIRE server with only its bundle endpoint
// (no cluster), stopped when tb ends.
func standaloneSpire(tb testing.TB, td string, web bool) *harness.Spire {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := harness.StartSpire(ctx, nil, harness.SpireOptions{TrustDomain: td, Standalone: true, WebProfile: web})
	if err != nil {
		tb.Fatalf("starting SPIRE %s: %v", td, err)
	}
	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Errorf("stopping SPIRE %s: %v", td, err)
		}
	})
	return s
}

// endpointFor returns an Endpoint source for s, bootstrapped from `bundle show`.
func endpointFor(tb testing.TB, s *harness.Spire) (bundlesource.Endpoint, spiffeid.TrustDomain) {
	tb.Helper()
	td := spiffeid.RequireTrustDomainFromString(s.TrustDomain)
	if s.WebCACertPEM != nil {
		roots, err := bundlesource.ParseCertificates(string(s.WebCACertPEM))
		if err != nil {
			tb.Fatal(err)
		}
		return bundlesource.Endpoint{URL: s.BundleEndpointURL, Profile: spireexec.ProfileHTTPSWeb, Roots: roots}, td
	}
	shown, err := s.BundleShow(context.Background(), "spiffe")
	if err != nil {
		tb.Fatal(err)
	}
	bootstrap, err := trustbundle.Parse(td, shown)
	if err != nil {
		tb.Fatal(err)
	}
	return bundlesource.Endpoint{
		URL: s.BundleEndpointURL, Profile: spireexec.ProfileHTTPSSPIFFE,
		EndpointID: spiffeid.RequireFromString(s.EndpointSPIFFEID), Bootstrap: bootstrap,
	}, td
}

func TestAccEndpointAgainstSpire(t *testing.T) {
	ctx := context.Background()
	spiffeServer := standaloneSpire(t, "spiffe.endpoint.test", false)
	webServer := standaloneSpire(t, "web.endpoint.test", true)

	src, td := endpointFor(t, spiffeServer)
	b, err := bundlesource.Read(ctx, src, td, 10*time.Second)
	if err != nil {
		t.Fatalf("https_spiffe: %v", err)
	}
	if got, want := trustbundle.X509AuthoritiesPEM(b), trustbundle.X509AuthoritiesPEM(src.Bootstrap); got != want {
		t.Fatalf("https_spiffe endpoint serves other authorities than `bundle show`")
	}

	// The endpoint is not the server the ID names: refused at every attempt.
	wrong := src
	wrong.EndpointID = spiffeid.RequireFromString("spiffe://spiffe.endpoint.test/not-the-server")
	if _, err := bundlesource.Read(ctx, wrong, td, 600*time.Millisecond); err == nil {
		t.Fatalf("https_spiffe with a wrong endpoint SPIFFE ID succeeded")
	} else {
		t.Logf("wrong endpoint ID: %v", err)
	}

	// IsUnknownAuthority tells a bundle that no longer authenticates the
	// endpoint (the peer's CA changed) from other refusals: the bundle of
	// another server of the same trust domain, a wrong endpoint ID, nothing
	// listening.
	other := standaloneSpire(t, "spiffe.endpoint.test", false)
	otherSrc, _ := endpointFor(t, other)
	stale := src
	stale.Bootstrap = otherSrc.Bootstrap
	_, err = stale.Fetch(ctx, td)
	if !bundlesource.IsUnknownAuthority(err) {
		t.Errorf("fetch with another CA's bundle: IsUnknownAuthority(%v) = false", err)
	}
	_, err = wrong.Fetch(ctx, td)
	if err == nil || bundlesource.IsUnknownAuthority(err) {
		t.Errorf("fetch with a wrong endpoint ID: IsUnknownAuthority(%v) = true", err)
	}
	down := src
	down.URL = "https://127.0.0.1:1"
	_, err = down.Fetch(ctx, td)
	if err == nil || bundlesource.IsUnknownAuthority(err) {
		t.Errorf("fetch from nothing: IsUnknownAuthority(%v) = true", err)
	}

	web, webTD := endpointFor(t, webServer)
	if _, err := bundlesource.Read(ctx, web, webTD, 10*time.Second); err != nil {
		t.Fatalf("https_web with the test CA: %v", err)
	}
	// With system roots the test CA is unknown.
	web.Roots = nil
	if _, err := bundlesource.Read(ctx, web, webTD, 600*time.Millisecond); err == nil {
		t.Fatalf("https_web with system roots trusted the test CA")
	}
}

// BenchmarkFetchBundle measures one fetch from a real SPIRE bundle endpoint
// (TLS handshake, authentication, JSON parse), per profile.
func BenchmarkFetchBundle(b *testing.B) {
	for _, profile := range []string{spireexec.ProfileHTTPSSPIFFE, spireexec.ProfileHTTPSWeb} {
		b.Run(profile, func(b *testing.B) {
			web := profile == spireexec.ProfileHTTPSWeb
			s := standaloneSpire(b, "bench-"+strings.ReplaceAll(profile, "_", "-")+".test", web)
			src, td := endpointFor(b, s)
			ctx := context.Background()
			b.ReportAllocs()
			// Each fetch is timed too, so the run reports its p50 and p99
			// next to testing.B's mean (bench/ reads them).
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := src.Fetch(ctx, td); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2]), "p50-ns")
			b.ReportMetric(float64(took[(len(took)*99)/100]), "p99-ns")
		})
	}
}
