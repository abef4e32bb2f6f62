package resources

import (
	"context"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/workloadtrust"
)

// What resources ask a cluster's SPIRE server during one Terraform graph
// walk: asked once per server (spireexec.Server.Key) and kept in the
// cluster's walk state, so that every object of the cluster, of whichever
// resource, shares the answer.

// spireViewOf is what server holds, asked once per client (one Terraform
// graph walk) and shared by every object of the cluster.
func spireViewOf(ctx context.Context, client *kube.Client, server spireexec.Server) (spireexec.View, error) {
	return walkOf(client).spireViews.get(server.Key(), func() (spireexec.View, error) { return server.View(ctx) })
}

// workloadSPIRE is what server holds, asked once per client (one graph walk).
func workloadSPIRE(ctx context.Context, client *kube.Client, server spireexec.Server) (workloadtrust.SPIRE, error) {
	return walkOf(client).workloadSPIRE.get(server.Key(), func() (workloadtrust.SPIRE, error) {
		ctx, cancel := context.WithTimeout(ctx, planLookupTimeout)
		defer cancel()
		return workloadtrust.Ask(ctx, server)
	})
}

// spireTrustPending is how long after this provider applied an object that
// was never seen federated a missing relationship or bundle is not a
// finding yet: spire-controller-
// manager reconciles within seconds (its default resync is 10 s), and SPIRE
// fetches a bundle at its first refresh. A plan right after an apply without
// wait_for_bundle would otherwise plan a repair of what is still on its way.
const spireTrustPending = time.Minute
