package resources

import "testing"

// TestFederatedTrustDomainShortcutAcceptsSchema fails when a schema change
// gives zerotrust_federated_trust_domain something fastpath.Shortcut does not
// model (a nested default, a semantic-equality type, a write-only
// attribute): the fast path would then quietly refuse every request and only
// the benchmark would notice.
func TestFederatedTrustDomainShortcutAcceptsSchema(t *testing.T) {
	if why := federatedTrustDomainType.fast().Refuses(); why != "" {
		t.Fatalf("the fast path refuses zerotrust_federated_trust_domain's schema: %s", why)
	}
}
