package leastprivilege_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
)

// meshPeer is the trust domain the Kuma MeshTrust and the MeshService
// identities name.
const meshPeer = "mesh-peer.zt.test"

// meshObjects creates, as the operators would, what the mesh resources
// manage but never create: the Sail Istio, the Kyma Istio and a Kuma
// MeshService.
func (e *env) meshObjects(t *testing.T) {
	t.Helper()
	acctest.ApplyAs(t, e.c, kube.SailIstio, acctest.OperatorManager, map[string]any{
		"metadata": map[string]any{"name": "default"},
		"spec": map[string]any{
			"version": "v1.28.0", "namespace": "istio-system",
			"values": map[string]any{"global": map[string]any{"meshID": "mesh1"}},
		},
	})
	acctest.ApplyAs(t, e.c, kube.KymaIstio, acctest.OperatorManager, map[string]any{
		"metadata": map[string]any{"name": "default", "namespace": kymaNS},
		"spec":     map[string]any{"config": map[string]any{"numTrustedProxies": int64(1)}},
	})
	acctest.ApplyAs(t, e.c, kube.KumaMeshService, acctest.OperatorManager, map[string]any{
		"metadata": map[string]any{"name": "cart", "namespace": kumaNS},
		"spec": map[string]any{
			"selector": map[string]any{"dataplaneLabels": map[string]any{"matchLabels": map[string]any{"app": "cart"}}},
			"ports":    []any{map[string]any{"name": "http", "port": int64(8080), "targetPort": "http", "appProtocol": "http"}},
		},
	})
}

func caPEM(t *testing.T, td string) string {
	t.Helper()
	now := time.Now()
	return string(bundletest.PEM(bundletest.NewCA(t, spiffeid.RequireTrustDomainFromString(td), now.Add(-time.Hour), now.Add(24*time.Hour))))
}

// meshConfig manages every mesh kind and a MeshService's identities, and
// reads the MeshService. v (1 or 2) picks the values, so 2 is an update of
// every resource.
func (e *env) meshConfig(v int, pems []string) string {
	return e.meshConfigOf(meshVersions{v, v, v, v}, pems)
}

// meshVersions picks the values of each mesh resource (1, 2 or 3), so that
// an exercise changes one resource alone.
type meshVersions struct{ sail, kyma, kuma, msi int }

func (e *env) meshConfigOf(v meshVersions, pems []string) string {
	bundles := fmt.Sprintf("%q", pems[0])
	if v.kuma >= 2 {
		bundles += fmt.Sprintf(", %q", pems[1])
	}
	if v.kuma == 3 {
		bundles = fmt.Sprintf("%q", pems[1])
	}
	return fmt.Sprintf(`
resource "zerotrust_mesh_trust_domain" "sail" {
  mesh         = { kind = "istio_sail" }
  trust_domain = "sail%[1]d.zt.test"
}

resource "zerotrust_mesh_trust_domain" "kyma" {
  mesh         = { kind = "istio_kyma", namespace = %[2]q }
  trust_domain = "kyma%[6]d.zt.test"
}

resource "zerotrust_mesh_trust_domain" "kuma" {
  mesh         = { kind = "kuma", namespace = %[3]q }
  trust_domain = %[4]q
  ca_bundles   = [%[5]s]
}

resource "zerotrust_mesh_service_identities" "cart" {
  namespace  = %[3]q
  name       = "cart"
  identities = [provider::zerotrust::spiffe_id(%[4]q, "ns", "shop", "sa", "cart%[7]d")]
}

data "zerotrust_mesh_service" "cart" {
  namespace  = %[3]q
  name       = "cart"
  depends_on = [zerotrust_mesh_service_identities.cart]
}

output "cart_ids" {
  value = data.zerotrust_mesh_service.cart.spiffe_ids
}
`, v.sail, kymaNS, kumaNS, meshPeer, bundles, v.kyma, v.msi)
}

// meshLifecycle runs create, refresh, update and import (by ID and by
// identity) of every mesh resource and reads the MeshService data source.
func (e *env) meshLifecycle(t *testing.T) string {
	e.meshObjects(t)
	pems := e.meshPEMs(t)
	dir := e.workdir(t, e.meshConfig(1, pems))
	out := e.mustTF(t, dir, "apply", "-auto-approve")
	expect(t, "mesh create", out, "Resources: 4 added", "spiffe://"+meshPeer+"/ns/shop/sa/cart1")
	e.emptyPlan(t, dir)
	e.write(t, dir, "main.tf", e.meshConfig(2, pems))
	expect(t, "mesh update", e.mustTF(t, dir, "apply", "-auto-approve"), "0 added, 4 changed, 0 destroyed")
	e.emptyPlan(t, dir)

	e.mustTF(t, dir, "state", "rm", "zerotrust_mesh_trust_domain.sail", "zerotrust_mesh_trust_domain.kyma",
		"zerotrust_mesh_trust_domain.kuma", "zerotrust_mesh_service_identities.cart")
	e.write(t, dir, "import.tf", fmt.Sprintf(`
import {
  to = zerotrust_mesh_trust_domain.sail
  id = "istio_sail:default"
}

import {
  to       = zerotrust_mesh_trust_domain.kyma
  identity = { kind = "istio_kyma", namespace = %[1]q, name = "default" }
}

import {
  to = zerotrust_mesh_trust_domain.kuma
  id = "kuma:%[2]s:%[3]s"
}

import {
  to       = zerotrust_mesh_service_identities.cart
  identity = { namespace = %[2]q, name = "cart" }
}
`, kymaNS, kumaNS, kumaMeshTrustName(meshPeer)))
	expect(t, "mesh import", e.mustTF(t, dir, "apply", "-auto-approve"), "4 imported, 0 added")
	e.emptyPlan(t, dir)
	return dir
}

// meshPEMs are the two CA certificates of meshPeer the Kuma MeshTrust
// holds, made once per run.
func (e *env) meshPEMs(t *testing.T) []string {
	if e.pems == nil {
		e.pems = []string{caPEM(t, meshPeer), caPEM(t, meshPeer)}
	}
	return e.pems
}

// kumaMeshTrustName is the MeshTrust name the resource derives from the
// trust domain.
func kumaMeshTrustName(td string) string {
	out := []byte(td)
	for i, b := range out {
		if b == '.' {
			out[i] = '-'
		}
	}
	return string(out)
}
