package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/clusterspiffeid"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireserverattr"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/workloadtrust"
)

var (
	_ resource.ResourceWithConfigure      = (*clusterSPIFFEIDResource)(nil)
	_ resource.ResourceWithIdentity       = (*clusterSPIFFEIDResource)(nil)
	_ resource.ResourceWithImportState    = (*clusterSPIFFEIDResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*clusterSPIFFEIDResource)(nil)
	_ resource.ResourceWithValidateConfig = (*clusterSPIFFEIDResource)(nil)
)

// clusterSPIFFEIDType: ClusterSPIFFEIDs are cluster-scoped.
var clusterSPIFFEIDType = &kubeType[clusterSPIFFEIDResourceModel]{
	typeInfo: &typeInfo{
		name:     typename.ClusterSPIFFEID,
		kinds:    []kube.Kind{kube.ClusterSPIFFEID},
		shape:    identityShape{},
		importID: importIDForm{note: ", e.g. \"west/workloads\""},
		planChecks: []string{
			"that spiffe_id_template renders an ID of the cluster's trust domain",
			"that every federates_with trust domain is declared by a federation of the cluster",
			"that no Helm release owns an object of the name a create would write",
		},
	},
	ref: func(m *clusterSPIFFEIDResourceModel) modelRef {
		return modelRef{id: &m.ID, cluster: m.Cluster, name: m.Name}
	},
	fromObject: clusterSPIFFEIDStateFromObject,
	refresh:    setClusterSPIFFEIDFromObject,
	readWhat: func(m clusterSPIFFEIDResourceModel, clusterName string) string {
		return "the " + clusterSPIFFEIDOn(m.Name, clusterName)
	},
	snapshot:   true,
	afterRead:  refreshFederationProblems,
	fastSchema: func() schema.Schema { return clusterSPIFFEIDSchema(context.Background()) },
	plan:       planClusterSPIFFEID,
	// Delete is the skeleton's: spire-controller-manager then deletes the
	// entries it rendered from the object.
}

// NewClusterSPIFFEIDResource manages a spire-controller-manager
// ClusterSPIFFEID, and waits until the workloads it selects federate.
func NewClusterSPIFFEIDResource() resource.Resource {
	return &clusterSPIFFEIDResource{kubeResource[clusterSPIFFEIDResourceModel]{kubeType: clusterSPIFFEIDType}}
}

type clusterSPIFFEIDResource struct {
	kubeResource[clusterSPIFFEIDResourceModel]
}

func (r *clusterSPIFFEIDResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.write(ctx, req.Plan, nil, &resp.State, resp.Identity, &resp.Diagnostics)
}

func (r *clusterSPIFFEIDResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.write(ctx, req.Plan, &req.State, &resp.State, resp.Identity, &resp.Diagnostics)
}

// write applies the planned object, a create's when prior is nil, and
// waits until its workloads federate; m.FederationProblems is what the wait
// left. A create whose wait fails returns no state: nothing is tainted, and
// the next apply applies the same object again (which changes nothing on
// the cluster) and waits again. An update stores the new spec with the
// problems found (also when the apply failed: the next refresh reads the
// object as it is), which the next plan shows and the next apply waits for.
func (r *clusterSPIFFEIDResource) write(ctx context.Context, planned tfsdk.Plan, prior *tfsdk.State,
	state *tfsdk.State, identity *tfsdk.ResourceIdentity, diags *diag.Diagnostics) {
	m, client := r.applying(ctx, planned, diags)
	if client == nil {
		return
	}
	if prior == nil {
		if _, ok := r.refuseForeign(ctx, client, &m, path.Root("name"),
			"or use zerotrust_cluster_spiffe_id_federation to add only federation to it", diags); !ok {
			return
		}
	}
	verb, timeout, ok := startFederationWrite(ctx, r.Data, client, m.Cluster, m.SpireServer, m.FederatesWith, m.Timeouts, prior, diags)
	if !ok {
		return
	}
	obj, d := clusterspiffeid.ObjectFromSpec(ctx, m.Name.ValueString(), m.Spec)
	if diags.Append(d...); !diags.HasError() {
		if _, err := client.Apply(ctx, kube.ClusterSPIFFEID, obj, m.ForceConflicts.ValueBool()); err != nil {
			diags.Append(kube.Diagnostic(err, verb+" the "+clusterSPIFFEIDOn(m.Name, client.DisplayName())))
		} else {
			m.FederationProblems = waitWorkloadsFederate(ctx, r.Data, client, m.SpireServer, m.Name.ValueString(),
				m.TrustDomains(), timeout, verb, diags)
		}
	}
	if prior != nil || !diags.HasError() {
		r.store(ctx, &m, state, identity, diags)
	}
}

// refreshFederationProblems is what Read does beyond the mapping: it asks
// whether the workloads still federate, with what the SPIRE server holds
// asked once per cluster and walk. A SPIRE server that cannot be asked
// keeps the prior answer.
func refreshFederationProblems(ctx context.Context, data *providerdata.Data, client *kube.Client, m *clusterSPIFFEIDResourceModel,
	_ *unstructured.Unstructured, _ privateSetter,
) diag.Diagnostics {
	tds := m.TrustDomains()
	if len(tds) == 0 || m.FederationProblems.IsNull() || m.FederationProblems.IsUnknown() {
		m.FederationProblems = types.ListValueMust(types.StringType, nil)
	}
	server, d := spireserverattr.ServerFrom(ctx, client, data, m.SpireServer)
	if len(tds) == 0 || d.HasError() {
		return nil
	}
	spire, err := workloadSPIRE(ctx, client, server)
	var problems map[string][]workloadtrust.Problem
	if err == nil {
		problems, err = workloadtrust.CheckWith(ctx, client, spire, []workloadtrust.Want{{Name: m.Name.ValueString(), FederatesWith: tds}})
	}
	if err != nil {
		tflog.Warn(ctx, "whether the workloads federate could not be asked; keeping the prior answer", map[string]any{
			string(typename.ClusterSPIFFEID): m.Name.ValueString(), "spire_server": server.String(), "error": err.Error()})
		return nil
	}
	m.FederationProblems = problemList(problems[m.Name.ValueString()])
	return nil
}
