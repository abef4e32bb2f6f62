package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// NewMeshTrustDomainListResource lists the mesh objects a
// zerotrust_mesh_trust_domain can manage: Kyma and Sail Istio objects and
// Kuma MeshTrusts.
func NewMeshTrustDomainListResource() list.ListResource {
	l := newListShell(meshTrustDomainType,
		"The mesh objects a `zerotrust_mesh_trust_domain` can manage, on one cluster or all "+
			"of them: Kyma Istio module and Sail operator `Istio` objects, and Kuma `MeshTrust`s. A MeshTrust "+
			"without a trust domain or with CA bundles other than PEM ones is left out, as the resource cannot "+
			"describe it.",
		map[string]listschema.Attribute{
			"kind": listschema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Only objects of this mesh kind: `istio_kyma`, `istio_sail` or `kuma`. Unset lists " +
					"all three.",
				Validators: []validator.String{stringvalidator.OneOf(meshKindNames()...)},
			},
			"trust_domain": listschema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Only objects whose trust domain is this one: the trust domain an Istio mesh runs " +
					"on (`cluster.local` for an object without one), the trust domain a MeshTrust holds CA bundles for.",
				Validators: []validator.String{validate.TrustDomain()},
			},
		},
		func(config meshTrustDomainListConfig) listConverter { return config.convert })
	l.kindsFor = func(config meshTrustDomainListConfig) []kube.Kind {
		var kinds []kube.Kind
		for _, name := range meshKindNames() {
			if config.Kind.IsNull() || config.Kind.ValueString() == name {
				kinds = append(kinds, meshKinds[name].kube)
			}
		}
		return kinds
	}
	return l
}

type meshTrustDomainListConfig struct {
	listScope
	Kind        types.String `tfsdk:"kind"`
	TrustDomain types.String `tfsdk:"trust_domain"`
}

// convert makes a list result of a mesh object the resource can describe
// and the config's filters let through.
func (config meshTrustDomainListConfig) convert(ctx context.Context, t listTarget, obj *unstructured.Unstructured, includeResource bool) (listedObject, bool, diag.Diagnostics) {
	kind, ok := meshKindOf(obj)
	if !ok || !meshManageable(kind, obj) {
		return listedObject{}, true, nil
	}
	if !config.TrustDomain.IsNull() && liveTrustDomainOf(kind, obj) != config.TrustDomain.ValueString() {
		return listedObject{}, true, nil
	}
	cluster := clusterValue(t.key)
	state, diags := meshTrustDomainStateFromObject(ctx, cluster, kind, obj)
	lo := listedObject{
		id:      objectIdentity{Cluster: t.key, Kind: kind.name, Namespace: obj.GetNamespace(), Name: obj.GetName()},
		display: state.ID.ValueString(),
	}
	if includeResource {
		lo.state = &state
	}
	return lo, false, diags
}

// meshKindOf tells which mesh kind obj is; the Kyma and Sail objects are
// both kind Istio, of different API groups.
func meshKindOf(obj *unstructured.Unstructured) (meshKind, bool) {
	for _, kind := range meshKinds {
		if obj.GetAPIVersion() == kind.kube.APIVersion() && obj.GetKind() == kind.kube.Kind {
			return kind, true
		}
	}
	return meshKind{}, false
}

// meshManageable reports whether the resource can describe obj. Every Istio
// object can; a MeshTrust needs a trust domain and only PEM CA bundles, the
// only type ca_bundles holds (an apply from the resource would drop others).
func meshManageable(kind meshKind, obj *unstructured.Unstructured) bool {
	if kind.name != meshKindKuma {
		return true
	}
	if td, _, _ := unstructured.NestedString(obj.Object, kind.trustDomainPath...); td == "" {
		return false
	}
	bundles, _, _ := unstructured.NestedSlice(obj.Object, kumaCABundlesPath...)
	for _, b := range bundles {
		bundle, _ := b.(map[string]any)
		if _, ok := objMap(bundle, "pem"); !ok || objText(bundle["type"]) != "Pem" {
			return false
		}
	}
	return len(bundles) > 0
}
