package resources

import (
	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/quantitytype"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// The schema of the agent's pod: its resources, affinity, tolerations and node
// selector, and the labels of the objects the operator creates (the rest of
// the IstioCSR's schema is in istio_csr_schema.go).

// resources and tolerations are small, fixed Kubernetes structures, so they
// are typed (plan-time checks, readable diffs); affinity is a deep tree of
// terms and selectors, so it is JSON, checked against the Kubernetes type.
func istioCSRResourcesSchema() schema.SingleNestedAttribute {
	quantities := []validator.Map{mapvalidator.ValueStringsAre(validate.Quantity())}
	return schema.SingleNestedAttribute{
		Optional: true, Computed: true,
		MarkdownDescription: "Compute resources of the agent's container (a Kubernetes `ResourceRequirements`); a request " +
			"may not exceed its limit (checked at plan: the operator would retry forever). Quantities compare by meaning " +
			"(`0.5` and `500m` are the same). " + istioCSRUnsetOptionalText,
		PlanModifiers: []planmodifier.Object{unsetOptional("istioCSRConfig.resources", true)},
		Attributes: map[string]schema.Attribute{
			"limits": schema.MapAttribute{
				ElementType: quantitytype.Type{}, Optional: true,
				MarkdownDescription: "Resource limits by name, e.g. `{ cpu = \"500m\", memory = \"256Mi\" }`.",
				Validators:          quantities,
			},
			"requests": schema.MapAttribute{
				ElementType: quantitytype.Type{}, Optional: true,
				MarkdownDescription: "Resource requests by name, e.g. `{ cpu = \"10m\", memory = \"32Mi\" }`.",
				Validators:          quantities,
			},
			"claims": schema.ListNestedAttribute{
				Optional:            true,
				MarkdownDescription: "Dynamic resource claims of the pod the container uses.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":    schema.StringAttribute{Required: true, MarkdownDescription: "Name of a pod resource claim.", Validators: []validator.String{validate.DNSLabel()}},
					"request": schema.StringAttribute{Optional: true, MarkdownDescription: "Request of that claim to use."},
				}},
			},
		},
	}
}

func istioCSRAffinitySchema() schema.StringAttribute {
	return schema.StringAttribute{
		CustomType: jsontypes.NormalizedType{},
		Optional:   true, Computed: true,
		PlanModifiers: []planmodifier.String{unsetOptional("istioCSRConfig.affinity", true)},
		MarkdownDescription: "Scheduling affinity of the agent's pod: a Kubernetes `Affinity` as JSON, usually " +
			"`jsonencode({ nodeAffinity = { ... } })`. Field names are the API's camelCase names; unknown fields fail " +
			"the plan. Compared as JSON, so formatting never shows as a change. The operator does not compare affinity " +
			"when it updates the agent's Deployment, so a change of `affinity` (or `tolerations`) alone reaches the agent " +
			"only with the next change of another setting. " + istioCSRUnsetOptionalText,
		Validators: []validator.String{validate.StrictJSON("a Kubernetes Affinity", func() any { return &corev1.Affinity{} })},
	}
}

func istioCSRTolerationsSchema() schema.ListNestedAttribute {
	return schema.ListNestedAttribute{
		Optional: true, Computed: true,
		MarkdownDescription: "Taints the agent's pod tolerates, at most 50 (Kubernetes `Toleration`s). The operator does " +
			"not compare tolerations when it updates the agent's Deployment: a change of `tolerations` (or `affinity`) " +
			"alone reaches the agent only with the next change of another setting. " + istioCSRUnsetOptionalText,
		PlanModifiers: []planmodifier.List{unsetOptional("istioCSRConfig.tolerations", true)},
		Validators:    []validator.List{listvalidator.SizeAtMost(istioCSRMaxTolerations)},
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"key": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Taint key; unset with `operator = \"Exists\"` tolerates every taint.",
				Validators:          []validator.String{validate.LabelKey()},
			},
			"operator": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "`Exists` or `Equal` (the Kubernetes default when unset).",
				Validators:          []validator.String{stringvalidator.OneOf(tolerationOperators...)},
			},
			"value": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Taint value for `Equal`; must be unset with `Exists`.",
				Validators:          []validator.String{validate.LabelValue()},
			},
			"effect": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "`NoSchedule`, `PreferNoSchedule` or `NoExecute`; unset matches every effect.",
				Validators:          []validator.String{stringvalidator.OneOf(tolerationEffects...)},
			},
			"toleration_seconds": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "How long a `NoExecute` taint is tolerated before eviction; only with `effect = \"NoExecute\"`.",
			},
		}},
	}
}

func istioCSRNodeSelectorSchema() schema.MapAttribute {
	return schema.MapAttribute{
		ElementType: types.StringType,
		Optional:    true, Computed: true,
		MarkdownDescription: "Node labels the agent's pod must run on, at most 50, e.g. `{ \"kubernetes.io/os\" = \"linux\" }`. " +
			istioCSRUnsetOptionalText,
		PlanModifiers: []planmodifier.Map{unsetOptional("istioCSRConfig.nodeSelector", true)},
		Validators: []validator.Map{
			mapvalidator.SizeAtMost(istioCSRMaxNodeSelector),
			mapvalidator.KeysAre(validate.LabelKey()),
			mapvalidator.ValueStringsAre(validate.LabelValue()),
		},
	}
}

func istioCSRControllerConfigSchema() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional: true, Computed: true,
		MarkdownDescription: "Settings of the operator's controller for this agent (`spec.controllerConfig`). " + istioCSRUnsetOptionalText,
		PlanModifiers:       []planmodifier.Object{unsetOptional("controllerConfig", true)},
		Attributes: map[string]schema.Attribute{
			"labels": schema.MapAttribute{
				ElementType:         types.StringType,
				Optional:            true,
				MarkdownDescription: "Labels the operator adds to every object it creates for the agent, at most 20.",
				Validators: []validator.Map{
					mapvalidator.SizeAtMost(istioCSRMaxControllerLabels),
					mapvalidator.KeysAre(validate.LabelKey()),
					mapvalidator.ValueStringsAre(validate.LabelValue()),
				},
			},
		},
	}
}
