package datasources

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
)

// tbDropped is an authority of a bundle ConfigMap that its SPIRE server does
// not hold: name describes it for a message, id is its authority ID as
// `localauthority ... show` prints it.
type tbDropped struct {
	name, id string
	jwt      bool
}

// tbDroppedWarnings names, truthfully, why the authorities dropped were in
// the ConfigMap. `localauthority ... revoke` accepts only SPIRE's previous
// ("old") authority, or for X.509 the upstream authority that signed it, and
// leaves it named as such until the next prepare, whose new authority makes
// SPIRE's k8sbundle notifier write the ConfigMap again, without what was
// revoked. So an authority SPIRE revoked and the ConfigMap still holds is
// one of those; any other was never SPIRE's to revoke: someone else put it
// there. When SPIRE cannot be asked for its previous authorities
// (previousErr), the two cannot be told apart, and the warning says both.
func tbDroppedWarnings(cm bundlesource.ConfigMap, td spiffeid.TrustDomain, dropped []tbDropped, previous spireexec.Previous,
	previousErr error, at path.Path, diags *diag.Diagnostics) {
	var revoked, foreign []string
	for _, d := range dropped {
		held := []string{previous.X509, previous.X509Upstream}
		if d.jwt {
			held = []string{previous.JWT}
		}
		if previousErr == nil && slices.ContainsFunc(held, func(id string) bool { return id != "" && strings.EqualFold(id, d.id) }) {
			revoked = append(revoked, d.name)
		} else {
			foreign = append(foreign, d.name)
		}
	}
	slices.Sort(revoked)
	slices.Sort(foreign)
	const leftOut = "They are left out of this data source's outputs, so nothing seeded from it trusts them."
	if len(revoked) > 0 {
		diags.AddAttributeWarning(at, "Revoked Authorities Left Out", fmt.Sprintf(
			"%s holds authorities of %q that its SPIRE server held and revoked since it last wrote the ConfigMap "+
				"(SPIRE does not rewrite the ConfigMap when it revokes an authority): %s. %s",
			cm, td.Name(), strings.Join(revoked, ", "), leftOut))
	}
	if len(foreign) == 0 {
		return
	}
	if previousErr != nil {
		diags.AddAttributeWarning(at, "Authorities Not in SPIRE's Bundle Left Out", fmt.Sprintf(
			"%s holds authorities of %q that are not in its SPIRE server's bundle: %s. Either SPIRE revoked them, or "+
				"someone else added them to the ConfigMap, which may have been altered; SPIRE's previous authorities, "+
				"which would tell the two apart, could not be asked. %s\n\n%v",
			cm, td.Name(), strings.Join(foreign, ", "), leftOut, previousErr))
		return
	}
	diags.AddAttributeWarning(at, "Authorities SPIRE Never Held Left Out", fmt.Sprintf(
		"%s holds authorities of %q that its SPIRE server never held: %s. SPIRE does not hold them, and none is "+
			"its previous authority, the only kind SPIRE revokes, so SPIRE did not write them there: the ConfigMap "+
			"may have been altered. Check who writes it (only SPIRE's k8sbundle notifier should). %s",
		cm, td.Name(), strings.Join(foreign, ", "), leftOut))
}
