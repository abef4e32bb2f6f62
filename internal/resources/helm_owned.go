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
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spirefacts"
)

// This file is shared by every resource of Kubernetes objects: objects a
// Helm release owns. Helm marks each object it installs with the label
// app.kubernetes.io/managed-by=Helm and the annotations naming its release,
// and takes the object back on its next upgrade: a Terraform resource over
// it would fight the release (each writing its own spec) and its destroy
// would delete what the release still declares. So a create or import of
// such an object is refused, at plan where the cluster answers and in any
// case before the apply writes, with the way out; resources that manage
// only a part of another's object (typeInfo.sharesObject) go on.

// helmRelease is the release that owns obj, from Helm's marks; ok is false
// when obj carries them not both.
type helmRelease struct{ name, namespace string }

func helmOwnerOf(obj *unstructured.Unstructured) (rel helmRelease, ok bool) {
	if obj == nil || obj.GetLabels()[spirefacts.OperatorManagedByLabel] != spirefacts.HelmManagedByValue {
		return rel, false
	}
	ann := obj.GetAnnotations()
	rel = helmRelease{name: ann[spirefacts.HelmReleaseNameAnnotation], namespace: ann[spirefacts.HelmReleaseNamespaceAnnotation]}
	return rel, rel.name != ""
}

// String names the release as `helm list -n <namespace>` shows it.
func (r helmRelease) String() string {
	if r.namespace == "" {
		return fmt.Sprintf("%q", r.name)
	}
	return fmt.Sprintf("%q in namespace %q", r.name, r.namespace)
}

// helmValuesOf is where the SPIFFE Helm chart (spire) declares objects of a
// kind, for the refusal's advice; other kinds are "the release's values".
var helmValuesOf = map[string]string{
	kube.ClusterFederatedTrustDomain.Kind: "controllerManager.identities.clusterFederatedTrustDomains",
	kube.ClusterSPIFFEID.Kind:             "controllerManager.identities.clusterSPIFFEIDs",
}

// refuseHelmOwned adds the error for a create or import of obj (on the
// cluster named clusterName) that a Helm release owns, at attribute at (an
// import: path.Empty()), and reports whether it did.
func refuseHelmOwned(obj *unstructured.Unstructured, clusterName string, at path.Path, diags *diag.Diagnostics) bool {
	rel, ok := helmOwnerOf(obj)
	if !ok {
		return false
	}
	what := fmt.Sprintf("%s %q", obj.GetKind(), obj.GetName())
	if obj.GetNamespace() != "" {
		what = fmt.Sprintf("%s %s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())
	}
	values := "the release's values"
	if v, found := helmValuesOf[obj.GetKind()]; found {
		values = "the chart's values (" + v + ")"
	}
	detail := fmt.Sprintf("The %s on cluster %q is owned by Helm release %s (label %s=%s, annotations %s and %s). "+
		"Terraform neither takes over nor imports an object a Helm release owns: the next helm upgrade would write "+
		"the release's spec back, and a destroy would delete what the release still declares. Manage it in %s, "+
		"or remove it there first (helm upgrade then deletes it; with the annotation helm.sh/resource-policy=keep "+
		"it stays, and removing Helm's label and annotations from it hands it over) and then create or import it "+
		"with Terraform.", what, clusterName, rel, spirefacts.OperatorManagedByLabel, spirefacts.HelmManagedByValue,
		spirefacts.HelmReleaseNameAnnotation, spirefacts.HelmReleaseNamespaceAnnotation, values)
	if at.Equal(path.Empty()) {
		diags.AddError("Object Owned by Helm", detail)
	} else {
		diags.AddAttributeError(at, "Object Owned by Helm", detail)
	}
	return true
}

// planRefuseHelmOwned is refuseHelmOwned at plan: it reads the object a
// create would write, when the cluster answers (the apply's adoptGuard
// refuses otherwise). A failed read adds nothing: the apply reads again.
func planRefuseHelmOwned(ctx context.Context, data *providerdata.Data, cluster types.String, kind kube.Kind,
	namespace, name string, at path.Path, diags *diag.Diagnostics,
) {
	ctx, client, cancel := planLookup(ctx, data, cluster, planLookupTimeout, diags)
	defer cancel()
	if client == nil {
		return
	}
	obj, err := client.Get(ctx, kind, namespace, name)
	if err != nil {
		return
	}
	refuseHelmOwned(obj, client.DisplayName(), at, diags)
}

// helmDisplaySuffix is what a list result's display name adds for an
// object a Helm release owns: the owner, as an error would name it.
func helmDisplaySuffix(obj *unstructured.Unstructured) string {
	rel, ok := helmOwnerOf(obj)
	if !ok {
		return ""
	}
	if rel.namespace == "" {
		return " [Helm release " + rel.name + "]"
	}
	return " [Helm release " + rel.namespace + "/" + rel.name + "]"
}
