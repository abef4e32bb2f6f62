package datasources

import (
	"context"
	"fmt"
	"strings"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
)

// fsNode is one checked cluster as the graph shows it.
type fsNode struct {
	Key, Name string
	// TrustDomain is the cluster's own trust domain as its SPIRE server
	// states it (`spire-server bundle show`); empty when SPIRE did not say.
	TrustDomain string
	// Checked is false for a cluster that did not answer at all.
	Checked bool
}

// ownTrustDomain asks the cluster's SPIRE server which trust domain it is
// of: the graph joins a federation to the checked cluster it points at by
// that, since a ClusterFederatedTrustDomain names a trust domain, never a
// cluster. Empty when SPIRE does not answer (the edge then points at the
// trust domain alone).
func ownTrustDomain(ctx context.Context, s spireexec.Server) string {
	out, err := s.Ask(ctx, spireexec.ShowBundleArgs...)
	if err != nil {
		return ""
	}
	b, err := spireexec.ParseBundleShow(out)
	if err != nil {
		return ""
	}
	return b.TrustDomain().Name()
}

// Edge colours of the graph: a working federation, one with problems, and
// one whose SPIRE server could not be asked.
const (
	fsGraphOK      = "stroke:#2da44e"
	fsGraphBroken  = "stroke:#cf222e,stroke-width:2px"
	fsGraphUnknown = "stroke:#8c959f,stroke-dasharray:4 4"
)

// mermaid draws the report as a Mermaid flowchart: every checked cluster a
// node (its name and trust domain), every federation an edge from the
// cluster that trusts to the cluster (or, when no checked cluster is of it,
// the trust domain) it trusts, labelled and coloured by its health. The
// order is the report's (clusters by key, then trust domain), so the same
// fleet in the same state draws the same text.
func (r fsReport) mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	b.WriteString("  %% A --> B: A federates with (trusts) B; the label is the federation's health.\n")
	ids := map[string]string{} // trust domain -> node id
	for i, n := range r.Nodes {
		id := fmt.Sprintf("c%d", i)
		label := mermaidText(n.Name)
		switch {
		case !n.Checked:
			label += "<br/>not checked"
		case n.TrustDomain != "":
			label += "<br/>" + mermaidText(n.TrustDomain)
			ids[n.TrustDomain] = id
		}
		fmt.Fprintf(&b, "  %s[\"%s\"]\n", id, label)
	}
	var unchecked []string
	for i, n := range r.Nodes {
		if !n.Checked {
			unchecked = append(unchecked, fmt.Sprintf("c%d", i))
		}
	}
	nodeOf := map[string]string{} // cluster key -> node id
	for i, n := range r.Nodes {
		nodeOf[n.Key] = fmt.Sprintf("c%d", i)
	}
	var styles []string
	peers := 0 // trust domains no checked cluster is of
	for _, e := range r.Entries {
		to, found := ids[e.TrustDomain]
		if !found {
			to = fmt.Sprintf("t%d", peers)
			peers++
			ids[e.TrustDomain] = to
			fmt.Fprintf(&b, "  %s([\"%s\"])\n", to, mermaidText(e.TrustDomain))
		}
		label, style := e.health()
		fmt.Fprintf(&b, "  %s -->|\"%s\"| %s\n", nodeOf[e.ClusterKey], label, to)
		styles = append(styles, style)
	}
	for i, s := range styles {
		fmt.Fprintf(&b, "  linkStyle %d %s\n", i, s)
	}
	if len(unchecked) > 0 {
		b.WriteString("  classDef unchecked stroke-dasharray:4 4,color:#8c959f\n")
		fmt.Fprintf(&b, "  class %s unchecked\n", strings.Join(unchecked, ","))
	}
	return b.String()
}

// health is the edge's label and style: "ok", or the first thing wrong (in
// the order the problems are found) and how many more there are.
func (e *fsEntry) health() (label, style string) {
	prefix := ""
	if e.Carried {
		prefix = "carried, "
	}
	if len(e.Problems) == 0 {
		return prefix + "ok", fsGraphOK
	}
	declared := len(e.CFTDs) > 0
	var what string
	style = fsGraphBroken
	switch {
	case !e.Asked:
		what, style = "SPIRE not asked", fsGraphUnknown
	case e.Held == nil:
		what = "no bundle"
	case !declared && e.Relationship == nil && !e.Carried:
		what = "leftover bundle"
	case declared && e.Relationship == nil:
		what = "no relationship"
	case e.EndpointErr != nil:
		what = "endpoint down"
	case e.Peer != nil && e.Peer.Comparison == peerBehind:
		what = "behind its peer"
	case e.EndpointMatches() != nil && !*e.EndpointMatches():
		what = "endpoint differs"
	default:
		what = "problem"
	}
	if more := len(e.Problems) - 1; more > 0 {
		what += fmt.Sprintf(" +%d", more)
	}
	return prefix + what, style
}

// mermaidText makes s safe inside a quoted Mermaid label: quotes and the
// characters Mermaid or Markdown would read are written as entities.
func mermaidText(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "|", "#124;").Replace(s)
}
