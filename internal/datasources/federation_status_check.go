package datasources

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
)

// fsCluster is one cluster to check.
type fsCluster struct {
	Key    string // kube.DefaultKey for the `kubernetes` connection
	Client *kube.Client
	Spire  spireexec.Server
	// Carried are the trust domains whose bundles Terraform carries into
	// this cluster's SPIRE server (carried_bundles).
	Carried []string
}

// fsEntry is the finding for one cluster and one federated trust domain.
type fsEntry struct {
	ClusterKey, Cluster string // key, and the name problems use
	TrustDomain         string
	CFTDs               []fsCFTD    // the objects declaring it, sorted by name
	Asked               bool        // SPIRE answered
	Carried             bool        // Terraform carries the bundle (carried_bundles)
	Relationship        *fsEndpoint // SPIRE's federation relationship
	Held                *spiffebundle.Bundle
	Endpoint            *fsEndpoint // the endpoint checked, if any
	EndpointErr         error
	Served              *spiffebundle.Bundle // what the endpoint served
	// Peer compares a carried bundle SPIRE holds with what its peer's own
	// SPIRE server publishes; nil when not carried, not held, or a checked
	// cluster that may be the peer did not answer.
	Peer     *fsCarriedFinding
	Problems []string
}

// fsReport is the finding for every checked cluster.
type fsReport struct {
	Entries   []fsEntry
	Workloads []fsWorkloads
	// Nodes are the clusters to check (answering or not), sorted by key.
	Nodes []fsNode
	// Problems of clusters that could not be checked at all.
	ClusterProblems []string
}

// checkFederations checks every cluster concurrently (each asks its SPIRE
// server and peers' endpoints, which are slow and independent) and returns
// the entries sorted by cluster key, then trust domain.
func checkFederations(ctx context.Context, clusters []fsCluster, checkEndpoints bool) fsReport {
	var peers fsPeers
	if slices.ContainsFunc(clusters, func(c fsCluster) bool { return len(c.Carried) > 0 }) {
		peers = askPeers(ctx, clusters)
	}
	reports := make([]fsReport, len(clusters))
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Go(func() { reports[i] = checkCluster(ctx, c, checkEndpoints, peers) })
	}
	wg.Wait()
	var all fsReport
	for _, r := range reports {
		all.Entries = append(all.Entries, r.Entries...)
		all.Workloads = append(all.Workloads, r.Workloads...)
		all.Nodes = append(all.Nodes, r.Nodes...)
		all.ClusterProblems = append(all.ClusterProblems, r.ClusterProblems...)
	}
	slices.SortFunc(all.Entries, func(a, b fsEntry) int {
		return cmp.Or(strings.Compare(a.ClusterKey, b.ClusterKey), strings.Compare(a.TrustDomain, b.TrustDomain))
	})
	slices.SortFunc(all.Nodes, func(a, b fsNode) int { return strings.Compare(a.Key, b.Key) })
	return all
}

// checkCluster gathers what the cluster declares and what its SPIRE server
// holds, compares carried bundles with peers, then checks the endpoints and
// names the problems.
func checkCluster(ctx context.Context, c fsCluster, checkEndpoints bool, peers fsPeers) fsReport {
	name := c.Client.DisplayName()
	report := fsReport{Nodes: []fsNode{{Key: c.Key, Name: name}}}
	// A cluster that does not answer at all costs one bounded request
	// (kube.PlanReachTimeout), not every check's retries.
	if err := c.Client.Reachable(ctx); err != nil {
		report.ClusterProblems = append(report.ClusterProblems, fmt.Sprintf("%s: not checked: %v", name, err))
		return report
	}
	report.Nodes[0].Checked = true
	cftds, err := listCFTDs(ctx, c.Client)
	if err != nil {
		report.ClusterProblems = append(report.ClusterProblems, fmt.Sprintf(
			"%s: cannot list its ClusterFederatedTrustDomains: %v", name, err))
	}
	view, spireErr := c.Spire.View(ctx)
	if spireErr == nil {
		report.Nodes[0].TrustDomain = ownTrustDomain(ctx, c.Spire)
	}
	entries := map[string]*fsEntry{}
	entry := func(td string) *fsEntry {
		if e := entries[td]; e != nil {
			return e
		}
		e := &fsEntry{ClusterKey: c.Key, Cluster: name, TrustDomain: td, Asked: spireErr == nil}
		entries[td] = e
		return e
	}
	for _, o := range cftds {
		e := entry(o.TrustDomain)
		e.CFTDs = append(e.CFTDs, o)
	}
	for _, td := range c.Carried {
		entry(td).Carried = true
	}
	if spireErr == nil {
		for td, rel := range view.Relationships {
			entry(td).Relationship = &rel
		}
		for td, b := range view.Bundles {
			entry(td).Held = b
		}
	} else if len(entries) == 0 {
		report.ClusterProblems = append(report.ClusterProblems, fmt.Sprintf(
			"%s: cannot ask the %s: %v", name, fsServerName(c.Spire), spireErr))
	}

	now := time.Now()
	for _, e := range entries {
		e.comparePeer(peers, now)
	}
	var wg sync.WaitGroup
	for _, e := range entries {
		if !checkEndpoints {
			continue
		}
		wg.Go(func() { e.checkEndpoint(ctx, view.Bundles) })
	}
	wg.Wait()
	for _, e := range entries {
		e.Problems = e.problems(c.Spire, spireErr, now)
		report.Entries = append(report.Entries, *e)
	}
	workloads, problems := checkWorkloads(ctx, c, view, spireErr)
	report.Workloads = workloads
	report.ClusterProblems = append(report.ClusterProblems, problems...)
	return report
}

// listCFTDs reads the cluster's ClusterFederatedTrustDomains; a cluster
// that does not serve the kind has none.
func listCFTDs(ctx context.Context, client *kube.Client) ([]fsCFTD, error) {
	objs, err := client.List(ctx, kube.ClusterFederatedTrustDomain, "")
	if err != nil {
		if served, serr := client.Served(ctx, kube.ClusterFederatedTrustDomain); serr == nil && !served {
			return nil, nil
		}
		return nil, err
	}
	out := make([]fsCFTD, 0, len(objs))
	for i := range objs {
		out = append(out, fsCFTDFromObject(&objs[i]))
	}
	slices.SortFunc(out, func(a, b fsCFTD) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// endpoint is the bundle endpoint of the federation: SPIRE's relationship
// (what SPIRE fetches from), else the first declaring object's.
func (e *fsEntry) endpoint() *fsEndpoint {
	if e.Relationship != nil {
		return e.Relationship
	}
	if len(e.CFTDs) > 0 {
		return &e.CFTDs[0].Endpoint
	}
	return nil
}

func (e *fsEntry) checkEndpoint(ctx context.Context, held map[string]*spiffebundle.Bundle) {
	ep := e.endpoint()
	td, err := spiffeid.TrustDomainFromString(e.TrustDomain)
	if ep == nil || err != nil || ep.URL == "" {
		return
	}
	var anchor *spiffebundle.Bundle
	if ep.Profile == spireexec.ProfileHTTPSSPIFFE {
		var cftd *fsCFTD
		if len(e.CFTDs) > 0 {
			cftd = &e.CFTDs[0]
		}
		if anchor = endpointAnchor(*ep, held, cftd); anchor == nil {
			return
		}
	}
	e.Endpoint = ep
	e.Served, e.EndpointErr = fetchEndpoint(ctx, td, *ep, anchor)
}

// comparePeer compares a carried bundle SPIRE holds with the bundle of the
// checked cluster whose SPIRE server is of the trust domain.
func (e *fsEntry) comparePeer(peers fsPeers, now time.Time) {
	if !e.Carried || e.Held == nil {
		return
	}
	peer, found := peers.ByTrustDomain[e.TrustDomain]
	switch {
	case found:
		f := compareCarried(e.Held, peer, now)
		e.Peer = &f
	case len(peers.Unanswered) == 0:
		e.Peer = &fsCarriedFinding{Comparison: peerNone}
	}
}

// EndpointOK is null (nil) when the endpoint was not checked.
func (e *fsEntry) EndpointOK() *bool {
	if e.Endpoint == nil {
		return nil
	}
	ok := e.EndpointErr == nil
	return &ok
}

// EndpointMatches is null (nil) unless the endpoint answered and SPIRE
// holds a bundle to compare with.
func (e *fsEntry) EndpointMatches() *bool {
	if e.Served == nil || e.Held == nil {
		return nil
	}
	same := sameX509Authorities(e.Served, e.Held)
	return &same
}

// problems names what is wrong, each sentence prefixed with the cluster and
// trust domain, in a fixed order.
func (e *fsEntry) problems(s spireexec.Server, spireErr error, now time.Time) []string {
	var out []string
	add := func(format string, args ...any) {
		out = append(out, fmt.Sprintf("%s: %s: ", e.Cluster, e.TrustDomain)+fmt.Sprintf(format, args...))
	}
	if len(e.CFTDs) > 1 {
		names := make([]string, len(e.CFTDs))
		for i, o := range e.CFTDs {
			names[i] = o.Name
		}
		add("several ClusterFederatedTrustDomains declare it (%s); spire-controller-manager acts on one of them only, so delete the others", strings.Join(names, ", "))
	}
	if spireErr != nil {
		add("cannot ask the %s: %v", fsServerName(s), spireErr)
	} else {
		e.spireProblems(now, add)
		if e.Peer != nil {
			e.Peer.carriedProblems(now, add)
		}
	}
	if e.Endpoint != nil {
		switch matches := e.EndpointMatches(); {
		case e.EndpointErr != nil:
			add("the bundle endpoint %s does not answer with a bundle of the trust domain: %v", e.Endpoint, e.EndpointErr)
		case matches != nil && !*matches:
			add("the bundle endpoint %s serves other X.509 authorities than SPIRE holds (normal for one refresh interval "+
				"after a CA rotation; if it persists, SPIRE cannot refresh the bundle: see its log)", e.Endpoint)
		}
	}
	return out
}

// spireProblems compares what SPIRE holds with what the cluster declares,
// reporting through add.
func (e *fsEntry) spireProblems(now time.Time, add func(string, ...any)) {
	declared := len(e.CFTDs) > 0
	switch {
	case declared && e.Relationship == nil:
		add("SPIRE has no federation relationship (ClusterFederatedTrustDomain %s exists; is spire-controller-manager running, "+
			"and does the object's className match its class?)", e.CFTDs[0].Name)
	case !declared && e.Relationship != nil:
		add("SPIRE has a federation relationship that no ClusterFederatedTrustDomain declares (spire-controller-manager " +
			"removes it when it reconciles; if it stays, it was made outside the controller or the controller is not running)")
	case declared && e.Relationship.URL != e.CFTDs[0].Endpoint.URL:
		add("SPIRE fetches the bundle from %s but ClusterFederatedTrustDomain %s says %s (spire-controller-manager has not "+
			"applied the change yet)", e.Relationship.URL, e.CFTDs[0].Name, e.CFTDs[0].Endpoint.URL)
	}
	if e.Carried && (declared || e.Relationship != nil) {
		add("Terraform carries the bundle (zerotrust_spire_bundle), and a federation relationship refreshes it from the " +
			"peer's endpoint too: the two overwrite each other; keep one")
	}
	switch {
	case e.Held == nil && e.Carried:
		add("SPIRE does not hold the bundle Terraform carries (deleted, or lost with SPIRE's datastore), so its workloads " +
			"cannot verify the peer's SVIDs; the next apply of zerotrust_spire_bundle sets it again")
	case e.Held == nil && (declared || e.Relationship != nil):
		add("SPIRE does not hold the bundle, so its workloads cannot verify the peer's SVIDs (SPIRE fetches it from the " +
			"bundle endpoint; https_spiffe needs a bootstrap bundle first: set trust_domain_bundle)")
	case e.Held != nil && !declared && e.Relationship == nil && !e.Carried:
		add("SPIRE still holds the bundle although no federation relationship or ClusterFederatedTrustDomain declares it, "+
			"so its workloads keep trusting this trust domain; delete it (`spire-server bundle delete -id spiffe://%s`, or "+
			"delete_bundle_on_destroy on zerotrust_federated_trust_domain)", e.TrustDomain)
	case e.Held != nil:
		td, err := spiffeid.TrustDomainFromString(e.TrustDomain)
		if err != nil {
			break
		}
		if _, err := trustbundle.Check(td, e.Held, now); err != nil {
			add("the bundle SPIRE holds cannot verify the peer's SVIDs: %v", err)
		}
	}
}

func fsServerName(s spireexec.Server) string {
	return fmt.Sprintf("SPIRE server (pod %s/%s, container %s)", s.Namespace, s.Pod, s.Container)
}
