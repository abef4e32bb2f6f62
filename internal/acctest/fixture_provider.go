package acctest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
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
		func() resource.Resource { return fixtureConfigMap(p.client) },
		func() resource.Resource { return fixtureCFTD(p.client) },
	}
}

// fixtureObject is a resource that creates one Kubernetes object of kind
// from its model M during an apply, as another provider would, and deletes
// it on destroy. Every attribute replaces it, so Update is never called.
type fixtureObject[M any] struct {
	client   dynamic.Interface
	typeName string
	kind     kube.Kind
	schema   schema.Schema
	// object is what Create writes for m; key names it for Read and Delete
	// (namespace "" for a cluster-scoped kind).
	object func(m M) (*unstructured.Unstructured, diag.Diagnostics)
	key    func(m M) (namespace, name string)
}

func (r *fixtureObject[M]) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = r.typeName
}

func (r *fixtureObject[M]) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = r.schema
}

// objects is the client of m's object.
func (r *fixtureObject[M]) objects(m M) (dynamic.ResourceInterface, string) {
	ns, name := r.key(m)
	return r.client.Resource(r.kind.GVR()).Namespace(ns), name
}

func (r *fixtureObject[M]) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m M
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	obj, d := r.object(m)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	objects, _ := r.objects(m)
	if _, err := objects.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		resp.Diagnostics.AddError("Create "+r.kind.Kind, err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *fixtureObject[M]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m M
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	objects, name := r.objects(m)
	_, err := objects.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		resp.State.RemoveResource(ctx)
	case err != nil:
		resp.Diagnostics.AddError("Read "+r.kind.Kind, err.Error())
	}
}

// Update is never called: every attribute replaces.
func (r *fixtureObject[M]) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.Diagnostics.AddError("Unexpected Update", "every change replaces a "+r.typeName)
}

func (r *fixtureObject[M]) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m M
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	objects, name := r.objects(m)
	if err := objects.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		resp.Diagnostics.AddError("Delete "+r.kind.Kind, err.Error())
	}
}

var replaced = []planmodifier.String{stringplanmodifier.RequiresReplace()}

type fixtureConfigMapModel struct {
	Namespace types.String `tfsdk:"namespace"`
	Name      types.String `tfsdk:"name"`
	Data      types.Map    `tfsdk:"data"`
}

// fixtureConfigMap creates the ConfigMap namespace/name holding data.
func fixtureConfigMap(client dynamic.Interface) *fixtureObject[fixtureConfigMapModel] {
	return &fixtureObject[fixtureConfigMapModel]{
		client: client, typeName: "ztfixture_config_map", kind: kube.ConfigMap,
		schema: schema.Schema{
			Description: "A ConfigMap a test creates during an apply.",
			Attributes: map[string]schema.Attribute{
				"namespace": schema.StringAttribute{Required: true, PlanModifiers: replaced, Description: "Namespace."},
				"name":      schema.StringAttribute{Required: true, PlanModifiers: replaced, Description: "Name."},
				"data": schema.MapAttribute{Required: true, ElementType: types.StringType, Description: "Data.",
					PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()}},
			},
		},
		key: func(m fixtureConfigMapModel) (string, string) { return m.Namespace.ValueString(), m.Name.ValueString() },
		object: func(m fixtureConfigMapModel) (*unstructured.Unstructured, diag.Diagnostics) {
			values := map[string]any{}
			for k, v := range m.Data.Elements() {
				s, _ := v.(types.String)
				values[k] = s.ValueString()
			}
			return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": m.Name.ValueString(), "namespace": m.Namespace.ValueString()}, "data": values}}, nil
		},
	}
}

type fixtureCFTDModel struct {
	Name types.String `tfsdk:"name"`
	Spec types.String `tfsdk:"spec"`
}

// fixtureCFTD creates the ClusterFederatedTrustDomain name with spec (JSON)
// as it is, not through zerotrust's resource: what the zerotrust resources
// learn of it is only what the cluster holds.
func fixtureCFTD(client dynamic.Interface) *fixtureObject[fixtureCFTDModel] {
	return &fixtureObject[fixtureCFTDModel]{
		client: client, typeName: "ztfixture_cluster_federated_trust_domain", kind: kube.ClusterFederatedTrustDomain,
		schema: schema.Schema{
			Description: "A ClusterFederatedTrustDomain a test creates during an apply.",
			Attributes: map[string]schema.Attribute{
				"name": schema.StringAttribute{Required: true, PlanModifiers: replaced, Description: "Name."},
				"spec": schema.StringAttribute{Required: true, PlanModifiers: replaced, Description: "spec, as JSON."},
			},
		},
		key: func(m fixtureCFTDModel) (string, string) { return "", m.Name.ValueString() },
		object: func(m fixtureCFTDModel) (*unstructured.Unstructured, diag.Diagnostics) {
			var spec map[string]any
			if err := json.Unmarshal([]byte(m.Spec.ValueString()), &spec); err != nil {
				var diags diag.Diagnostics
				diags.AddAttributeError(path.Root("spec"), "Invalid spec", err.Error())
				return nil, diags
			}
			return &unstructured.Unstructured{Object: map[string]any{"apiVersion": kube.ClusterFederatedTrustDomain.APIVersion(),
				"kind": kube.ClusterFederatedTrustDomain.Kind, "metadata": map[string]any{"name": m.Name.ValueString()}, "spec": spec}}, nil
		},
	}
}
