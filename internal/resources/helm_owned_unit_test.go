package resources

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func helmMarked(kind string, labels, annotations map[string]string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "spire.spiffe.io/v1alpha1", "kind": kind}}
	obj.SetName("spire-server-spire-peer")
	obj.SetLabels(labels)
	obj.SetAnnotations(annotations)
	return obj
}

// TestRefuseHelmOwned: only an object with Helm's label and release
// annotation is refused, the error names the release and where the chart's
// values declare the kind, and list results mark it.
func TestRefuseHelmOwned(t *testing.T) {
	helm := map[string]string{"app.kubernetes.io/managed-by": "Helm"}
	release := map[string]string{"meta.helm.sh/release-name": "spire", "meta.helm.sh/release-namespace": "spire-server"}
	for name, tc := range map[string]struct {
		obj     *unstructured.Unstructured
		refused bool
		words   []string
		display string
	}{
		"chart's federation": {helmMarked("ClusterFederatedTrustDomain", helm, release), true, []string{
			`ClusterFederatedTrustDomain "spire-server-spire-peer" on cluster "east" is owned by Helm release "spire" in namespace "spire-server"`,
			"(controllerManager.identities.clusterFederatedTrustDomains), or remove it there first",
		}, " [Helm release spire-server/spire]"},
		"chart's identity": {helmMarked("ClusterSPIFFEID", helm, release), true, []string{
			"(controllerManager.identities.clusterSPIFFEIDs)",
		}, " [Helm release spire-server/spire]"},
		"another chart's kind": {helmMarked("IstioCSR", helm, map[string]string{"meta.helm.sh/release-name": "csr"}), true, []string{
			`Helm release "csr" (label`, "Manage it in the release's values",
		}, " [Helm release csr]"},
		"label only":       {helmMarked("ClusterSPIFFEID", helm, nil), false, nil, ""},
		"annotations only": {helmMarked("ClusterSPIFFEID", nil, release), false, nil, ""},
		"another manager": {helmMarked("ClusterSPIFFEID", map[string]string{"app.kubernetes.io/managed-by": "kustomize"}, release),
			false, nil, ""},
	} {
		t.Run(name, func(t *testing.T) {
			var diags diag.Diagnostics
			if got := refuseHelmOwned(tc.obj, "east", path.Root("name"), &diags); got != tc.refused || diags.HasError() != tc.refused {
				t.Fatalf("refused = %v with %v, want %v", got, diags, tc.refused)
			}
			if tc.refused {
				detail := strings.Join(strings.Fields(diags[0].Detail()), " ")
				t.Logf("%s: %s", diags[0].Summary(), detail)
				for _, w := range tc.words {
					if !strings.Contains(detail, w) {
						t.Errorf("the error does not say %q: %s", w, detail)
					}
				}
			}
			if got := helmDisplaySuffix(tc.obj); got != tc.display {
				t.Errorf("display suffix %q, want %q", got, tc.display)
			}
		})
	}
}
