package resources

import (
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// NewClusterSPIFFEIDFederationListResource lists the ClusterSPIFFEIDs that
// federate, for `terraform query` to adopt their federation.
func NewClusterSPIFFEIDFederationListResource() list.ListResource {
	return newListShell(clusterSPIFFEIDFederationType,
		"The federation (`spec.federatesWith`) of every spire-controller-manager ClusterSPIFFEID that has one, on one "+
			"cluster or all of them. ClusterSPIFFEIDs without federation are left out: there is nothing to adopt.",
		map[string]listschema.Attribute{},
		func(config clusterSPIFFEIDFederationListConfig) listConverter {
			return clusterSPIFFEIDFederationType.listedWhere(func(obj *unstructured.Unstructured) bool {
				spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
				return len(objStrings(spec, "federatesWith")) > 0
			})
		})
}

type clusterSPIFFEIDFederationListConfig struct {
	listScope
}
