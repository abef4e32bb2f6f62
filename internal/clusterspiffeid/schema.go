package clusterspiffeid

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/durationtype"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// TemplateText says what the controller renders a template with.
const TemplateText = "A Go template over spire-controller-manager's data: `.TrustDomain`, `.ClusterName`, " +
	"`.ClusterDomain`, `.PodMeta`, `.PodSpec`, `.NodeMeta`, `.NodeSpec` (Kubernetes object fields by their Go names, " +
	"such as `.PodMeta.Namespace` or `.PodSpec.ServiceAccountName`)."

// field says what each Spec attribute holds, the same words for the
// resource and the data source; each schema adds what is its own (what a
// configuration may set, what reads as null).
var field = map[string]string{
	"spiffe_id_template": "Template of the SPIFFE ID each selected pod gets (`spec.spiffeIDTemplate`), such as " +
		"`spiffe://{{ .TrustDomain }}/ns/{{ .PodMeta.Namespace }}/sa/{{ .PodSpec.ServiceAccountName }}`. " + TemplateText,
	"pod_selector":       "Pods it selects (`spec.podSelector`), in every selected namespace.",
	"namespace_selector": "Namespaces whose pods it selects (`spec.namespaceSelector`).",
	"federates_with": "Trust domains the entries federate with (`spec.federatesWith`): the workloads get " +
		"these trust domains' bundles and accept their SVIDs.",
	"dns_name_templates":          "Templates of DNS names in the SVIDs (`spec.dnsNameTemplates`). " + TemplateText,
	"workload_selector_templates": "Templates of extra workload selectors (`type:value`) of each entry (`spec.workloadSelectorTemplates`). " + TemplateText,
	"ttl":                         "X.509-SVID lifetime of the entries (`spec.ttl`), a Go duration such as `1h`.",
	"jwt_ttl":                     "JWT-SVID lifetime of the entries (`spec.jwtTtl`).",
	"hint":                        "Hint of the entries (`spec.hint`), which workloads see to choose among several SVIDs.",
	"fallback":                    "`spec.fallback`: applies only to pods no other ClusterSPIFFEID registers.",
	"admin":                       "`spec.admin`: the workloads may call SPIRE's administrative API.",
	"downstream":                  "`spec.downstream`: the workloads are downstream SPIRE servers.",
	"auto_populate_dns_names":     "`spec.autoPopulateDNSNames`: add the DNS names of the pods' Services.",
	"class_name":                  "spire-controller-manager class that acts on the object (`spec.className`).",
	"match_labels":                "Labels an object must carry, all of them (`matchLabels`).",
	"match_expressions":           "Label requirements, all of which must hold (`matchExpressions`).",
	"key":                         "The label's key.",
	"operator":                    "`In`, `NotIn`, `Exists` or `DoesNotExist`.",
	"values":                      "Values for `In` and `NotIn` (at least one); none for `Exists` and `DoesNotExist`.",
}

// ResourceAttributes are the Spec attributes of zerotrust_cluster_spiffe_id,
// as a configuration sets them.
func ResourceAttributes() map[string]rschema.Attribute {
	templates := []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(1))}
	flag := func(name string) rschema.BoolAttribute {
		return rschema.BoolAttribute{Optional: true, MarkdownDescription: field[name] + " Unset means `false`."}
	}
	return map[string]rschema.Attribute{
		"spiffe_id_template": rschema.StringAttribute{
			Required: true,
			MarkdownDescription: field["spiffe_id_template"] + " The rendered ID must be in the cluster's trust domain: " +
				"the plan refuses a template that does not parse or cannot render one.",
			Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
		},
		"pod_selector": resourceSelector(field["pod_selector"] + " Unset selects every pod."),
		"namespace_selector": resourceSelector(field["namespace_selector"] + " Unset selects every namespace the " +
			"controller does not ignore (by default `kube-system`, `kube-public` and `spire-system`)."),
		"federates_with": rschema.SetAttribute{
			Optional:    true,
			ElementType: types.StringType,
			MarkdownDescription: field["federates_with"] + " Not the cluster's own trust domain; each must be declared by " +
				"a federation on the cluster (a ClusterFederatedTrustDomain on the cluster, or one planned earlier in the " +
				"same run, or `federates_with` of `zerotrust_spire_federation`): the plan warns about one it cannot find, " +
				"and the apply, which asks again when it creates the object or changes this set, refuses it before " +
				"writing. An empty set is the same as none (a computed list of the peers federated so far may be empty).",
			Validators: []validator.Set{setvalidator.ValueStringsAre(validate.TrustDomain())},
		},
		"dns_name_templates": rschema.ListAttribute{Optional: true, ElementType: types.StringType,
			MarkdownDescription: field["dns_name_templates"], Validators: templates},
		"workload_selector_templates": rschema.ListAttribute{Optional: true, ElementType: types.StringType,
			MarkdownDescription: field["workload_selector_templates"], Validators: templates},
		"ttl": rschema.StringAttribute{CustomType: durationtype.Type{}, Optional: true,
			MarkdownDescription: field["ttl"] + " Unset: SPIRE's default.", Validators: []validator.String{validate.Duration()}},
		"jwt_ttl": rschema.StringAttribute{CustomType: durationtype.Type{}, Optional: true,
			MarkdownDescription: field["jwt_ttl"] + " Unset: SPIRE's default.", Validators: []validator.String{validate.Duration()}},
		"hint": rschema.StringAttribute{Optional: true, MarkdownDescription: field["hint"],
			Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
		"fallback":                flag("fallback"),
		"admin":                   flag("admin"),
		"downstream":              flag("downstream"),
		"auto_populate_dns_names": flag("auto_populate_dns_names"),
		"class_name": rschema.StringAttribute{
			Optional: true,
			Computed: true,
			MarkdownDescription: field["class_name"] + " Unset: the cluster's `spire.class_name` at creation (its own " +
				"`spire`, else the provider's; the install's default class when unset, none when set to `\"\"`). A controller " +
				"ignores objects of another class; the plan warns when no controller of the cluster is known to serve this class.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
	}
}

// resourceSelector is a Kubernetes LabelSelector a configuration sets.
func resourceSelector(description string) rschema.SingleNestedAttribute {
	return rschema.SingleNestedAttribute{
		Optional:            true,
		MarkdownDescription: description,
		Attributes: map[string]rschema.Attribute{
			"match_labels": rschema.MapAttribute{
				Optional:            true,
				ElementType:         types.StringType,
				MarkdownDescription: field["match_labels"],
				Validators: []validator.Map{mapvalidator.KeysAre(validate.LabelKey()),
					mapvalidator.ValueStringsAre(validate.LabelValue())},
			},
			"match_expressions": rschema.ListNestedAttribute{
				Optional:            true,
				MarkdownDescription: field["match_expressions"],
				NestedObject: rschema.NestedAttributeObject{Attributes: map[string]rschema.Attribute{
					"key": rschema.StringAttribute{Required: true, MarkdownDescription: field["key"],
						Validators: []validator.String{validate.LabelKey()}},
					"operator": rschema.StringAttribute{Required: true, MarkdownDescription: field["operator"],
						Validators: []validator.String{stringvalidator.OneOf("In", "NotIn", "Exists", "DoesNotExist")}},
					"values": rschema.ListAttribute{Optional: true, ElementType: types.StringType,
						MarkdownDescription: field["values"],
						Validators:          []validator.List{listvalidator.ValueStringsAre(validate.LabelValue())}},
				}},
			},
		},
	}
}

// DataSourceAttributes are the same attributes, of the same types, as the
// data source reads them: what the object holds, as the resource's import
// reads it (null where the object leaves a field out, class_name "").
func DataSourceAttributes() map[string]dschema.Attribute {
	const unset = " Null when the object leaves it out."
	str := func(name string) dschema.StringAttribute {
		return dschema.StringAttribute{Computed: true, MarkdownDescription: field[name] + unset}
	}
	duration := func(name string) dschema.StringAttribute {
		return dschema.StringAttribute{Computed: true, CustomType: durationtype.Type{},
			MarkdownDescription: field[name] + " Null when the object leaves it out (SPIRE's default)."}
	}
	list := func(name string) dschema.ListAttribute {
		return dschema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: field[name] + unset}
	}
	flag := func(name string) dschema.BoolAttribute {
		return dschema.BoolAttribute{Computed: true, MarkdownDescription: field[name] + " Null when the object leaves " +
			"it out, which means `false`."}
	}
	return map[string]dschema.Attribute{
		"spiffe_id_template":          dschema.StringAttribute{Computed: true, MarkdownDescription: field["spiffe_id_template"]},
		"pod_selector":                dataSourceSelector(field["pod_selector"] + " Null when the object leaves it out (every pod)."),
		"namespace_selector":          dataSourceSelector(field["namespace_selector"] + " Null when the object leaves it out (every namespace the controller does not ignore)."),
		"federates_with":              dschema.SetAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: field["federates_with"] + " Null when it federates with nothing."},
		"dns_name_templates":          list("dns_name_templates"),
		"workload_selector_templates": list("workload_selector_templates"),
		"ttl":                         duration("ttl"),
		"jwt_ttl":                     duration("jwt_ttl"),
		"hint":                        str("hint"),
		"fallback":                    flag("fallback"),
		"admin":                       flag("admin"),
		"downstream":                  flag("downstream"),
		"auto_populate_dns_names":     flag("auto_populate_dns_names"),
		"class_name":                  dschema.StringAttribute{Computed: true, MarkdownDescription: field["class_name"] + " Empty when the object leaves it out."},
	}
}

// dataSourceSelector is a Kubernetes LabelSelector the data source reads.
func dataSourceSelector(description string) dschema.SingleNestedAttribute {
	const unset = " Null when the selector leaves it out."
	return dschema.SingleNestedAttribute{
		Computed:            true,
		MarkdownDescription: description,
		Attributes: map[string]dschema.Attribute{
			"match_labels": dschema.MapAttribute{Computed: true, ElementType: types.StringType,
				MarkdownDescription: field["match_labels"] + unset},
			"match_expressions": dschema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: field["match_expressions"] + unset,
				NestedObject: dschema.NestedAttributeObject{Attributes: map[string]dschema.Attribute{
					"key":      dschema.StringAttribute{Computed: true, MarkdownDescription: field["key"]},
					"operator": dschema.StringAttribute{Computed: true, MarkdownDescription: field["operator"]},
					"values": dschema.ListAttribute{Computed: true, ElementType: types.StringType,
						MarkdownDescription: field["values"] + " Null when the requirement has none."},
				}},
			},
		},
	}
}
