package datasources

import (
	"errors"
	"testing"
	"time"
)

// TestFederationStatusMermaid draws a fleet of four clusters, one of which
// does not answer, with each kind of edge: a working federation, a broken
// one, one whose SPIRE server was not asked, a carried bundle, and a trust
// domain no checked cluster is of.
func TestFederationStatusMermaid(t *testing.T) {
	now := time.Now()
	east, west := "east.example.org", "west.example.org"
	held := fsBundle(west, fsCA(t, west, now.Add(-time.Hour), now.Add(time.Hour)))
	ep := &fsEndpoint{URL: "https://w:8443", Profile: "https_spiffe", EndpointID: "spiffe://" + west + "/spire/server"}
	r := fsReport{
		Nodes: []fsNode{
			{Key: "east", Name: "east", TrustDomain: east, Checked: true},
			{Key: "north", Name: "north", Checked: false},
			{Key: "south", Name: "south", Checked: true},
			{Key: "west", Name: `west "blue"`, TrustDomain: west, Checked: true},
		},
		Entries: []fsEntry{
			{ClusterKey: "east", TrustDomain: west, Asked: true, CFTDs: []fsCFTD{{Name: west}}, Relationship: ep, Held: held},
			{ClusterKey: "east", TrustDomain: "partner.test", Asked: true, Carried: true, Held: held},
			{ClusterKey: "south", TrustDomain: west, Problems: []string{"cannot ask", "endpoint"}},
			{ClusterKey: "west", TrustDomain: east, Asked: true, CFTDs: []fsCFTD{{Name: east}}, Relationship: ep, Held: held,
				Endpoint: ep, EndpointErr: errors.New("refused"), Problems: []string{"endpoint down"}},
			{ClusterKey: "west", TrustDomain: "gone.test", Asked: true, Held: held, Problems: []string{"leftover"}},
		},
	}
	want := `flowchart LR
  %% A --> B: A federates with (trusts) B; the label is the federation's health.
  c0["east<br/>east.example.org"]
  c1["north<br/>not checked"]
  c2["south"]
  c3["west #quot;blue#quot;<br/>west.example.org"]
  c0 -->|"ok"| c3
  t0(["partner.test"])
  c0 -->|"carried, ok"| t0
  c2 -->|"SPIRE not asked +1"| c3
  c3 -->|"endpoint down"| c0
  t1(["gone.test"])
  c3 -->|"leftover bundle"| t1
  linkStyle 0 stroke:#2da44e
  linkStyle 1 stroke:#2da44e
  linkStyle 2 stroke:#8c959f,stroke-dasharray:4 4
  linkStyle 3 stroke:#cf222e,stroke-width:2px
  linkStyle 4 stroke:#cf222e,stroke-width:2px
  classDef unchecked stroke-dasharray:4 4,color:#8c959f
  class c1 unchecked
`
	if got := r.mermaid(); got != want {
		t.Errorf("mermaid:\n%s\nwant:\n%s", got, want)
	}
	if got := (fsReport{}).mermaid(); got != "flowchart LR\n  %% A --> B: A federates with (trusts) B; the label is the federation's health.\n" {
		t.Errorf("an empty fleet draws %q", got)
	}
}

// TestFederationStatusEdgeHealth: each kind of problem labels its edge with
// the first thing wrong, in the order the problems are found.
func TestFederationStatusEdgeHealth(t *testing.T) {
	held := fsBundle("w.test")
	ep := &fsEndpoint{URL: "https://w"}
	cftd := []fsCFTD{{Name: "w.test"}}
	one := []string{"p"}
	for _, c := range []struct {
		name string
		e    fsEntry
		want string
	}{
		{"no bundle", fsEntry{Asked: true, CFTDs: cftd, Relationship: ep, Problems: one}, "no bundle"},
		{"no relationship", fsEntry{Asked: true, CFTDs: cftd, Held: held, Problems: one}, "no relationship"},
		{"endpoint down", fsEntry{Asked: true, CFTDs: cftd, Relationship: ep, Held: held, Endpoint: ep, EndpointErr: errors.New("x"), Problems: one}, "endpoint down"},
		{"endpoint differs", fsEntry{Asked: true, CFTDs: cftd, Relationship: ep, Held: held, Served: fsBundle("w.test", fsCA(t, "w.test", time.Now(), time.Now().Add(time.Hour))), Problems: one}, "endpoint differs"},
		{"carried behind", fsEntry{Asked: true, Carried: true, Held: held, Peer: &fsCarriedFinding{Comparison: peerBehind}, Problems: one}, "carried, behind its peer"},
		{"other", fsEntry{Asked: true, CFTDs: cftd, Relationship: ep, Held: held, Problems: []string{"a", "b", "c"}}, "problem +2"},
	} {
		if got, _ := c.e.health(); got != c.want {
			t.Errorf("%s: label %q, want %q", c.name, got, c.want)
		}
	}
}
