package datasources

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
)

// fsCA is a self-signed SPIRE-like CA of td valid from notBefore to notAfter.
func fsCA(t *testing.T, td string, notBefore, notAfter time.Time) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{Organization: []string{"SPIFFE"}},
		NotBefore: notBefore, NotAfter: notAfter, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		URIs:     []*url.URL{{Scheme: "spiffe", Host: td}},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func fsBundle(td string, certs ...*x509.Certificate) *spiffebundle.Bundle {
	return spiffebundle.FromX509Authorities(spiffeid.RequireTrustDomainFromString(td), certs)
}

// The outputs below have the shape spire-server v1.15.3 prints (protojson
// with proto names, unpopulated fields emitted, 64-bit integers quoted).
func TestParseFederationList(t *testing.T) {
	out := `{"federation_relationships":[{"bundle_endpoint_url":"https://127.0.0.1:1/","https_spiffe":{"endpoint_spiffe_id":"spiffe://c.test/spire/server"},"trust_domain":"c.test"},` +
		`{"bundle_endpoint_url":"https://127.0.0.1:2/","https_web":{},"trust_domain":"d.test"}],"next_page_token":""}`
	got, err := spireexec.ParseFederationList([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]fsEndpoint{
		"c.test": {URL: "https://127.0.0.1:1/", Profile: bundlesource.ProfileHTTPSSPIFFE, EndpointID: "spiffe://c.test/spire/server"},
		"d.test": {URL: "https://127.0.0.1:2/", Profile: bundlesource.ProfileHTTPSWeb},
	}
	if len(got) != len(want) || got["c.test"] != want["c.test"] || got["d.test"] != want["d.test"] {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := spireexec.ParseFederationList([]byte("Found 0 federation relationships")); err == nil {
		t.Error("pretty output parsed as JSON")
	}
}

func TestParseBundleList(t *testing.T) {
	now := time.Now()
	ca := fsCA(t, "b.test", now.Add(-time.Hour), now.Add(24*time.Hour))
	out := fmt.Sprintf(`{"bundles":[{"jwt_authorities":[{"expires_at":"0","key_id":"k","public_key":"AA==","tainted":false}],`+
		`"refresh_hint":"300","sequence_number":"7","trust_domain":"b.test","wit_authorities":[],`+
		`"x509_authorities":[{"asn1":%q,"tainted":false}]},`+
		`{"jwt_authorities":[],"refresh_hint":"0","sequence_number":"0","trust_domain":"c.test","wit_authorities":[],"x509_authorities":[]}]}`,
		base64.StdEncoding.EncodeToString(ca.Raw))
	got, err := spireexec.ParseBundleList([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	b := got["b.test"]
	if b == nil || len(b.X509Authorities()) != 1 || !b.X509Authorities()[0].Equal(ca) {
		t.Fatalf("b.test = %+v", b)
	}
	if hint, ok := b.RefreshHint(); !ok || hint != 5*time.Minute {
		t.Errorf("refresh hint = %v, %v", hint, ok)
	}
	if seq, ok := b.SequenceNumber(); !ok || seq != 7 {
		t.Errorf("sequence number = %v, %v", seq, ok)
	}
	if _, ok := got["c.test"].RefreshHint(); ok {
		t.Error("a zero refresh hint means none")
	}
}

func TestEntryProblems(t *testing.T) {
	now := time.Now()
	valid := fsBundle("west.test", fsCA(t, "west.test", now.Add(-time.Hour), now.Add(time.Hour)))
	rotated := fsBundle("west.test", fsCA(t, "west.test", now.Add(-time.Hour), now.Add(time.Hour)))
	expired := fsBundle("west.test", fsCA(t, "west.test", now.Add(-2*time.Hour), now.Add(-time.Hour)))
	endpoint := fsEndpoint{URL: "https://west:8443", Profile: bundlesource.ProfileHTTPSSPIFFE, EndpointID: "spiffe://west.test/spire/server"}
	cftd := fsCFTD{Name: "west-test", TrustDomain: "west.test", Endpoint: endpoint}
	server := spireexec.Server{Namespace: "spire", Pod: "spire-server-0", Container: "spire-server"}
	down := errors.New("connection refused")

	for _, tc := range []struct {
		name     string
		entry    fsEntry
		spireErr error
		want     []string // substrings, one per problem, in order
	}{
		{name: "healthy", entry: fsEntry{CFTDs: []fsCFTD{cftd}, Relationship: &endpoint, Held: valid, Endpoint: &endpoint, Served: valid}},
		{name: "declared, no relationship", entry: fsEntry{CFTDs: []fsCFTD{cftd}},
			want: []string{"SPIRE has no federation relationship (ClusterFederatedTrustDomain west-test exists; is spire-controller-manager running", "SPIRE does not hold the bundle"}},
		{name: "stale bundle", entry: fsEntry{Held: valid}, want: []string{"SPIRE still holds the bundle although no federation relationship"}},
		{name: "carried", entry: fsEntry{Carried: true, Held: valid}},
		{name: "carried, lost", entry: fsEntry{Carried: true}, want: []string{"SPIRE does not hold the bundle Terraform carries"}},
		{name: "carried and federated", entry: fsEntry{Carried: true, CFTDs: []fsCFTD{cftd}, Relationship: &endpoint, Held: valid},
			want: []string{"the two overwrite each other"}},
		{name: "relationship without object", entry: fsEntry{Relationship: &endpoint, Held: valid},
			want: []string{"no ClusterFederatedTrustDomain declares"}},
		{name: "endpoint moved", entry: fsEntry{CFTDs: []fsCFTD{{Name: "west-test", TrustDomain: "west.test", Endpoint: fsEndpoint{URL: "https://new:8443"}}},
			Relationship: &endpoint, Held: valid}, want: []string{"SPIRE fetches the bundle from https://west:8443 but ClusterFederatedTrustDomain west-test says https://new:8443"}},
		{name: "expired", entry: fsEntry{CFTDs: []fsCFTD{cftd}, Relationship: &endpoint, Held: expired}, want: []string{"cannot verify the peer's SVIDs"}},
		{name: "SPIRE down", entry: fsEntry{CFTDs: []fsCFTD{cftd}, Endpoint: &endpoint, Served: valid}, spireErr: down,
			want: []string{"cannot ask the SPIRE server (pod spire/spire-server-0, container spire-server): connection refused"}},
		{name: "endpoint down", entry: fsEntry{CFTDs: []fsCFTD{cftd}, Relationship: &endpoint, Held: valid, Endpoint: &endpoint, EndpointErr: down},
			want: []string{"the bundle endpoint https://west:8443 (https_spiffe, spiffe://west.test/spire/server) does not answer"}},
		{name: "endpoint differs", entry: fsEntry{CFTDs: []fsCFTD{cftd}, Relationship: &endpoint, Held: valid, Endpoint: &endpoint, Served: rotated},
			want: []string{"serves other X.509 authorities than SPIRE holds"}},
		{name: "two objects", entry: fsEntry{CFTDs: []fsCFTD{cftd, {Name: "west-2", TrustDomain: "west.test", Endpoint: endpoint}}, Relationship: &endpoint, Held: valid},
			want: []string{"several ClusterFederatedTrustDomains declare it (west-test, west-2)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.entry
			e.Cluster, e.TrustDomain, e.Asked = "east", "west.test", tc.spireErr == nil
			got := e.problems(server, tc.spireErr, now)
			if len(got) != len(tc.want) {
				t.Fatalf("problems = %q, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], "east: west.test: ") || !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

func TestEndpointAnchor(t *testing.T) {
	now := time.Now()
	held := fsBundle("west.test", fsCA(t, "west.test", now.Add(-time.Hour), now.Add(time.Hour)))
	e := fsEndpoint{URL: "https://west", Profile: bundlesource.ProfileHTTPSSPIFFE, EndpointID: "spiffe://west.test/spire/server"}
	if got := endpointAnchor(e, map[string]*spiffebundle.Bundle{"west.test": held}, nil); got != held {
		t.Error("the bundle SPIRE holds is the anchor")
	}
	doc, err := held.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got := endpointAnchor(e, nil, &fsCFTD{TrustDomain: "west.test", Bundle: string(doc)})
	if got == nil || !slices.EqualFunc(got.X509Authorities(), held.X509Authorities(), (*x509.Certificate).Equal) {
		t.Error("without a held bundle, the object's bootstrap bundle is the anchor")
	}
	if endpointAnchor(e, nil, &fsCFTD{TrustDomain: "west.test"}) != nil {
		t.Error("nothing to authenticate with")
	}
}
