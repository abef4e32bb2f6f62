package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// checkClassServed warns when class, planned for a new object or a changed
// class_name of a kind spire-controller-manager reads (ClusterSPIFFEID,
// ClusterFederatedTrustDomain), is not the cluster's spire.class_name (its
// own `spire`, else the provider's) and nothing shows that a controller
// serves it: spire-controller-manager ignores objects of another class, so
// a ClusterSPIFFEID's workloads get no entries and a
// ClusterFederatedTrustDomain makes no federation relationship. The
// evidence is a ClusterSPIFFEID of that class whose status.stats a
// controller wrote, the one status either kind has. The cluster's class is
// trusted as stated; a cluster that cannot be listed gives no warning.
func checkClassServed(ctx context.Context, data *providerdata.Data, kind string, cluster, class types.String, diags *diag.Diagnostics) {
	if class.IsUnknown() || class.IsNull() || cluster.IsUnknown() || class.ValueString() == data.SpireAt(cluster).ClassName {
		return
	}
	ctx, client, cancel := planLookup(ctx, data, cluster, planLookupTimeout, diags)
	defer cancel()
	if client == nil {
		return
	}
	items, err := client.ListOnce(ctx, kube.ClusterSPIFFEID)
	if err != nil {
		return
	}
	for _, item := range items {
		c, _, _ := unstructured.NestedString(item.Object, "spec", "className")
		if _, rendered, _ := unstructured.NestedMap(item.Object, "status", "stats"); rendered && c == class.ValueString() {
			return
		}
	}
	name := fmt.Sprintf("%q", class.ValueString())
	if class.ValueString() == "" {
		name = "none (no spec.className)"
	}
	configured := fmt.Sprintf("%q", data.SpireOf(client).ClassName)
	if data.SpireOf(client).ClassName == "" {
		configured = "unset"
	}
	effect := "the selected workloads get no entries and the apply waits until its timeout"
	if kind != "ClusterSPIFFEID" {
		effect = "SPIRE gets no federation relationship from it"
	}
	diags.AddAttributeWarning(path.Root("class_name"), "No Controller Known to Serve This Class",
		fmt.Sprintf("The class of this %s is %s, but the cluster's spire.class_name is %s, and no "+
			"ClusterSPIFFEID of that class on cluster %q has been rendered by a spire-controller-manager (status.stats). "+
			"A controller ignores objects of another class than its own (its className; class-less objects only with "+
			"watchClassless), so unless one serves this class, %s. Set class_name to the class the cluster's "+
			"controller serves, or leave it unset to use the cluster's.", kind, name, configured, client.DisplayName(), effect))
}
