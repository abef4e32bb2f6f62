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

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
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

// listFederatedBundlesMethod is SPIRE's server API (spire-api-sdk,
// spire.api.server.bundle.v1), what `spire-server bundle list` calls.
const listFederatedBundlesMethod = "/spire.api.server.bundle.v1.Bundle/ListFederatedBundles"

// federatedTrustDomains asks m's SPIRE server for the trust domains of the
// federated bundles it holds, sorted.
func (m *meshMember) federatedTrustDomains(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var tds []string
	token := ""
	for {
		req := listFederatedBundlesRequest(token)
		var resp []byte
		if err := m.admin.Invoke(ctx, listFederatedBundlesMethod, &req, &resp, grpc.ForceCodecV2(rawCodec{})); err != nil {
			return nil, fmt.Errorf("SPIRE %s: ListFederatedBundles: %w", m.spire.TrustDomain, err)
		}
		page, next, err := parseListFederatedBundles(resp)
		if err != nil {
			return nil, fmt.Errorf("SPIRE %s: ListFederatedBundles: %w", m.spire.TrustDomain, err)
		}
		tds = append(tds, page...)
		if next == "" {
			sort.Strings(tds)
			return tds, nil
		}
		token = next
	}
}

// listFederatedBundlesRequest encodes a ListFederatedBundlesRequest with an
// empty output_mask (field 1): the bundles then carry their trust domain
// only, no authorities. page_token is field 3.
func listFederatedBundlesRequest(pageToken string) []byte {
	b := protowire.AppendTag(nil, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, nil)
	if pageToken != "" {
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendString(b, pageToken)
	}
	return b
}

// parseListFederatedBundles decodes a ListFederatedBundlesResponse: the
// trust_domain (field 1) of each bundle (field 1, spire.api.types.Bundle)
// and next_page_token (field 2).
func parseListFederatedBundles(b []byte) (tds []string, next string, err error) {
	err = protoFields(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			td := ""
			if err := protoFields(v, func(num protowire.Number, typ protowire.Type, v []byte) error {
				if num == 1 && typ == protowire.BytesType {
					td = string(v)
				}
				return nil
			}); err != nil {
				return err
			}
			if td == "" {
				return errors.New("a bundle without trust domain")
			}
			tds = append(tds, td)
		case num == 2 && typ == protowire.BytesType:
			next = string(v)
		}
		return nil
	})
	return tds, next, err
}

// protoFields calls fn for each field of the message b; v is the content of
// length-delimited fields and nil for others.
func protoFields(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		if typ == protowire.BytesType {
			v, n = protowire.ConsumeBytes(b)
		} else {
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(num, typ, v); err != nil {
			return err
		}
	}
	return nil
}
