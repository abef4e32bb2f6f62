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

// tbWriter is who wrote the key of a bundle ConfigMap that was read: key,
// and writer as bundlesource.Writers names it ("" when the ConfigMap keeps
// no record).
type tbWriter struct{ key, writer string }

// publisher reports whether SPIRE's BundlePublisher "k8s_configmap" wrote
// the key: it publishes at once when SPIRE revokes an authority, where the
// Notifier "k8sbundle" does not.
func (w tbWriter) publisher() bool { return w.writer == bundlesource.PluginPublisher }

// expected is the SPIRE plugin that writes the key by default.
func (w tbWriter) expected() string {
	if w.key == bundlesource.KeySPIFFE {
		return bundlesource.PluginPublisher
	}
	return bundlesource.PluginNotifier
}

// wrote says who last wrote the key, for a message.
func (w tbWriter) wrote() string {
	if w.writer == "" {
		return "the ConfigMap keeps no record of who last wrote its key " + w.key
	}
	return "its key " + w.key + " was last written by " + w.writer
}

// tbDroppedWarnings names, truthfully, why the authorities dropped were in
// the ConfigMap. `localauthority ... revoke` accepts only SPIRE's previous
// ("old") authority, or for X.509 the upstream authority that signed it, and
// leaves it named as such until the next prepare. SPIRE's Notifier
// "k8sbundle" does not write the ConfigMap at a revoke, only at the next
// prepare, without what was revoked; its BundlePublisher "k8s_configmap"
// publishes at once, so a revoked authority it left there means a publish
// failed or is under way. So an authority SPIRE revoked and the ConfigMap
// still holds is one of those; any other was never SPIRE's to revoke:
// someone else put it there. When SPIRE cannot be asked for its previous
// authorities (previousErr), the two cannot be told apart, and the warning
// says both.
func tbDroppedWarnings(cm bundlesource.ConfigMap, w tbWriter, td spiffeid.TrustDomain, dropped []tbDropped, previous spireexec.Previous,
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
		why := "(SPIRE's " + bundlesource.PluginNotifier + " does not rewrite the ConfigMap when SPIRE revokes an " +
			"authority; " + w.wrote() + ")"
		if w.publisher() {
			why = "(" + w.wrote() + ", which publishes at once when SPIRE revokes an authority and compares every 30 " +
				"seconds, so its publish since the revoke failed or is still under way: the SPIRE server's log says " +
				"\"Failed to publish bundle\" when it fails)"
		}
		diags.AddAttributeWarning(at, "Revoked Authorities Left Out", fmt.Sprintf(
			"%s holds authorities of %q that its SPIRE server held and revoked since it last wrote the ConfigMap "+
				"%s: %s. %s", cm, td.Name(), why, strings.Join(revoked, ", "), leftOut))
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
			"may have been altered. Check who writes it: only SPIRE's %s should, and %s. %s",
		cm, td.Name(), strings.Join(foreign, ", "), w.expected(), w.wrote(), leftOut))
}
