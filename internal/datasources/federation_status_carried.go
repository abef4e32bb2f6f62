package datasources

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
)

// How a carried bundle compares with the bundle its peer publishes now
// (`peer_comparison`).
const (
	peerMatches = "matches" // the same X.509 and JWT authorities
	peerBehind  = "behind"  // the peer publishes authorities the carried bundle lacks
	peerDiffers = "differs" // nothing lacking, but it trusts authorities the peer no longer publishes
	peerNone    = "no_peer" // no checked cluster's SPIRE server is of the trust domain: cannot compare
)

// fsPeers are the checked clusters' own bundles by trust domain, and the
// names of the clusters whose SPIRE server could not say what it publishes
// (one of them may be the peer a carried bundle is compared with).
type fsPeers struct {
	ByTrustDomain map[string]fsPeer
	Unanswered    []string
}

// fsPeer is a checked cluster as the source of its trust domain's bundle.
type fsPeer struct {
	Cluster string // the name problems use
	Own     spireexec.Own
}

// askPeers asks every cluster's SPIRE server what it publishes of its own
// trust domain, concurrently: the current bundle that carried bundles are
// compared with comes from the peer's own SPIRE server, never from an
// endpoint (none may be reachable where Terraform carries bundles).
func askPeers(ctx context.Context, clusters []fsCluster) fsPeers {
	owns := make([]spireexec.Own, len(clusters))
	errs := make([]error, len(clusters))
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Go(func() { owns[i], errs[i] = c.Spire.Own(ctx) })
	}
	wg.Wait()
	peers := fsPeers{ByTrustDomain: map[string]fsPeer{}}
	for i, c := range clusters {
		if errs[i] != nil {
			peers.Unanswered = append(peers.Unanswered, c.Client.DisplayName())
			continue
		}
		peers.ByTrustDomain[owns[i].Bundle.TrustDomain().Name()] = fsPeer{Cluster: c.Client.DisplayName(), Own: owns[i]}
	}
	return peers
}

// fsCarriedFinding is how a carried bundle SPIRE holds compares with the
// bundle its peer publishes now.
type fsCarriedFinding struct {
	Comparison  string
	PeerCluster string
	// Missing are the peer's authorities the held bundle lacks, Dropped the
	// unexpired X.509 authorities it holds that the peer revoked; both
	// described for a message.
	Missing, Dropped []string
	// ActivatesAt is when the peer's SPIRE server activates its next X.509
	// authority on its own; nil when that cannot be derived.
	ActivatesAt *time.Time
}

// compareCarried compares held, a carried bundle, with what the peer's own
// SPIRE server publishes. Authorities decide, never sequence numbers or key
// order: SPIRE renumbers every bundle it stores.
func compareCarried(held *spiffebundle.Bundle, peer fsPeer, now time.Time) fsCarriedFinding {
	f := fsCarriedFinding{PeerCluster: peer.Cluster, ActivatesAt: nextX509Activation(peer.Own)}
	current := peer.Own.Bundle
	d := trustbundle.CompareX509(held, current, now)
	f.Missing = trustbundle.Describe(d.Missing)
	f.Dropped = trustbundle.Describe(d.Dropped)
	heldJWT := held.JWTAuthorities()
	for _, id := range slices.Sorted(maps.Keys(current.JWTAuthorities())) {
		if _, ok := heldJWT[id]; !ok {
			f.Missing = append(f.Missing, fmt.Sprintf("JWT authority %q", id))
		}
	}
	switch {
	case trustbundle.SameAuthorities(held, current):
		f.Comparison = peerMatches
	case len(f.Missing) > 0:
		f.Comparison = peerBehind
	default:
		f.Comparison = peerDiffers
	}
	return f
}

// SPIRE's CA manager (pkg/server/ca/manager in spire v1.15) prepares the
// next authority when the active one has used half of its lifetime, but at
// most 30 days before it expires, and activates the prepared one when the
// active one has used five sixths, but at most 7 days before it expires:
// expiry - min(lifetime/6, 7 days), so 5/6 of ca_ttl up to a ca_ttl of 42
// days and 7 days before expiry above. The lifetime counts from when SPIRE
// issued the authority, which signs it as valid from 10 seconds earlier
// (its NotBefore cushion).
const (
	caActivationDivisor = 6
	caActivationCap     = 7 * 24 * time.Hour
	caNotBeforeCushion  = 10 * time.Second
)

// nextX509Activation is when the peer's SPIRE server activates its next
// X.509 authority on schedule, derived from its active authority as that
// manager does; nil when the active authority is not in its bundle (an
// upstream authority signs it, and the bundle holds the upstream root).
// An operator's `localauthority x509 activate` can come earlier.
func nextX509Activation(own spireexec.Own) *time.Time {
	cert := spireexec.X509Authority(own.Bundle, own.ActiveX509)
	if cert == nil {
		return nil
	}
	issued := cert.NotBefore.Add(caNotBeforeCushion)
	at := cert.NotAfter.Add(-min(cert.NotAfter.Sub(issued)/caActivationDivisor, caActivationCap))
	return &at
}

// carriedProblems reports through add what is wrong with how the carried
// bundle compares with the peer's.
func (f *fsCarriedFinding) carriedProblems(now time.Time, add func(string, ...any)) {
	if f.Comparison == peerBehind {
		deadline := "apply now (when its SPIRE server activates it cannot be derived: its active authority is not in its bundle)"
		if f.ActivatesAt != nil {
			in := "overdue"
			if d := f.ActivatesAt.Sub(now); d > 0 {
				in = "in " + d.Round(time.Second).String()
			}
			deadline = fmt.Sprintf("the peer activates it at %s (%s): apply before then", f.ActivatesAt.UTC().Format(time.RFC3339), in)
		}
		add("the carried bundle is behind the one cluster %s publishes, which adds %s (workloads here will not verify "+
			"SVIDs it signs); %s", f.PeerCluster, strings.Join(f.Missing, ", "), deadline)
	}
	if len(f.Dropped) > 0 {
		add("the carried bundle still trusts X.509 authorities cluster %s revoked (%s); the next apply of "+
			"zerotrust_spire_bundle removes them", f.PeerCluster, strings.Join(f.Dropped, ", "))
	}
}
