package leastprivilege_test

import (
	"fmt"
	"testing"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// spireConfig federates the cluster's SPIRE with the peer through a
// ClusterFederatedTrustDomain with every pod-exec feature, and with another
// trust domain in the SpireServer's static federates_with (never the peer:
// one trust domain declared both ways is refused at plan), adds a
// ClusterSPIFFEID whose entries federate with the peer, and reads every SPIRE
// data source. extra is added to federates_with (an
// update); csidTTL, when given, is the ClusterSPIFFEID's ttl (an update).
func (e *env) spireConfig(extra string, csidTTL ...string) string {
	ttl := "1h"
	if len(csidTTL) > 0 {
		ttl = csidTTL[0]
	}
	return fmt.Sprintf(`
resource "zerotrust_spire_federation" "this" {
  federates_with = {
    "static.zt.test" = {
      bundle_endpoint_url     = "https://bundles.static.zt.test"
      bundle_endpoint_profile = "https_web"
    }
%[5]s
  }
}

resource "zerotrust_federated_trust_domain" "peer" {
  name                = "peer"
  trust_domain        = %[1]q
  bundle_endpoint_url = %[2]q
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = %[3]q
  }
  trust_domain_bundle      = %[4]q
  wait_for_bundle          = true
  check_spire              = true
  delete_bundle_on_destroy = true

  timeouts {
    create = "2m"
    delete = "2m"
  }
}

# Selects no pod: the wait asks SPIRE for the bundle and the controller's
# stats, and lists namespaces and pods.
resource "zerotrust_cluster_spiffe_id" "peer" {
  name               = "peer"
  spiffe_id_template = "spiffe://{{ .TrustDomain }}/ns/{{ .PodMeta.Namespace }}/sa/{{ .PodSpec.ServiceAccountName }}"
  pod_selector = {
    match_labels = { app = "least-privilege-none" }
  }
  federates_with = [zerotrust_federated_trust_domain.peer.trust_domain]
  ttl            = %[6]q
}

# The federation of a ClusterSPIFFEID an administrator made (spireLifecycle).
resource "zerotrust_cluster_spiffe_id_federation" "shared" {
  name           = "shared"
  federates_with = [zerotrust_federated_trust_domain.peer.trust_domain]
}

# A bundle Terraform carries to SPIRE, with no relationship (pod exec only).
resource "zerotrust_spire_bundle" "courier" {
  trust_domain = %[7]q
  bundle       = %[8]q
}

data "zerotrust_cluster_spiffe_id" "peer" {
  name = zerotrust_cluster_spiffe_id.peer.name
}

data "zerotrust_spire_server" "this" {
  depends_on = [zerotrust_spire_federation.this]
}

data "zerotrust_trust_bundle" "config_map" {
  trust_domain = data.zerotrust_spire_server.this.trust_domain
  config_map   = { name = "spire-bundle" }
}

data "zerotrust_trust_bundle" "spire_server" {
  trust_domain = data.zerotrust_spire_server.this.trust_domain
  spire_server = {}
}

data "zerotrust_federation_status" "this" {
  depends_on      = [zerotrust_federated_trust_domain.peer]
  carried_bundles = [{ trust_domain = zerotrust_spire_bundle.courier.trust_domain }]
}

action "zerotrust_spire_bundle_refresh" "peer" {
  config {
    trust_domain = zerotrust_federated_trust_domain.peer.trust_domain
    timeout      = "2m"
  }
}

output "federation_ok" {
  value = data.zerotrust_federation_status.this.ok
}

output "federation_problems" {
  value = data.zerotrust_federation_status.this.problems
}

output "same_bundle" {
  value = data.zerotrust_trust_bundle.config_map.trust_domain == data.zerotrust_trust_bundle.spire_server.trust_domain
}
`, e.peer.TrustDomain, e.peer.BundleEndpointURL, e.peer.EndpointSPIFFEID, e.peerBundle, extra, ttl, courierTrustDomain, e.courierBundle)
}

const spireExtraPeer = `
    "extra.zt.test" = {
      bundle_endpoint_url     = "https://bundles.extra.zt.test"
      bundle_endpoint_profile = "https_web"
    }
`

// spireLifecycle runs create, refresh, update, import (by ID and by
// identity) and the refresh action of the SPIRE resources and data sources
// in dir, leaving the objects in place for the list and rule exercises.
func (e *env) spireLifecycle(t *testing.T) string {
	acctest.ApplyAs(t, e.c, kube.ClusterSPIFFEID, acctest.OperatorManager, map[string]any{
		"metadata": map[string]any{"name": "shared"},
		"spec": map[string]any{
			"spiffeIDTemplate": "spiffe://{{ .TrustDomain }}/shared",
			"podSelector":      map[string]any{"matchLabels": map[string]any{"app": "least-privilege-none"}},
		},
	})
	dir := e.workdir(t, e.spireConfig(""))
	out := e.mustTF(t, dir, "apply", "-auto-approve")
	expect(t, "SPIRE create", out, "Apply complete! Resources: 5 added", `federation_ok = true`, `same_bundle = true`)
	e.emptyPlan(t, dir)
	e.write(t, dir, "main.tf", e.spireConfig(spireExtraPeer))
	expect(t, "SPIRE update", e.mustTF(t, dir, "apply", "-auto-approve"), "0 added, 1 changed, 0 destroyed")
	e.emptyPlan(t, dir)

	// Forget them, then import the SpireServer and the ClusterSPIFFEID by
	// ID and the ClusterFederatedTrustDomain by identity.
	e.mustTF(t, dir, "state", "rm", "zerotrust_spire_federation.this", "zerotrust_federated_trust_domain.peer",
		"zerotrust_cluster_spiffe_id.peer", "zerotrust_cluster_spiffe_id_federation.shared", "zerotrust_spire_bundle.courier")
	e.write(t, dir, "import.tf", `
import {
  to = zerotrust_spire_federation.this
  id = "cluster"
}

import {
  to       = zerotrust_federated_trust_domain.peer
  identity = { name = "peer" }
}

import {
  to = zerotrust_cluster_spiffe_id.peer
  id = "peer"
}

import {
  to       = zerotrust_cluster_spiffe_id_federation.shared
  identity = { name = "shared" }
}

import {
  to       = zerotrust_spire_bundle.courier
  identity = { trust_domain = "`+courierTrustDomain+`" }
}
`)
	// wait_for_bundle and the timeouts are not on the cluster: the import
	// stores their defaults and the apply sets them (an update of state only).
	expect(t, "SPIRE import", e.mustTF(t, dir, "apply", "-auto-approve"), "5 imported, 0 added")
	e.emptyPlan(t, dir)

	out = e.mustTF(t, dir, "apply", "-auto-approve", "-invoke=action.zerotrust_spire_bundle_refresh.peer")
	expect(t, "spire_bundle_refresh", out, "Action complete")
	return dir
}
