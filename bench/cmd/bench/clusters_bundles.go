package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	bundlev1 "github.com/spiffe/spire-api-sdk/proto/spire/api/server/bundle/v1"
	"github.com/spiffe/spire-api-sdk/proto/spire/api/types"
)

// bundlePoll asks every SPIRE server, from the start of the apply, which
// federated bundles it holds, until each holds those of all its peers or
// the limit passes.
type bundlePoll struct {
	cancel context.CancelFunc
	done   chan struct{}
	held   time.Duration   // when the last server got its last peer bundle
	heldAt []time.Duration // per server; zero: not reached
	err    error
}

func startBundlePoll(ctx context.Context, members []*meshMember, start time.Time, limit time.Duration) *bundlePoll {
	ctx, cancel := context.WithDeadline(ctx, start.Add(limit))
	heldAt := make([]time.Duration, len(members))
	p := &bundlePoll{cancel: cancel, done: make(chan struct{}), heldAt: heldAt}
	go func() {
		defer close(p.done)
		defer cancel()
		last := make([]string, len(members))
		tick := time.NewTicker(meshPollEvery)
		defer tick.Stop()
		for {
			var wg sync.WaitGroup
			for i, m := range members {
				if heldAt[i] > 0 {
					continue
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					missing, err := m.missingPeers(ctx, members)
					switch {
					case err != nil:
						last[i] = err.Error()
					case len(missing) == 0:
						heldAt[i] = time.Since(start)
					default:
						last[i] = "lacks " + strings.Join(missing, ", ")
					}
				}()
			}
			wg.Wait()
			var lacking []string
			for i, h := range heldAt {
				p.held = max(p.held, h)
				if h == 0 {
					lacking = append(lacking, members[i].spire.TrustDomain+": "+last[i])
				}
			}
			if len(lacking) == 0 {
				return
			}
			select {
			case <-ctx.Done():
				p.held = 0
				p.err = fmt.Errorf("%d of %d SPIRE servers lack peer bundles %.0f s after the apply started (%v): %s",
					len(lacking), len(members), time.Since(start).Seconds(), ctx.Err(), strings.Join(lacking, "; "))
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// wait returns when the poll has ended: how long after the start every
// server held every peer bundle and when each did, or an error.
func (p *bundlePoll) wait() (time.Duration, []time.Duration, error) {
	<-p.done
	return p.held, p.heldAt, p.err
}

// stop ends the poll early (the apply failed).
func (p *bundlePoll) stop() {
	p.cancel()
	<-p.done
}

// missingPeers lists the peers of m whose bundles m's SPIRE server does not hold.
func (m *meshMember) missingPeers(ctx context.Context, members []*meshMember) ([]string, error) {
	held, err := m.federatedTrustDomains(ctx)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, peer := range members {
		if peer != m && !slices.Contains(held, peer.spire.TrustDomain) {
			missing = append(missing, peer.spire.TrustDomain)
		}
	}
	return missing, nil
}

// federatedTrustDomains asks m's SPIRE server for the trust domains of the
// federated bundles it holds, sorted.
func (m *meshMember) federatedTrustDomains(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	tds, err := listFederatedTrustDomains(ctx, bundlev1.NewBundleClient(m.admin))
	if err != nil {
		return nil, fmt.Errorf("SPIRE %s: ListFederatedBundles: %w", m.spire.TrustDomain, err)
	}
	return tds, nil
}

// listFederatedTrustDomains pages through ListFederatedBundles of SPIRE's
// server API (what `spire-server bundle list` calls) and returns the trust
// domains of the bundles, sorted.
func listFederatedTrustDomains(ctx context.Context, client bundlev1.BundleClient) ([]string, error) {
	var tds []string
	token := ""
	for {
		// An empty mask: the bundles carry their trust domain only, not
		// their authorities, which the poll does not read.
		resp, err := client.ListFederatedBundles(ctx, &bundlev1.ListFederatedBundlesRequest{
			OutputMask: &types.BundleMask{},
			PageToken:  token,
		})
		if err != nil {
			return nil, err
		}
		for _, b := range resp.GetBundles() {
			// Without a trust domain the poll could not tell which peer
			// the bundle is of.
			if b.GetTrustDomain() == "" {
				return nil, errors.New("a bundle without trust domain")
			}
			tds = append(tds, b.GetTrustDomain())
		}
		if resp.GetNextPageToken() == "" {
			sort.Strings(tds)
			return tds, nil
		}
		token = resp.GetNextPageToken()
	}
}
