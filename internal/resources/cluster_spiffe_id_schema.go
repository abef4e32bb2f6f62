package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/durationtype"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireserverattr"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

func (r *clusterSPIFFEIDResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = clusterSPIFFEIDSchema(ctx)
}

// clusterSPIFFEIDTemplateText says what the controller renders a template with.
const clusterSPIFFEIDTemplateText = "A Go template over spire-controller-manager's data: `.TrustDomain`, `.ClusterName`, " +
	"`.ClusterDomain`, `.PodMeta`, `.PodSpec`, `.NodeMeta`, `.NodeSpec` (Kubernetes object fields by their Go names, " +
	"such as `.PodMeta.Namespace` or `.PodSpec.ServiceAccountName`)."

func clusterSPIFFEIDSchema(ctx context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "A spire-controller-manager `ClusterSPIFFEID` (`spire.spiffe.io/v1alpha1`, cluster-scoped): " +
			"the template from which the controller registers the pods it selects with the cluster's SPIRE server, and " +
			"the trust domains their entries federate with (`federates_with`), which is what lets those workloads " +
			"accept the SVIDs of federated peers.\n\n" +
			"Create and update end when the workloads actually federate, not when the object is stored: the cluster's " +
			"SPIRE server holds a bundle of every `federates_with` trust domain, spire-controller-manager rendered the " +
			"entries without failures (`status.stats`), and SPIRE's entry of every selected pod carries the federation " +
			"(asked through pod exec of `spire-server bundle list` and `entry show`, see `spire_server`). SPIRE refuses " +
			"an entry that federates with a trust domain whose bundle it does not hold, so declare each peer's " +
			"federation (`zerotrust_federated_trust_domain`) and make this resource depend on it; a `federates_with` " +
			"trust domain no federation on the cluster declares is a warning at plan (an earlier resource of the same " +
			"apply, such as a `kubernetes_manifest`, may create its ClusterFederatedTrustDomain) and an error at apply, " +
			"asked again before anything is written. A refresh that finds the workloads no " +
			"longer federating (entries without the federation, render failures) plans an update of " +
			"`federation_problems` that names them, and the apply waits for the repair again.\n\n" +
			"To add federation to a ClusterSPIFFEID that a Helm chart or operator owns, without taking the rest of " +
			"the object over, use `zerotrust_cluster_spiffe_id_federation` instead.",
		Attributes: map[string]schema.Attribute{
			"id": idAttribute("`<name>` on the provider's `kubernetes` connection, `<cluster>/<name>` otherwise; " +
				"also the import ID."),
			"cluster": clusterAttribute(),
			"name": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Name of the ClusterSPIFFEID. Changing it replaces the object.",
				Validators:          []validator.String{validate.K8sName()},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"spiffe_id_template": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Template of the SPIFFE ID each selected pod gets (`spec.spiffeIDTemplate`), such as " +
					"`spiffe://{{ .TrustDomain }}/ns/{{ .PodMeta.Namespace }}/sa/{{ .PodSpec.ServiceAccountName }}`. " +
					clusterSPIFFEIDTemplateText + " The rendered ID must be in the cluster's trust domain: the plan " +
					"refuses a template that does not parse or cannot render one.",
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"pod_selector": labelSelectorAttribute("Pods it selects (`spec.podSelector`), in every selected namespace. " +
				"Unset selects every pod."),
			"namespace_selector": labelSelectorAttribute("Namespaces whose pods it selects (`spec.namespaceSelector`). " +
				"Unset selects every namespace the controller does not ignore (by default `kube-system`, " +
				"`kube-public` and `spire-system`)."),
			"federates_with": schema.SetAttribute{
				Optional:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Trust domains the entries federate with (`spec.federatesWith`): the workloads get " +
					"these trust domains' bundles and accept their SVIDs. Not the cluster's own trust domain; each must " +
					"be declared by a federation on the cluster (a ClusterFederatedTrustDomain on the cluster, or one planned " +
					"earlier in the same run, or `federates_with` of `zerotrust_spire_federation`): the plan warns about " +
					"one it cannot find, and the apply, which asks again when it creates the object or changes this set, " +
					"refuses it before writing. An empty set is the same as none (a computed list of " +
					"the peers federated so far may be empty).",
				Validators: []validator.Set{setvalidator.ValueStringsAre(validate.TrustDomain())},
			},
			"dns_name_templates": schema.ListAttribute{
				Optional:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Templates of DNS names in the SVIDs (`spec.dnsNameTemplates`). " +
					clusterSPIFFEIDTemplateText,
				Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(1))},
			},
			"workload_selector_templates": schema.ListAttribute{
				Optional:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Templates of extra workload selectors (`type:value`) of each entry " +
					"(`spec.workloadSelectorTemplates`). " + clusterSPIFFEIDTemplateText,
				Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(1))},
			},
			"ttl": schema.StringAttribute{
				CustomType:          durationtype.Type{},
				Optional:            true,
				MarkdownDescription: "X.509-SVID lifetime of the entries (`spec.ttl`), a Go duration such as `1h`. Unset: SPIRE's default.",
				Validators:          []validator.String{validate.Duration()},
			},
			"jwt_ttl": schema.StringAttribute{
				CustomType:          durationtype.Type{},
				Optional:            true,
				MarkdownDescription: "JWT-SVID lifetime of the entries (`spec.jwtTtl`). Unset: SPIRE's default.",
				Validators:          []validator.String{validate.Duration()},
			},
			"hint": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Hint of the entries (`spec.hint`), which workloads see to choose among several SVIDs.",
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"fallback":                clusterSPIFFEIDFlag("`spec.fallback`: applies only to pods no other ClusterSPIFFEID registers."),
			"admin":                   clusterSPIFFEIDFlag("`spec.admin`: the workloads may call SPIRE's administrative API."),
			"downstream":              clusterSPIFFEIDFlag("`spec.downstream`: the workloads are downstream SPIRE servers."),
			"auto_populate_dns_names": clusterSPIFFEIDFlag("`spec.autoPopulateDNSNames`: add the DNS names of the pods' Services."),
			"class_name": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "spire-controller-manager class that acts on the object (`spec.className`). Unset: the " +
					"provider's `spire.class_name` at creation (none when that is unset). A controller ignores objects " +
					"of another class; the plan warns when the cluster's SPIRE namespace runs none of this class.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"spire_server": spireserverattr.ResourceAttribute("The SPIRE server pod asked (pod exec) whether the workloads " +
				"federate, after create and update and at refresh. Unset: `spire-server-0`, container `spire-server`, in " +
				"the provider's `spire.namespace`."),
			"federation_problems": schema.ListAttribute{
				Computed:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Why the selected workloads do not federate as declared, found at the last refresh " +
					"(empty when they do, or when the SPIRE server could not be asked). A plan after a refresh that " +
					"found problems sets it to empty, which the apply brings about by waiting for the repair.",
			},
			"force_conflicts": forceConflictsAttribute(),
			"timeouts":        timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true}),
		},
	}
}

func clusterSPIFFEIDFlag(description string) schema.BoolAttribute {
	return schema.BoolAttribute{Optional: true, MarkdownDescription: description + " Unset means `false`."}
}

// labelSelectorAttribute is a Kubernetes LabelSelector.
func labelSelectorAttribute(description string) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional:            true,
		MarkdownDescription: description,
		Attributes: map[string]schema.Attribute{
			"match_labels": schema.MapAttribute{
				Optional:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "Labels an object must carry, all of them (`matchLabels`).",
				Validators: []validator.Map{mapvalidator.KeysAre(validate.LabelKey()),
					mapvalidator.ValueStringsAre(validate.LabelValue())},
			},
			"match_expressions": schema.ListNestedAttribute{
				Optional:            true,
				MarkdownDescription: "Label requirements, all of which must hold (`matchExpressions`).",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"key": schema.StringAttribute{Required: true, MarkdownDescription: "The label's key.",
						Validators: []validator.String{validate.LabelKey()}},
					"operator": schema.StringAttribute{Required: true,
						MarkdownDescription: "`In`, `NotIn`, `Exists` or `DoesNotExist`.",
						Validators:          []validator.String{stringvalidator.OneOf("In", "NotIn", "Exists", "DoesNotExist")}},
					"values": schema.ListAttribute{Optional: true, ElementType: types.StringType,
						MarkdownDescription: "Values for `In` and `NotIn` (at least one); none for `Exists` and `DoesNotExist`.",
						Validators:          []validator.List{listvalidator.ValueStringsAre(validate.LabelValue())}},
				}},
			},
		},
	}
}
