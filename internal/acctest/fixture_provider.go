package acctest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// WithFixtures serves, beside zerotrust, the test-only provider "ztfixture",
// whose ztfixture_config_map writes a ConfigMap on cluster during an apply,
// as a kubernetes_config_map would, and whose
// ztfixture_cluster_federated_trust_domain writes a
// ClusterFederatedTrustDomain, as a kubernetes_manifest would. It lets a test show what a zerotrust
// resource does when an earlier resource of the same apply creates what it
// refers to, which a plan cannot see. The kubernetes provider itself is not
// among the tools the tests build (only bench/ builds it), and
// terraform-plugin-testing would fetch it from the registry.
func WithFixtures(t *testing.T, cluster string) map[string]func() (tfprotov6.ProviderServer, error) {
	t.Helper()
	client := Dynamic(t, cluster)
	factories := map[string]func() (tfprotov6.ProviderServer, error){
		"ztfixture": providerserver.NewProtocol6WithError(&fixtureProvider{client: client}),
	}
	for name, f := range ProtoV6ProviderFactories {
		factories[name] = f
	}
	return factories
}

type fixtureProvider struct{ client dynamic.Interface }

func (p *fixtureProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "ztfixture"
}

func (p *fixtureProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}

func (p *fixtureProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (p *fixtureProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

func (p *fixtureProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		func() resource.Resource { return &fixtureConfigMap{client: p.client} },
		func() resource.Resource { return &fixtureCFTD{client: p.client} },
	}
}

// fixtureConfigMap creates the ConfigMap namespace/name holding data; every
// change replaces it.
type fixtureConfigMap struct{ client dynamic.Interface }

type fixtureConfigMapModel struct {
	Namespace types.String `tfsdk:"namespace"`
	Name      types.String `tfsdk:"name"`
	Data      types.Map    `tfsdk:"data"`
}

func (r *fixtureConfigMap) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = "ztfixture_config_map"
}

func (r *fixtureConfigMap) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		Description: "A ConfigMap a test creates during an apply.",
		Attributes: map[string]schema.Attribute{
			"namespace": schema.StringAttribute{Required: true, PlanModifiers: replace, Description: "Namespace."},
			"name":      schema.StringAttribute{Required: true, PlanModifiers: replace, Description: "Name."},
			"data": schema.MapAttribute{Required: true, ElementType: types.StringType, Description: "Data.",
				PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()}},
		},
	}
}

func (r *fixtureConfigMap) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m fixtureConfigMapModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	data := map[string]string{}
	resp.Diagnostics.Append(m.Data.ElementsAs(ctx, &data, false)...)
	if resp.Diagnostics.HasError() {
		return
	}
	values := map[string]any{}
	for k, v := range data {
		values[k] = v
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": m.Name.ValueString(), "namespace": m.Namespace.ValueString()}, "data": values}}
	if _, err := r.client.Resource(kube.ConfigMap.GVR()).Namespace(m.Namespace.ValueString()).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		resp.Diagnostics.AddError("Create ConfigMap", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *fixtureConfigMap) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m fixtureConfigMapModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	_, err := r.client.Resource(kube.ConfigMap.GVR()).Namespace(m.Namespace.ValueString()).Get(ctx, m.Name.ValueString(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		resp.State.RemoveResource(ctx)
	case err != nil:
		resp.Diagnostics.AddError("Read ConfigMap", err.Error())
	}
}

// Update is never called: every attribute replaces.
func (r *fixtureConfigMap) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.Diagnostics.AddAttributeError(path.Root("data"), "Unexpected Update", "every change replaces a ztfixture_config_map")
}

func (r *fixtureConfigMap) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m fixtureConfigMapModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	err := r.client.Resource(kube.ConfigMap.GVR()).Namespace(m.Namespace.ValueString()).Delete(ctx, m.Name.ValueString(), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		resp.Diagnostics.AddError("Delete ConfigMap", err.Error())
	}
}

// fixtureCFTD creates the ClusterFederatedTrustDomain name with spec (JSON)
// as it is, not through zerotrust's resource: what the zerotrust resources
// learn of it is only what the cluster holds. Every change replaces it.
type fixtureCFTD struct{ client dynamic.Interface }

type fixtureCFTDModel struct {
	Name types.String `tfsdk:"name"`
	Spec types.String `tfsdk:"spec"`
}

func (r *fixtureCFTD) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = "ztfixture_cluster_federated_trust_domain"
}

func (r *fixtureCFTD) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		Description: "A ClusterFederatedTrustDomain a test creates during an apply.",
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{Required: true, PlanModifiers: replace, Description: "Name."},
			"spec": schema.StringAttribute{Required: true, PlanModifiers: replace, Description: "spec, as JSON."},
		},
	}
}

func (r *fixtureCFTD) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m fixtureCFTDModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var spec map[string]any
	if err := json.Unmarshal([]byte(m.Spec.ValueString()), &spec); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("spec"), "Invalid spec", err.Error())
		return
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": kube.ClusterFederatedTrustDomain.APIVersion(),
		"kind": kube.ClusterFederatedTrustDomain.Kind, "metadata": map[string]any{"name": m.Name.ValueString()}, "spec": spec}}
	if _, err := r.client.Resource(kube.ClusterFederatedTrustDomain.GVR()).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		resp.Diagnostics.AddError("Create ClusterFederatedTrustDomain", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *fixtureCFTD) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m fixtureCFTDModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	_, err := r.client.Resource(kube.ClusterFederatedTrustDomain.GVR()).Get(ctx, m.Name.ValueString(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		resp.State.RemoveResource(ctx)
	case err != nil:
		resp.Diagnostics.AddError("Read ClusterFederatedTrustDomain", err.Error())
	}
}

// Update is never called: every attribute replaces.
func (r *fixtureCFTD) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.Diagnostics.AddAttributeError(path.Root("spec"), "Unexpected Update", "every change replaces a ztfixture_cluster_federated_trust_domain")
}

func (r *fixtureCFTD) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m fixtureCFTDModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	err := r.client.Resource(kube.ClusterFederatedTrustDomain.GVR()).Delete(ctx, m.Name.ValueString(), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		resp.Diagnostics.AddError("Delete ClusterFederatedTrustDomain", err.Error())
	}
}
