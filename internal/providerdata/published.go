package providerdata

import "sync"

// PublishedURLs are the URLs of bundles that SPIRE servers publish to object
// storage, as zerotrust_spire_server read them in this run: a resource
// planned after the read (one whose URL comes from it) knows that a URL is
// a published object even where its host is not a cloud's object store (an
// S3-compatible store of one's own).
type PublishedURLs struct {
	mu   sync.Mutex
	urls map[string]string
}

// Record notes that url is a bundle the SPIRE server of trust domain td
// publishes. A nil *PublishedURLs records nothing.
func (p *PublishedURLs) Record(url, td string) {
	if p == nil || url == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.urls == nil {
		p.urls = map[string]string{}
	}
	p.urls[url] = td
}

// TrustDomain is the trust domain whose published bundle url is, as
// recorded, and whether it was.
func (p *PublishedURLs) TrustDomain(url string) (string, bool) {
	if p == nil {
		return "", false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	td, ok := p.urls[url]
	return td, ok
}
