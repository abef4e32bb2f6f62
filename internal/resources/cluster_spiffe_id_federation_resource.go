package resources

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
)

var (
	_ resource.ResourceWithConfigure   = (*clusterSPIFFEIDFederationResource)(nil)
	_ resource.ResourceWithIdentity    = (*clusterSPIFFEIDFederationResource)(nil)
	_ resource.ResourceWithImportState = (*clusterSPIFFEIDFederationResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*clusterSPIFFEIDFederationResource)(nil)
)

// clusterSPIFFEIDFederationType: the federation of a ClusterSPIFFEID
// (cluster-scoped) someone else owns.
var clusterSPIFFEIDFederationType = &kubeType[clusterSPIFFEIDFederationResourceModel]{
	typeInfo: &typeInfo{
		name:         typename.ClusterSPIFFEIDFederation,
		sharesObject: true,
		kinds:        []kube.Kind{kube.ClusterSPIFFEID},
		shape:        identityShape{},
		importID:     importIDForm{note: ", e.g. \"west/default\""},
		planChecks: []string{
			"that the ClusterSPIFFEID exists",
			"that every federates_with trust domain is declared by a federation of the cluster",
		},
	},
	ref: func(m *clusterSPIFFEIDFederationResourceModel) modelRef {
		return modelRef{id: &m.ID, cluster: m.Cluster, name: m.Name}
	},
	fromObject: func(_ context.Context, cluster types.String, obj *unstructured.Unstructured, _ *kube.Client) (clusterSPIFFEIDFederationResourceModel, diag.Diagnostics) {
		return clusterSPIFFEIDFederationStateFromObject(cluster, obj), nil
	},
	refresh: func(_ context.Context, m *clusterSPIFFEIDFederationResourceModel, obj *unstructured.Unstructured) diag.Diagnostics {
		setClusterSPIFFEIDFederationFromObject(m, obj)
		return nil
	},
	readWhat: func(m clusterSPIFFEIDFederationResourceModel, clusterName string) string {
		return "the federation of the " + clusterSPIFFEIDOn(m.Name, clusterName)
	},
	importWhat: func(id objectIdentity) string { return "the federation of ClusterSPIFFEID " + id.Name },
	snapshot:   true,
	deleting:   releaseClusterSPIFFEIDFederation,
}

// NewClusterSPIFFEIDFederationResource manages spec.federatesWith of an
// existing ClusterSPIFFEID, and waits until its workloads federate.
func NewClusterSPIFFEIDFederationResource() resource.Resource {
	return &clusterSPIFFEIDFederationResource{kubeResource[clusterSPIFFEIDFederationResourceModel]{kubeType: clusterSPIFFEIDFederationType}}
}

type clusterSPIFFEIDFederationResource struct {
	kubeResource[clusterSPIFFEIDFederationResourceModel]
}

func (r *clusterSPIFFEIDFederationResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.write(ctx, req.Plan, nil, &resp.State, resp.Identity, &resp.Diagnostics)
}

func (r *clusterSPIFFEIDFederationResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.write(ctx, req.Plan, &req.State, &resp.State, resp.Identity, &resp.Diagnostics)
}

// write applies the planned federatesWith to the existing ClusterSPIFFEID,
// a create's when prior is nil, and waits until its workloads federate. The
// apply carries the object's UID, which the API server treats as a
// precondition: an apply to a missing object would create a ClusterSPIFFEID
// holding nothing but federatesWith. As zerotrust_cluster_spiffe_id: a
// create whose wait fails returns no state, and the next apply writes the
// same list again and waits again; an update that wrote the list stores it,
// federating or not.
func (r *clusterSPIFFEIDFederationResource) write(ctx context.Context, planned tfsdk.Plan, prior *tfsdk.State,
	state *tfsdk.State, identity *tfsdk.ResourceIdentity, diags *diag.Diagnostics) {
	m, client := r.applying(ctx, planned, diags)
	if client == nil {
		return
	}
	verb, timeout, ok := startFederationWrite(ctx, r.Data, client, m.Cluster, m.SpireServer, m.FederatesWith, m.Timeouts, prior, diags)
	if !ok {
		return
	}
	action := verb + " the federation of the " + clusterSPIFFEIDOn(m.Name, client.DisplayName())
	existing, err := client.Get(ctx, kube.ClusterSPIFFEID, "", m.Name.ValueString())
	if kube.IsNotFound(err) {
		diags.Append(clusterSPIFFEIDNotFound(m, client.DisplayName(), "Could not "+action))
		return
	}
	if err != nil {
		diags.Append(kube.Diagnostic(err, action))
		return
	}
	obj := clusterSPIFFEIDFederationObjectFromModel(m)
	obj.SetUID(existing.GetUID())
	if _, err := client.Apply(ctx, kube.ClusterSPIFFEID, obj, m.ForceConflicts.ValueBool()); err != nil {
		if kube.IsUIDMismatch(err) {
			diags.Append(clusterSPIFFEIDNotFound(m, client.DisplayName(), "Could not "+action+" (it was deleted meanwhile)"))
			return
		}
		diags.Append(kube.Diagnostic(err, action))
		return
	}
	waitWorkloadsFederate(ctx, r.Data, client, m.SpireServer, m.Name.ValueString(), m.federatesWith(), timeout, verb, diags)
	if prior != nil || !diags.HasError() {
		r.store(ctx, &m, state, identity, diags)
	}
}

// clusterSPIFFEIDNotFound is the error for a ClusterSPIFFEID that does not exist.
func clusterSPIFFEIDNotFound(m clusterSPIFFEIDFederationResourceModel, clusterName, lead string) diag.Diagnostic {
	return diag.NewAttributeErrorDiagnostic(path.Root("name"), "ClusterSPIFFEID Not Found", fmt.Sprintf(
		"%s: ClusterSPIFFEID %q does not exist on cluster %q. This resource sets only spec.federatesWith of an "+
			"existing ClusterSPIFFEID: create it first (zerotrust_cluster_spiffe_id manages one in full), and make "+
			"this resource depend on what creates it.", lead, m.Name.ValueString(), clusterName))
}

// releaseClusterSPIFFEIDFederation is the descriptor's deleting: it
// removes this resource's trust domains and nothing else. It gives the
// field up (server-side apply of nothing), and when the list still holds
// them (another manager applied the same list) or lost others' trust
// domains with them (the list is atomic), writes back the others by a merge
// patch. The ClusterSPIFFEID stays.
func releaseClusterSPIFFEIDFederation(ctx context.Context, _ *kubeResource[clusterSPIFFEIDFederationResourceModel], client *kube.Client,
	state clusterSPIFFEIDFederationResourceModel, diags *diag.Diagnostics,
) {
	action := "remove the federation of the " + clusterSPIFFEIDOn(state.Name, client.DisplayName())
	name := state.Name.ValueString()
	obj, err := client.Get(ctx, kube.ClusterSPIFFEID, "", name)
	if kube.IsNotFound(err) || kube.IsCRDNotInstalled(err) {
		return
	}
	if err != nil {
		diags.Append(kube.Diagnostic(err, action))
		return
	}
	ours := state.federatesWith()
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	var others []string
	for _, td := range objStrings(spec, "federatesWith") {
		if !slices.Contains(ours, td) {
			others = append(others, td)
		}
	}
	if err := releaseFields(ctx, client, kube.ClusterSPIFFEID, obj); err != nil {
		diags.Append(kube.Diagnostic(err, action))
		return
	}
	after, err := client.Get(ctx, kube.ClusterSPIFFEID, "", name)
	if kube.IsNotFound(err) {
		return
	}
	if err != nil {
		diags.Append(kube.Diagnostic(err, action))
		return
	}
	spec, _, _ = unstructured.NestedMap(after.Object, "spec")
	if slices.Equal(objStrings(spec, "federatesWith"), others) {
		return
	}
	var list any = others
	if len(others) == 0 {
		list = nil // a merge patch removes the field
	}
	patch, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": string(after.GetUID())},
		"spec":     map[string]any{"federatesWith": list},
	})
	if _, err := client.MergePatch(ctx, kube.ClusterSPIFFEID, "", name, patch); err != nil && !kube.IsNotFound(err) {
		diags.Append(kube.Diagnostic(err, action))
	}
}
