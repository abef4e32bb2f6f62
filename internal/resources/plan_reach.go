package resources

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// This file is shared by every resource's ModifyPlan: how a plan-time check
// gets its cluster, and what the plan says when that cluster does not answer.

// planTimeChecks names, per resource type, every plan-time check that asks
// the cluster. The warning for an unreachable cluster lists them all: it is
// given once per cluster and plan, by whichever object asks first, and every
// other object planned on that cluster skips its checks without a warning
// of its own.
var planTimeChecks = map[string][]string{
	"zerotrust_domain_verification": {
		"which existing DomainVerification adopt_existing adopts, and whether an object of the same name was written by another field manager",
	},
	"zerotrust_federated_trust_domain": {
		"that no other ClusterFederatedTrustDomain federates with the same trust domain (duplicate check)",
		"which SPIRE server pod a planned repair of spire_trust runs in",
	},
	"zerotrust_istio_csr": {
		"that no other IstioCSR exists on the cluster (the operator serves one)",
		"that the cert-manager issuer exists and is not an ACME issuer",
		"that the CA Secret of the issuer holds ca.crt",
		"that the CA ConfigMap of ca_certificate holds a CA certificate",
	},
	"zerotrust_mesh_service_identities": {
		"that the MeshService exists",
	},
	"zerotrust_mesh_trust_domain": {
		"which trust domain the mesh object holds now (the Trust Domain Change warning)",
	},
	"zerotrust_spire_federation": {
		"the cluster's trust domain (trust_domain and endpoint_spiffe_id stay unknown until the apply)",
		"that federates_with has no entry for the cluster's own trust domain",
		"that an existing federation's profile and https_web certificate source are not changed",
		"that an ACME domain_name is the host of the operator's Route (federation.<trust domain>)",
	},
	"": {
		"the server-side apply dry run of an update (field-manager conflicts, fields or values the cluster's CRD refuses)",
	},
}

// planClient is the client plan-time checks on cluster use, or nil when they
// cannot ask: a connection Terraform does not know yet or cannot build
// (silently: the apply reports it), or a cluster that does not answer. The
// latter is said in one warning per cluster and plan (see
// unreachableWarning); the checks are skipped in any case, as the apply
// repeats them before it writes.
func planClient(ctx context.Context, data *providerdata.Data, cluster types.String, diags *diag.Diagnostics) *kube.Client {
	key := providerdata.ClusterKey(cluster)
	if data == nil || data.Clusters == nil || cluster.IsUnknown() || data.Clusters.IsUnknown(key) {
		return nil
	}
	client, err := data.Clusters.Client(key)
	if err != nil {
		return nil
	}
	if err := client.Reachable(ctx); err != nil {
		var unreachable *kube.UnreachableError
		if errors.As(err, &unreachable) && client.FirstTime("plan unreachable warned") {
			diags.Append(unreachableWarning(unreachable))
		}
		return nil
	}
	return client
}

// unreachableWarning names the cluster, its address, the error and every
// plan-time check the plan skips on it.
func unreachableWarning(err *kube.UnreachableError) diag.Diagnostic {
	names := make([]string, 0, len(planTimeChecks))
	for t := range planTimeChecks {
		if t != "" {
			names = append(names, t)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, t := range names {
		fmt.Fprintf(&b, "  - %s: %s\n", t, strings.Join(planTimeChecks[t], "; "))
	}
	fmt.Fprintf(&b, "  - every resource: %s\n", strings.Join(planTimeChecks[""], "; "))
	return diag.NewWarningDiagnostic("Cluster Unreachable: Plan-Time Checks Skipped", fmt.Sprintf(
		"Cluster %q at %s did not answer within %s: %v\n\nThe plan asks it nothing more and goes on without "+
			"the checks that need it, for every object planned on cluster %q (this warning is given once per "+
			"cluster and plan):\n%sWhat they would have caught shows only when the apply or the operator fails; "+
			"the apply asks the cluster again, with its retries. Check that the API server is up and reachable "+
			"from where Terraform runs, with the provider's connection settings for this cluster.",
		err.Cluster, err.Host, kube.PlanReachTimeout, err.Err, err.Cluster, b.String()))
}
