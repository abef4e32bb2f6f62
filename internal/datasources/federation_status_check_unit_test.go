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

	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
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
		"c.test": {URL: "https://127.0.0.1:1/", Profile: spireexec.ProfileHTTPSSPIFFE, EndpointID: "spiffe://c.test/spire/server"},
		"d.test": {URL: "https://127.0.0.1:2/", Profile: spireexec.ProfileHTTPSWeb},
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
	endpoint := fsEndpoint{URL: "https://west:8443", Profile: spireexec.ProfileHTTPSSPIFFE, EndpointID: "spiffe://west.test/spire/server"}
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
	e := fsEndpoint{URL: "https://west", Profile: spireexec.ProfileHTTPSSPIFFE, EndpointID: "spiffe://west.test/spire/server"}
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

// fsPeerOf is a peer publishing b, whose active X.509 authority is active.
func fsPeerOf(b *spiffebundle.Bundle, active *x509.Certificate) fsPeer {
	return fsPeer{Cluster: "west", Own: spireexec.Own{Bundle: b, ActiveX509: fmt.Sprintf("%x", active.SubjectKeyId)}}
}

func TestCompareCarried(t *testing.T) {
	now := time.Now()
	active := fsCA(t, "west.test", now.Add(-time.Hour), now.Add(23*time.Hour))
	prepared := fsCA(t, "west.test", now, now.Add(24*time.Hour))
	revoked := fsCA(t, "west.test", now.Add(-2*time.Hour), now.Add(22*time.Hour))
	jwtKey := func() any {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return key.Public()
	}()
	withJWT := func(b *spiffebundle.Bundle) *spiffebundle.Bundle {
		c := b.Clone()
		if err := c.AddJWTAuthority("next", jwtKey); err != nil {
			t.Fatal(err)
		}
		return c
	}
	renumbered := fsBundle("west.test", prepared, active)
	renumbered.SetSequenceNumber(42)

	for _, tc := range []struct {
		name          string
		held, current *spiffebundle.Bundle
		want          string
		missing       int
		dropped       int
	}{
		{name: "same authorities, other order and sequence number", held: renumbered,
			current: fsBundle("west.test", active, prepared), want: peerMatches},
		{name: "prepared X.509 authority", held: fsBundle("west.test", active),
			current: fsBundle("west.test", active, prepared), want: peerBehind, missing: 1},
		{name: "prepared JWT authority", held: fsBundle("west.test", active),
			current: withJWT(fsBundle("west.test", active)), want: peerBehind, missing: 1},
		{name: "revoked authority still held", held: fsBundle("west.test", revoked, active),
			current: fsBundle("west.test", active), want: peerDiffers, dropped: 1},
		{name: "revoked held and prepared missing", held: fsBundle("west.test", revoked, active),
			current: fsBundle("west.test", active, prepared), want: peerBehind, missing: 1, dropped: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := compareCarried(tc.held, fsPeerOf(tc.current, active), now)
			if f.Comparison != tc.want || len(f.Missing) != tc.missing || len(f.Dropped) != tc.dropped {
				t.Errorf("got %s, missing %q, dropped %q; want %s, %d missing, %d dropped",
					f.Comparison, f.Missing, f.Dropped, tc.want, tc.missing, tc.dropped)
			}
			if f.ActivatesAt == nil || f.PeerCluster != "west" {
				t.Errorf("activates at %v, peer %q", f.ActivatesAt, f.PeerCluster)
			}
		})
	}
}

func TestNextX509Activation(t *testing.T) {
	issued := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		ttl  time.Duration
		want time.Time
	}{
		// 5/6 of the lifetime up to 42 days.
		{name: "24h", ttl: 24 * time.Hour, want: issued.Add(20 * time.Hour)},
		{name: "42 days", ttl: 42 * 24 * time.Hour, want: issued.Add(35 * 24 * time.Hour)},
		// Above, 7 days before expiry.
		{name: "90 days", ttl: 90 * 24 * time.Hour, want: issued.Add(83 * 24 * time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// SPIRE signs the authority as valid from 10 seconds before it
			// issued it.
			ca := fsCA(t, "west.test", issued.Add(-caNotBeforeCushion), issued.Add(tc.ttl))
			got := nextX509Activation(fsPeerOf(fsBundle("west.test", ca), ca).Own)
			if got == nil || !got.Equal(tc.want) {
				t.Errorf("activation at %v, want %v", got, tc.want)
			}
		})
	}
	// An upstream authority's intermediate signs: the bundle holds the
	// root, not the active authority.
	root := fsCA(t, "west.test", issued, issued.Add(24*time.Hour))
	own := spireexec.Own{Bundle: fsBundle("west.test", root), ActiveX509: "0123"}
	if got := nextX509Activation(own); got != nil {
		t.Errorf("activation at %v for an authority not in the bundle", got)
	}
}

func TestCarriedProblems(t *testing.T) {
	now := time.Now().Truncate(time.Second) // certificates hold whole seconds
	// Issued an hour ago for 24 hours: activates the next one in 19 hours.
	active := fsCA(t, "west.test", now.Add(-time.Hour-caNotBeforeCushion), now.Add(23*time.Hour))
	prepared := fsCA(t, "west.test", now, now.Add(24*time.Hour))
	revoked := fsCA(t, "west.test", now.Add(-2*time.Hour), now.Add(22*time.Hour))
	server := spireexec.Server{Namespace: "spire", Pod: "spire-server-0", Container: "spire-server"}
	peers := fsPeers{ByTrustDomain: map[string]fsPeer{"west.test": fsPeerOf(fsBundle("west.test", active, prepared), active)}}
	for _, tc := range []struct {
		name  string
		held  *spiffebundle.Bundle
		peers fsPeers
		want  []string
		cmp   string // "" for no comparison
	}{
		{name: "matches", held: fsBundle("west.test", prepared, active), peers: peers, cmp: peerMatches},
		{name: "behind", held: fsBundle("west.test", active), peers: peers, cmp: peerBehind, want: []string{
			"the carried bundle is behind the one cluster west publishes, which adds " + trustbundle.Describe([]*x509.Certificate{prepared})[0],
			"the peer activates it at " + now.Add(19*time.Hour).UTC().Format(time.RFC3339) + " (in 19h0m0s): apply before then"}},
		{name: "revoked still trusted", held: fsBundle("west.test", revoked, active, prepared), peers: peers, cmp: peerDiffers,
			want: []string{"still trusts X.509 authorities cluster west revoked"}},
		{name: "no checked cluster is the peer", held: fsBundle("west.test", active), peers: fsPeers{}, cmp: peerNone},
		{name: "a cluster did not answer", held: fsBundle("west.test", active), peers: fsPeers{Unanswered: []string{"north"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := fsEntry{Cluster: "east", TrustDomain: "west.test", Asked: true, Carried: true, Held: tc.held}
			e.comparePeer(tc.peers, now)
			comparison := ""
			if e.Peer != nil {
				comparison = e.Peer.Comparison
			}
			if comparison != tc.cmp {
				t.Fatalf("comparison %q, want %q", comparison, tc.cmp)
			}
			got := e.problems(server, nil, now)
			if len(tc.want) == 0 {
				if len(got) != 0 {
					t.Errorf("problems = %q, want none", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("problems = %q, want one", got)
			}
			for _, w := range tc.want {
				if !strings.HasPrefix(got[0], "east: west.test: ") || !strings.Contains(got[0], w) {
					t.Errorf("problem = %q, want it to contain %q", got[0], w)
				}
			}
		})
	}
}

func TestParseOwn(t *testing.T) {
	now := time.Now()
	ca := fsCA(t, "b.test", now.Add(-time.Hour), now.Add(24*time.Hour))
	b, err := spireexec.ParseBundleShow(fmt.Appendf(nil, `{"jwt_authorities":[],"refresh_hint":"0","sequence_number":"3",`+
		`"trust_domain":"b.test","wit_authorities":[],"x509_authorities":[{"asn1":%q,"tainted":false}]}`,
		base64.StdEncoding.EncodeToString(ca.Raw)))
	if err != nil {
		t.Fatal(err)
	}
	if b.TrustDomain().Name() != "b.test" || len(b.X509Authorities()) != 1 {
		t.Fatalf("bundle of %s with %d X.509 authorities", b.TrustDomain(), len(b.X509Authorities()))
	}
	id := fmt.Sprintf("%x", ca.SubjectKeyId)
	var own spireexec.Own
	out := fmt.Sprintf(`{"active":{"authority_id":%q,"expires_at":"%d","upstream_authority_subject_key_id":""},`+
		`"prepared":{"authority_id":"abcd","expires_at":"1","upstream_authority_subject_key_id":""}}`, id, ca.NotAfter.Unix())
	if err := spireexec.ParseX509AuthorityShow([]byte(out), &own); err != nil {
		t.Fatal(err)
	}
	if own.ActiveX509 != id || !own.ActiveX509ExpiresAt.Equal(ca.NotAfter.Truncate(time.Second)) || own.PreparedX509 != "abcd" {
		t.Errorf("own = %+v", own)
	}
	if c := spireexec.X509Authority(b, id); c == nil || !c.Equal(ca) {
		t.Error("the active authority is not found in the bundle")
	}
}
