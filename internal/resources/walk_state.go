package resources

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/workloadtrust"
)

// Walk state: what one Terraform graph walk learns once and shares between
// its resources, typed. A walk is one provider process (see kube.Client for
// why everything here lives exactly one walk), in two scopes:
//   - per cluster, clusterWalk, kept on the cluster's kube.Client: what its
//     SPIRE server holds, the answers of peers' endpoints, what a refresh
//     found for the plan that follows it, and the warnings already given;
//   - per provider instance, plannedFederations: what the resources planned
//     so far federate with, across clusters.
// The walk ends with the process; nothing here is written to state, so a
// plan never depends on what an earlier plan learnt.

// clusterWalk is one cluster's walk state.
type clusterWalk struct {
	// spireViews is what each SPIRE server (by spireexec.Server.Key) holds,
	// asked once for every object of the cluster.
	spireViews memo[string, spireexec.View]
	// workloadSPIRE is what each SPIRE server (by spireexec.Server.Key)
	// holds for the entries of ClusterSPIFFEIDs.
	workloadSPIRE memo[string, workloadtrust.SPIRE]
	// endpoints are peers' bundle endpoints' answers, by endpoint and the
	// bundle that authenticated them (endpointWithHeld).
	endpoints memo[string, endpointAnswer]
	// lags is what each refresh found about a peer's endpoint serving
	// authorities SPIRE lacks, by spireLagKey, for the plan of the same
	// walk; a plan without a refresh finds none.
	lags findings[string, endpointLag]
	// spireWarningClaimed and spireWarningSaid: the "SPIRE Not Asked"
	// warning of a SPIRE server, claimed by the fast path and said by the
	// framework's Read (spireUnreachable).
	spireWarningClaimed, spireWarningSaid onceSet[string]
	// bundlesNotRead: the "SPIRE Bundles Not Read" warning of
	// zerotrust_spire_bundle, by SPIRE server.
	bundlesNotRead onceSet[string]
	// configuredPeers is the SpireServer's federatesWith as the plan found
	// it, read once (key "") for every zerotrust_federated_trust_domain of
	// the cluster (federation_sources.go).
	configuredPeers memo[string, spireServerPeers]
}

// endpointLag is how the bundle SPIRE holds trails the one the peer's
// endpoint serves now.
type endpointLag struct {
	trustbundle.X509Difference
	// Poll is the longest SPIRE waits until it fetches the bundle again on
	// its own; 0 when the bundle states no refresh hint.
	Poll time.Duration
}

// endpointAnswer is what the peer's endpoint answered when fetched with the
// bundle SPIRE holds.
type endpointAnswer struct {
	served  *spiffebundle.Bundle // nil when it did not answer with a bundle
	refused bool                 // its certificate is of a CA the bundle lacks
}

// walkOf is client's walk state.
func walkOf(client *kube.Client) *clusterWalk {
	return kube.Attached(client, func() *clusterWalk { return &clusterWalk{} })
}

// memo computes each key's value once; concurrent callers of a key wait
// for the first one's answer.
type memo[K comparable, V any] struct{ entries sync.Map }

type memoEntry[V any] struct {
	once sync.Once
	val  V
	err  error
}

func (m *memo[K, V]) get(key K, compute func() (V, error)) (V, error) {
	v, _ := m.entries.LoadOrStore(key, &memoEntry[V]{})
	e, _ := v.(*memoEntry[V]) // entries holds nothing else
	e.once.Do(func() { e.val, e.err = compute() })
	return e.val, e.err
}

// findings keeps what one step of the walk found for a later one (a
// refresh for the plan after it); the first finding of a key stays.
type findings[K comparable, V any] struct{ m sync.Map }

func (f *findings[K, V]) keep(key K, v V) { f.m.LoadOrStore(key, v) }

func (f *findings[K, V]) lookup(key K) (V, bool) {
	v, ok := f.m.Load(key)
	found, _ := v.(V) // m holds nothing else
	return found, ok
}

// onceSet says whether a key is new: for what is said once per walk.
type onceSet[K comparable] struct{ seen sync.Map }

func (s *onceSet[K]) first(key K) bool {
	_, seen := s.seen.LoadOrStore(key, struct{}{})
	return !seen
}

// plannedFederations records, per provider instance (one graph walk), the
// trust domains each cluster's federations plan: federation relationships
// (zerotrust_federated_trust_domain, federates_with of
// zerotrust_spire_federation) and bundles Terraform carries
// (zerotrust_spire_bundle). Terraform plans a resource after those it
// depends on, so a ClusterSPIFFEID that depends on its federations sees them
// here although the cluster has none yet, and a carried bundle sees a
// relationship planned before it for the same trust domain.
type plannedFederations struct {
	mu            sync.Mutex
	relationships map[string][]string
	carried       map[string][]string
	// sources is, per cluster and trust domain, the resource that declared
	// the relationship through each source (federation_sources.go).
	sources map[[2]string]*relationshipSources
}

var plannedFederationsByData sync.Map // *providerdata.Data -> *plannedFederations

func plannedFederationsOf(d *providerdata.Data) *plannedFederations {
	v, _ := plannedFederationsByData.LoadOrStore(d, &plannedFederations{
		relationships: map[string][]string{}, carried: map[string][]string{}, sources: map[[2]string]*relationshipSources{}})
	p, _ := v.(*plannedFederations)
	return p
}

// add records that cluster (its key; "" the default connection) plans a
// federation relationship with td, and reports whether a
// zerotrust_spire_bundle planned before it carries td's bundle there.
func (p *plannedFederations) add(cluster, td string) (carried bool) {
	return p.record(p.relationships, p.carried, cluster, td)
}

// addCarried records that cluster plans to hold td's bundle without a
// relationship, set by Terraform, and reports whether a relationship with td
// was planned there before it.
func (p *plannedFederations) addCarried(cluster, td string) (related bool) {
	return p.record(p.carried, p.relationships, cluster, td)
}

// record adds td to cluster's trust domains in into and reports whether
// other holds it for cluster. The record and the look-up are one step under
// the lock, as in declareSource: of a relationship and a carried bundle
// planned concurrently, the one recorded second sees the first.
func (p *plannedFederations) record(into, other map[string][]string, cluster, td string) bool {
	if td == "" {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Contains(into[cluster], td) {
		into[cluster] = append(into[cluster], td)
	}
	return slices.Contains(other[cluster], td)
}

// of is every trust domain cluster plans to federate with, either way.
func (p *plannedFederations) of(cluster string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append(slices.Clone(p.relationships[cluster]), p.carried[cluster]...)
}

// refuseCarried is the plan error of a federation relationship with td on
// cluster while a zerotrust_spire_bundle planned before it carries td's
// bundle there (carried, what add reported; the carried bundle's own plan
// refuses the other order).
func (p *plannedFederations) refuseCarried(cluster, td string, carried bool, at path.Path, diags *diag.Diagnostics) {
	if !carried {
		return
	}
	validate.AttributeError(diags, at, "Trust Domain's Bundle Carried by Terraform", fmt.Sprintf(
		"A zerotrust_spire_bundle planned before this resource carries the bundle of %q into cluster %q. A federation "+
			"relationship would have SPIRE refresh that bundle from the peer's endpoint and overwrite what the "+
			"zerotrust_spire_bundle sets, which every apply would set back. Keep one of the two: this relationship "+
			"where the SPIRE servers reach each other, or the carried bundle where they cannot.", td, cluster))
}

// declareSource records that the resource who declares cluster's
// relationship with td through source, and returns the resource that
// declared the same relationship through the other source ("" when none).
// The record and the look-up are one step under the lock, so the check does
// not depend on the order in which Terraform plans the two resources (one
// after the other when one depends on the other, concurrently otherwise):
// whichever declares second finds the first and refuses. Each source keeps
// the first resource that declared it; declaring again (the fast path's
// attempt, then the framework's plan of the same resource) changes nothing.
func (p *plannedFederations) declareSource(cluster, td string, source relationshipSource, who string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := [2]string{cluster, td}
	s := p.sources[key]
	if s == nil {
		s = &relationshipSources{}
		p.sources[key] = s
	}
	if s[source] == "" {
		s[source] = who
	}
	return s[1-source]
}
