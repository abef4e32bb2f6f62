package resources

import (
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spirefacts"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// One relationship, one source: what federated_trust_domain and
// spire_federation share. A SPIRE server learns a federation relationship
// from its configuration file (federates_with in server.conf, which the
// Zero Trust Workload Identity Manager operator renders from the
// SpireServer's spec.federation.federatesWith: zerotrust_spire_federation)
// or through its API (what spire-controller-manager creates for a
// ClusterFederatedTrustDomain: zerotrust_federated_trust_domain). For one
// trust domain the configuration file wins: SPIRE 1.15's newBundleManager
// (pkg/server/server.go) merges the file's relationships over the
// datastore's (bundle/client/sources.go MergeTrustDomainConfigSources), and
// its server documentation says "static relationships override dynamic
// relationships". So one configuration never declares both: the plan
// refuses the second declaration it meets (plannedFederations.declareSource),
// and warns when the other source already exists on the cluster and this
// configuration does not manage it.

// relationshipSource is where SPIRE learns a federation relationship.
type relationshipSource int

const (
	throughAPI   relationshipSource = iota // a ClusterFederatedTrustDomain
	inConfigFile                           // the SpireServer's federatesWith
)

// relationshipSources names, per source, the resource that declared one
// relationship.
type relationshipSources [2]string

// declaredByFederatedTrustDomain names a zerotrust_federated_trust_domain in
// the other resource's refusal: Terraform does not tell a provider the
// address of a resource, so it is named by its id (what `terraform import`
// takes) and its object.
func declaredByFederatedTrustDomain(cluster types.String, name string) string {
	return fmt.Sprintf("the %s with id %q (ClusterFederatedTrustDomain %q)",
		typename.FederatedTrustDomain.Full(), resourceID(cluster, name), name)
}

// declaredBySpireFederation names a federates_with entry of a
// zerotrust_spire_federation in the other resource's refusal.
func declaredBySpireFederation(cluster types.String, td string) string {
	return fmt.Sprintf("the %s with id %q (its federates_with[%q])",
		typename.SpireFederation.Full(), resourceID(cluster, spirefacts.ObjectName), td)
}

// clusterWords names a cluster key in prose.
func clusterWords(cluster types.String) string {
	if key := providerdata.ClusterKey(cluster); key != "" {
		return fmt.Sprintf("cluster %q", key)
	}
	return "the cluster of the `kubernetes` connection"
}

// configFileWins says what SPIRE does with one trust domain declared both
// ways; federationSourcesDoc says it in the resources' documentation.
func configFileWins(td string) string {
	return fmt.Sprintf("SPIRE lets the federation in its configuration file override the one created through its "+
		"API (it merges server.conf's federates_with over its datastore's relationships: pkg/server/server.go "+
		"newBundleManager): it fetches %q's bundle from the federates_with entry's endpoint and profile and ignores "+
		"the ClusterFederatedTrustDomain's, which `spire-server federation list` still shows while the entry it "+
		"follows is not listed. A change of the ClusterFederatedTrustDomain then does nothing for as long as the "+
		"entry stays.", td)
}

// federationSourcesDoc is what both resources' documentation says of the
// two sources.
const federationSourcesDoc = "One trust domain of a cluster is federated either through a " +
	"ClusterFederatedTrustDomain (`zerotrust_federated_trust_domain`, created through SPIRE's API) or in the SPIRE " +
	"server's configuration file (`federates_with` of `zerotrust_spire_federation`), never both: SPIRE lets the " +
	"configuration file override the API for that trust domain, fetching its bundle from the `federates_with` " +
	"entry's endpoint and ignoring the ClusterFederatedTrustDomain's. A plan that declares both for one cluster and " +
	"trust domain is refused, naming both resources; one of them found on the cluster and not managed by this " +
	"configuration is a warning at plan. Keep the `zerotrust_federated_trust_domain`."

// keepFederatedTrustDomain is the advice of the refusal.
func keepFederatedTrustDomain(td string) string {
	return fmt.Sprintf("Keep the %s and remove %q from federates_with of the %s: a ClusterFederatedTrustDomain "+
		"changes without restarting the SPIRE server (every change of federates_with restarts it) and its "+
		"trust_domain_bundle bootstraps and repairs the peer's bundle, which nothing does for an entry of the "+
		"configuration file. Remove the %s instead only where the federation must live in the configuration file.",
		typename.FederatedTrustDomain.Full(), td, typename.SpireFederation.Full(), typename.FederatedTrustDomain.Full())
}

// refuseSecondSource records that who declares cluster's relationship with
// td through here, and refuses it, at attribute at, when a resource planned
// in the same walk declared the same relationship through the other source.
// Unknown values are not checked.
func refuseSecondSource(data *providerdata.Data, cluster types.String, td string, here relationshipSource, who string,
	at path.Path, diags *diag.Diagnostics,
) {
	if data == nil || cluster.IsUnknown() || td == "" {
		return
	}
	other := plannedFederationsOf(data).declareSource(cluster.ValueString(), td, here, who)
	if other == "" {
		return
	}
	var detail string
	if here == inConfigFile {
		detail = fmt.Sprintf("This entry declares the federation of %s with %q in the SPIRE server's configuration "+
			"file, and %s declares the same federation through SPIRE's API.", clusterWords(cluster), td, other)
	} else {
		detail = fmt.Sprintf("This resource declares the federation of %s with %q through SPIRE's API, and %s "+
			"declares the same federation in the SPIRE server's configuration file.", clusterWords(cluster), td, other)
	}
	validate.AttributeError(diags, at, "Federation Declared Twice",
		detail+" "+configFileWins(td)+" "+keepFederatedTrustDomain(td))
}

// spireServerPeers is the SpireServer's federatesWith as a plan reads it.
type spireServerPeers struct {
	obj *unstructured.Unstructured // nil: no SpireServer, or its kind is not served
	// urls is each entry's bundle endpoint URL, by trust domain.
	urls map[string]string
	// held: this configuration's field manager holds the list (it is
	// atomic), so a zerotrust_spire_federation of this configuration
	// manages it, and its plan in the same walk declares its entries.
	held bool
}

// configuredPeersOf reads the cluster's SpireServer once per walk.
func configuredPeersOf(ctx context.Context, client *kube.Client) (spireServerPeers, error) {
	return walkOf(client).configuredPeers.get("", func() (spireServerPeers, error) {
		obj, err := spirefacts.GetIfServed(ctx, client, kube.SpireServer)
		if err != nil || obj == nil {
			return spireServerPeers{}, err
		}
		peers := spireServerPeers{obj: obj, urls: map[string]string{},
			held: applier(client.FieldManager).holds(obj, []string{"spec", "federation", "federatesWith"})}
		list, _, _ := unstructured.NestedSlice(obj.Object, "spec", "federation", "federatesWith")
		for _, item := range list {
			if entry, ok := item.(map[string]any); ok {
				td, _ := entry["trustDomain"].(string)
				url, _ := entry["bundleEndpointUrl"].(string)
				peers.urls[td] = url
			}
		}
		return peers, nil
	})
}

// warnConfiguredPeer is the plan warning of a zerotrust_federated_trust_domain
// whose trust domain the cluster's SpireServer already lists in
// federatesWith, in a list this configuration does not manage. A SpireServer
// that cannot be read skips the check (the RBAC table says so).
func warnConfiguredPeer(ctx context.Context, data *providerdata.Data, client *kube.Client, cluster, trustDomain types.String,
	diags *diag.Diagnostics,
) {
	if trustDomain.IsUnknown() || data.SpireAt(cluster).IsHelm() {
		return
	}
	peers, err := configuredPeersOf(ctx, client)
	td := trustDomain.ValueString()
	url, listed := peers.urls[td]
	if err != nil || !listed || peers.held {
		return
	}
	validate.AttributeWarning(diags, path.Root("trust_domain"), "Trust Domain Federated in the SPIRE Server's Configuration",
		fmt.Sprintf("The SpireServer `cluster` of %s lists %q in spec.federation.federatesWith (bundle endpoint %q), "+
			"which the Zero Trust Workload Identity Manager operator writes into the SPIRE server's configuration "+
			"file, and no %s of this configuration manages that list. %s %s Keep this resource and take %q out of "+
			"the SpireServer's federatesWith (or manage the list with %s, without it), or remove this resource.",
			clusterWords(cluster), td, url, typename.SpireFederation.Full(), writtenBy(peers.obj, client.FieldManager),
			configFileWins(td), td, typename.SpireFederation.Full()))
}

// keptByConfiguredPeer reports, with a warning, that the destroy of a
// zerotrust_federated_trust_domain leaves the peer's bundle in SPIRE
// because the cluster's SpireServer lists its trust domain in
// federatesWith: SPIRE keeps that relationship from its configuration file
// (configFileWins), so it never stops federating with td, and
// spireexec.DeleteBundle, which waits for the relationship to go, would
// wait out the whole delete timeout. A SpireServer that cannot be read
// leaves the delete to go on as before.
func keptByConfiguredPeer(ctx context.Context, data *providerdata.Data, client *kube.Client, cluster types.String, name, td string,
	diags *diag.Diagnostics,
) bool {
	if data.SpireAt(cluster).IsHelm() {
		return false
	}
	peers, err := configuredPeersOf(ctx, client)
	url, listed := peers.urls[td]
	if err != nil || !listed {
		return false
	}
	diags.AddWarning("Peer Bundle Kept",
		fmt.Sprintf("The ClusterFederatedTrustDomain %q was deleted, but the SPIRE server keeps federating with %q, and "+
			"so keeps its bundle: the SpireServer `cluster` of %s lists %q in spec.federation.federatesWith (bundle "+
			"endpoint %q), which the operator writes into the SPIRE server's configuration file, and SPIRE keeps a "+
			"federation relationship of its configuration file whatever its API says. delete_bundle_on_destroy "+
			"deletes nothing while it does: take %q out of federatesWith (%s) to end the federation, then delete the "+
			"bundle with `spire-server bundle delete -id spiffe://%s -mode dissociate`.",
			name, td, clusterWords(cluster), td, url, td, typename.SpireFederation.Full(), td))
	return true
}

// warnAPIRelationships is the plan warning of a zerotrust_spire_federation
// for each federates_with trust domain (peers) that a ClusterFederatedTrustDomain
// on the cluster already federates with, one this configuration did not
// write (one it wrote is a zerotrust_federated_trust_domain planned in the
// same walk, which declares its trust domain, or a destroy that deletes it).
func warnAPIRelationships(ctx context.Context, data *providerdata.Data, cluster types.String, peers []string,
	diags *diag.Diagnostics,
) {
	if len(peers) == 0 {
		return
	}
	ctx, client, cancel := planLookup(ctx, data, cluster, planLookupTimeout, diags)
	defer cancel()
	if client == nil {
		return
	}
	if served, err := client.Served(ctx, kube.ClusterFederatedTrustDomain); err != nil || !served {
		return
	}
	items, err := client.ListOnce(ctx, kube.ClusterFederatedTrustDomain)
	if err != nil {
		if d, ok := kube.NotCheckedWarning(err, "that no ClusterFederatedTrustDomain federates with a trust domain of federates_with"); ok {
			diags.Append(d)
		}
		return
	}
	for i := range items {
		item := &items[i]
		td, _, _ := unstructured.NestedString(item.Object, "spec", "trustDomain")
		if !slices.Contains(peers, td) || item.GetDeletionTimestamp() != nil || applier(client.FieldManager).wrote(item) {
			continue
		}
		validate.AttributeWarning(diags, path.Root("federates_with").AtMapKey(td), "Trust Domain Federated Through SPIRE's API",
			fmt.Sprintf("ClusterFederatedTrustDomain %q on %s federates with %q through SPIRE's API, and no %s of this "+
				"configuration manages it. %s This entry puts the same federation into the SPIRE server's configuration "+
				"file. %s Keep the ClusterFederatedTrustDomain (import it into a %s to manage it here) and remove %q "+
				"from federates_with, or delete the ClusterFederatedTrustDomain.",
				item.GetName(), clusterWords(cluster), td, typename.FederatedTrustDomain.Full(),
				writtenBy(item, client.FieldManager), configFileWins(td), typename.FederatedTrustDomain.Full(), td))
	}
}
