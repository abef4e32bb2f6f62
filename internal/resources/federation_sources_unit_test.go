package resources

import (
	"sync"
	"testing"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// TestDeclareSourceFindsTheOtherInAnyOrder: of two resources declaring one
// relationship through the two sources, exactly the one that declares second
// finds the first, in either order and when both declare at once; a source
// declared again, or another cluster or trust domain, finds nothing.
func TestDeclareSourceFindsTheOtherInAnyOrder(t *testing.T) {
	const ftd, fed = "the ClusterFederatedTrustDomain", "the federates_with entry"
	for _, first := range []relationshipSource{throughAPI, inConfigFile} {
		p := plannedFederationsOf(&providerdata.Data{})
		who := map[relationshipSource]string{throughAPI: ftd, inConfigFile: fed}
		second := 1 - first
		if got := p.declareSource("east", "west.test", first, who[first]); got != "" {
			t.Errorf("first declaration found %q", got)
		}
		if got := p.declareSource("east", "west.test", first, who[first]); got != "" {
			t.Errorf("the same declaration again found %q", got)
		}
		if got := p.declareSource("north", "west.test", second, who[second]); got != "" {
			t.Errorf("another cluster found %q", got)
		}
		if got := p.declareSource("east", "south.test", second, who[second]); got != "" {
			t.Errorf("another trust domain found %q", got)
		}
		if got := p.declareSource("east", "west.test", second, who[second]); got != who[first] {
			t.Errorf("second declaration found %q, want %q", got, who[first])
		}
	}
	for range 200 {
		p := plannedFederationsOf(&providerdata.Data{})
		found := make([]string, 2)
		var wg sync.WaitGroup
		for i, source := range []relationshipSource{throughAPI, inConfigFile} {
			wg.Go(func() { found[i] = p.declareSource("east", "west.test", source, []string{ftd, fed}[i]) })
		}
		wg.Wait()
		if (found[0] == "") == (found[1] == "") {
			t.Fatalf("concurrent declarations found %q and %q, want exactly one to find the other", found[0], found[1])
		}
	}
}

// TestRelationshipAndCarriedBundleSeeEachOther: a relationship and a carried
// bundle of one trust domain planned at once: exactly the one recorded
// second sees the first (add, addCarried), so one of them refuses.
func TestRelationshipAndCarriedBundleSeeEachOther(t *testing.T) {
	for range 200 {
		p := plannedFederationsOf(&providerdata.Data{})
		var carried, related bool
		var wg sync.WaitGroup
		wg.Go(func() { carried = p.add("east", "west.test") })
		wg.Go(func() { related = p.addCarried("east", "west.test") })
		wg.Wait()
		if carried == related {
			t.Fatalf("add saw a carried bundle: %v, addCarried saw a relationship: %v; want exactly one", carried, related)
		}
	}
}
