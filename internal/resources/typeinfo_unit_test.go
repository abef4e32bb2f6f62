package resources

import (
	"strings"
	"testing"
)

// Every resource type's import ID form reads the IDs its documentation
// gives and refuses the malformed ones with an error naming what is wrong.
func TestImportIDForms(t *testing.T) {
	for _, tc := range []struct {
		t    interface{ info() *typeInfo }
		id   string
		want objectIdentity
		err  string
	}{
		{t: federatedTrustDomainType, id: "west.example.org", want: objectIdentity{Name: "west.example.org"}},
		{t: federatedTrustDomainType, id: "team/east/west.example.org", want: objectIdentity{Cluster: "team/east", Name: "west.example.org"}},
		{t: federatedTrustDomainType, id: "east/", err: "the name is empty"},
		{t: federatedTrustDomainType, id: "", err: "the name is empty"},
		{t: domainVerificationType, id: "east/apps", want: objectIdentity{Cluster: "east", Name: "apps"}},
		{t: istioCSRType, id: "istio-system", want: objectIdentity{Namespace: "istio-system", Name: "default"}},
		{t: istioCSRType, id: "east/istio-system", want: objectIdentity{Cluster: "east", Namespace: "istio-system", Name: "default"}},
		{t: istioCSRType, id: "east/", err: "the namespace is empty"},
		{t: spireFederationType, id: "cluster", want: objectIdentity{Name: "cluster"}},
		{t: spireFederationType, id: "east/cluster", want: objectIdentity{Cluster: "east", Name: "cluster"}},
		{t: spireFederationType, id: "east/other", err: `named "cluster"`},
		{t: meshServiceIdentitiesType, id: "cart", err: "the namespace is missing"},
		{t: meshServiceIdentitiesType, id: " /shop/cart", err: "the cluster key is empty"},
		{t: meshTrustDomainType, id: "east/istio_sail:mesh", want: objectIdentity{Cluster: "east", Kind: "istio_sail", Name: "mesh"}},
		{t: meshTrustDomainType, id: "east/linkerd:x", err: `the kind "linkerd"`},
	} {
		got, err := tc.t.info().importID.parse(tc.id)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s: parse(%q) = %+v, %v; want %+v", tc.t.info().name, tc.id, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: parse(%q) = %+v, %v; want an error with %q", tc.t.info().name, tc.id, got, err, tc.err)
		}
	}
}

// The accepted forms an invalid import ID's error names are the ones the
// docs give.
func TestImportIDFormDescriptions(t *testing.T) {
	for tt, want := range map[*typeInfo]string{
		federatedTrustDomainType.info():  `"<name>" (default connection) or "<cluster>/<name>"`,
		spireFederationType.info():       `"cluster" (default connection) or "<cluster>/cluster"`,
		istioCSRType.info():              `"<namespace>" (default connection) or "<cluster>/<namespace>": the namespace of the IstioCSR "default"`,
		meshServiceIdentitiesType.info(): `"<namespace>/<name>" (default connection) or "<cluster>/<namespace>/<name>", e.g. "west/shop/cart"`,
	} {
		if got := tt.importID.describe(); got != want {
			t.Errorf("%s: describe() = %s, want %s", tt.name, got, want)
		}
	}
}
