package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// objectIdentity is what names one object the provider manages, the same for
// every resource: the provider's cluster key ("" for the `kubernetes`
// connection), the mesh kind (zerotrust_mesh_trust_domain only), the
// namespace (namespaced kinds only) and the name. It is the resource identity
// Terraform >= 1.12 stores and imports by, the key list resources return, and
// what the legacy import ID string parses into.
type objectIdentity struct {
	Cluster   string
	Kind      string
	Namespace string
	Name      string
}

// identityShape says which identity attributes a resource has.
type identityShape struct {
	kind       bool // the mesh kind (mesh_trust_domain)
	namespaced bool
	// key names what a resource manages that is no Kubernetes object (a
	// trust domain's bundle in SPIRE): the identity attribute that holds
	// objectIdentity.Name instead of "name". Unset for Kubernetes objects.
	key *identityKey
}

// identityKey is the identity attribute naming a thing that is no
// Kubernetes object.
type identityKey struct{ attribute, description string }

// nameAttribute is the identity attribute that holds objectIdentity.Name.
func (s identityShape) nameAttribute() string {
	if s.key != nil {
		return s.key.attribute
	}
	return "name"
}

func (s identityShape) schema() identityschema.Schema {
	nameDescription := "Name of the Kubernetes object."
	if s.key != nil {
		nameDescription = s.key.description
	}
	attrs := map[string]identityschema.Attribute{
		"cluster": identityschema.StringAttribute{
			OptionalForImport: true,
			Description: "Key of the provider's `clusters` map; unset (null) for the provider's `kubernetes` " +
				"connection.",
		},
		s.nameAttribute(): identityschema.StringAttribute{
			RequiredForImport: true,
			Description:       nameDescription,
		},
	}
	if s.namespaced {
		attrs["namespace"] = identityschema.StringAttribute{
			RequiredForImport: true,
			Description:       "Namespace of the Kubernetes object.",
		}
	}
	if s.kind {
		attrs["kind"] = identityschema.StringAttribute{
			RequiredForImport: true,
			Description:       "Mesh kind, as the resource's `mesh.kind` names it.",
		}
	}
	return identityschema.Schema{Attributes: attrs}
}

// clusterValue is the `cluster` attribute value for a cluster key.
func clusterValue(key string) types.String {
	if key == "" {
		return types.StringNull()
	}
	return types.StringValue(key)
}

// set writes the identity into a response's Identity (nil when the client
// does not support identities: Terraform < 1.12 and OpenTofu).
func (id objectIdentity) set(ctx context.Context, s identityShape, ri *tfsdk.ResourceIdentity) diag.Diagnostics {
	var diags diag.Diagnostics
	if ri == nil {
		return diags
	}
	v, err := id.terraformValue(ctx, s, ri.Schema.Type().TerraformType(ctx))
	if err != nil {
		diags.AddError("Provider Error", "Building the resource identity: "+err.Error()+"; please report this to the provider developers.")
		return diags
	}
	ri.Raw = v
	return diags
}

// terraformValue is the identity as a value of typ, the type of s's schema:
// what set stores and what a fast path (internal/fastpath) sends.
func (id objectIdentity) terraformValue(ctx context.Context, s identityShape, typ tftypes.Type) (tftypes.Value, error) {
	cluster, err := clusterValue(id.Cluster).ToTerraformValue(ctx)
	if err != nil {
		return tftypes.Value{}, err
	}
	vals := map[string]tftypes.Value{"cluster": cluster, s.nameAttribute(): tftypes.NewValue(tftypes.String, id.Name)}
	if s.namespaced {
		vals["namespace"] = tftypes.NewValue(tftypes.String, id.Namespace)
	}
	if s.kind {
		vals["kind"] = tftypes.NewValue(tftypes.String, id.Kind)
	}
	if err := tftypes.ValidateValue(typ, vals); err != nil {
		return tftypes.Value{}, err
	}
	return tftypes.NewValue(typ, vals), nil
}

// setIfMissing is set for a response that holds no identity yet: Read's
// response comes pre-filled with the prior identity, which must not change,
// and holds none only for state written without identities (Terraform < 1.12,
// OpenTofu), where every way out of Read must still return one.
func (id objectIdentity) setIfMissing(ctx context.Context, s identityShape, ri *tfsdk.ResourceIdentity) diag.Diagnostics {
	if ri == nil || !ri.Raw.IsFullyNull() {
		return nil
	}
	return id.set(ctx, s, ri)
}

// readIdentity reads an identity an import block or a list result gave.
func readIdentity(ctx context.Context, s identityShape, ri *tfsdk.ResourceIdentity) (objectIdentity, diag.Diagnostics) {
	var id objectIdentity
	var diags diag.Diagnostics
	get := func(name string, into *string) {
		var v types.String
		diags.Append(ri.GetAttribute(ctx, path.Root(name), &v)...)
		*into = v.ValueString()
	}
	get("cluster", &id.Cluster)
	get(s.nameAttribute(), &id.Name)
	if s.namespaced {
		get("namespace", &id.Namespace)
	}
	if s.kind {
		get("kind", &id.Kind)
	}
	return id, diags
}

// importedObject reads the object of kind an import names on cluster; both
// results are nil once a diagnostic says why not (no connection, no such
// object). what names the object in that diagnostic.
func importedObject(ctx context.Context, data *providerdata.Data, cluster types.String, kind kube.Kind, namespace, name, what string,
	diags *diag.Diagnostics,
) (*kube.Client, *unstructured.Unstructured) {
	client := data.Client(cluster, diags)
	if client == nil {
		return nil, nil
	}
	obj, err := client.Get(ctx, kind, namespace, name)
	if err != nil {
		diags.Append(kube.Diagnostic(err, "import "+what))
		return nil, nil
	}
	return client, obj
}

// importTarget is the shared prologue of every ImportState: it takes the
// object's identity from the import block's `identity` (Terraform >= 1.12) or
// parses the import ID string by the type's importID form, and checks that
// the cluster key names a configured cluster. ok is false when a diagnostic
// was added.
func (t *typeInfo) importTarget(ctx context.Context, data *providerdata.Data, req resource.ImportStateRequest,
	diags *diag.Diagnostics,
) (objectIdentity, bool) {
	var id objectIdentity
	if req.ID == "" && req.Identity != nil && !req.Identity.Raw.IsNull() {
		var d diag.Diagnostics
		id, d = readIdentity(ctx, t.shape, req.Identity)
		diags.Append(d...)
		if diags.HasError() {
			return id, false
		}
	} else {
		var err error
		id, err = t.importID.parse(req.ID)
		if err != nil {
			diags.AddError("Invalid Import ID", fmt.Sprintf("Expected %s. Got %q: %v.", t.importID.describe(), req.ID, err))
			return id, false
		}
	}
	if f := t.importID; f.fixedName != "" && id.Name != f.fixedName {
		diags.AddAttributeError(path.Root(t.shape.nameAttribute()), "Invalid Import Identity", fmt.Sprintf(f.wrongName, id.Name))
		return id, false
	}
	if data != nil && !data.CheckCluster(clusterValue(id.Cluster), path.Root("cluster"), diags) {
		return id, false
	}
	return id, true
}
