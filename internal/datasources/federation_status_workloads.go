package datasources

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/workloadtrust"
)

// fsWorkloads is the finding for one ClusterSPIFFEID that federates: whether
// SPIRE's entries of the pods it selects carry the federation it declares.
type fsWorkloads struct {
	ClusterKey, Cluster string
	Name                string
	FederatesWith       []string
	Problems            []string
}

// checkWorkloads reports every ClusterSPIFFEID of the cluster that declares
// federatesWith, asking SPIRE once for its entries (bundles come from the
// view already asked). A cluster without the kind has none; what cannot be
// asked is a cluster problem.
func checkWorkloads(ctx context.Context, c fsCluster, view spireexec.View, spireErr error) ([]fsWorkloads, []string) {
	name := c.Client.DisplayName()
	objs, err := c.Client.List(ctx, kube.ClusterSPIFFEID, "")
	if err != nil {
		if served, serr := c.Client.Served(ctx, kube.ClusterSPIFFEID); serr == nil && !served {
			return nil, nil
		}
		return nil, []string{fmt.Sprintf("%s: cannot list its ClusterSPIFFEIDs: %v", name, err)}
	}
	var want []workloadtrust.Want
	for _, o := range objs {
		with, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "federatesWith")
		if len(with) > 0 {
			slices.Sort(with)
			want = append(want, workloadtrust.Want{Name: o.GetName(), FederatesWith: with})
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	if spireErr != nil {
		return nil, nil // the federations report it already
	}
	spire := workloadtrust.SPIRE{Bundles: map[string]bool{}}
	for td := range view.Bundles {
		spire.Bundles[td] = true
	}
	if spire.Entries, err = workloadtrust.AskEntries(ctx, c.Spire); err != nil {
		return nil, []string{fmt.Sprintf("%s: cannot list the registration entries of the %s: %v", name, fsServerName(c.Spire), err)}
	}
	found, err := workloadtrust.CheckWith(ctx, c.Client, spire, want)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: cannot check whether its ClusterSPIFFEIDs' workloads federate: %v", name, err)}
	}
	var report []fsWorkloads
	for _, w := range want {
		r := fsWorkloads{ClusterKey: c.Key, Cluster: name, Name: w.Name, FederatesWith: w.FederatesWith}
		for _, p := range found[w.Name] {
			r.Problems = append(r.Problems, fmt.Sprintf("%s: ClusterSPIFFEID %s: %s", name, w.Name, p))
		}
		report = append(report, r)
	}
	return report, nil
}

// fsWorkloadsAttribute is the `workloads` attribute.
func fsWorkloadsAttribute() schema.ListNestedAttribute {
	return schema.ListNestedAttribute{
		Computed: true,
		MarkdownDescription: "One entry per cluster and ClusterSPIFFEID that declares `federatesWith`: whether SPIRE's " +
			"entries of the pods it selects carry that federation (asked with `spire-server entry show`; the pods " +
			"listed as spire-controller-manager selects them). Its problems are in `problems` too.",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"cluster": schema.StringAttribute{Computed: true, MarkdownDescription: "Key of the cluster; null for the `kubernetes` connection."},
			"name":    schema.StringAttribute{Computed: true, MarkdownDescription: "Name of the ClusterSPIFFEID."},
			"federates_with": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				MarkdownDescription: "`spec.federatesWith`, sorted."},
			"problems": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				MarkdownDescription: "Why its workloads do not federate as declared (a bundle SPIRE lacks, the controller's " +
					"failures, an entry without the federation); empty when they do."},
		}},
	}
}

var fsWorkloadsAttrTypes = map[string]attr.Type{
	"cluster": types.StringType, "name": types.StringType,
	"federates_with": types.ListType{ElemType: types.StringType}, "problems": types.ListType{ElemType: types.StringType},
}

func fsWorkloadsValue(ctx context.Context, report []fsWorkloads, diags *diag.Diagnostics) types.List {
	slices.SortFunc(report, func(a, b fsWorkloads) int {
		if c := strings.Compare(a.ClusterKey, b.ClusterKey); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	items := make([]attr.Value, 0, len(report))
	for _, r := range report {
		cluster := types.StringValue(r.ClusterKey)
		if r.ClusterKey == kube.DefaultKey {
			cluster = types.StringNull()
		}
		with, d := types.ListValueFrom(ctx, types.StringType, r.FederatesWith)
		diags.Append(d...)
		problems, d := types.ListValueFrom(ctx, types.StringType, append([]string{}, r.Problems...))
		diags.Append(d...)
		obj, d := types.ObjectValue(fsWorkloadsAttrTypes, map[string]attr.Value{
			"cluster": cluster, "name": types.StringValue(r.Name), "federates_with": with, "problems": problems,
		})
		diags.Append(d...)
		items = append(items, obj)
	}
	list, d := types.ListValue(types.ObjectType{AttrTypes: fsWorkloadsAttrTypes}, items)
	diags.Append(d...)
	return list
}
