package datasources

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

func (d *meshServiceDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = meshServiceSchema()
}

func meshServiceSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "One Kuma `MeshService` (`kuma.io/v1alpha1`): the identities a client verifies in the " +
			"certificates of its endpoints (`spec.identities`), its ports, selector and state, and what the zone " +
			"control plane reports in its status (hostnames, VIPs, data plane proxy counts). Kuma creates a " +
			"MeshService per Kubernetes Service and syncs it between zones with its `spec` (the identities " +
			"included), while each zone writes its own `status`.\n\n" +
			"When the cluster does not answer at all and its `on_unreachable` is `warn` (the provider's default), " +
			"the read is skipped with a warning naming the cluster: every attribute it reads is null, the arguments " +
			"keep their values. With `error`, the read fails at once naming the cluster.",
		Attributes: map[string]schema.Attribute{
			"cluster": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Key of the provider's `clusters` map naming the cluster to read. Unset means the " +
					"provider's `kubernetes` connection.",
			},
			"namespace": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Namespace of the MeshService.",
				Validators:          []validator.String{validate.DNSLabel()},
			},
			"name": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Name of the MeshService.",
				Validators:          []validator.String{validate.K8sName()},
			},
			"identities": schema.ListNestedAttribute{
				Computed: true,
				MarkdownDescription: "`spec.identities`, in order: a client's proxy accepts an endpoint presenting " +
					"any one of them. Empty when the MeshService has none.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"type": schema.StringAttribute{
						Computed:            true,
						MarkdownDescription: "Identity type; `SpiffeID` is the only one `kuma.io/v1alpha1` defines.",
					},
					"value": schema.StringAttribute{
						Computed:            true,
						MarkdownDescription: "The identity, a SPIFFE ID such as `spiffe://east.example.com/ns/shop/sa/cart` for type `SpiffeID`.",
					},
				}},
			},
			"spiffe_ids": schema.ListAttribute{
				Computed:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "The values of the identities of type `SpiffeID`, in order: handy for `check {}` blocks and `contains()`.",
			},
			"ports": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "`spec.ports`: the service's ports, in order. Empty when it has none.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name": schema.StringAttribute{
						Computed:            true,
						MarkdownDescription: "Port name; null when unset.",
					},
					"port": schema.Int64Attribute{
						Computed:            true,
						MarkdownDescription: "Port number the service is reached on.",
					},
					"target_port": schema.StringAttribute{
						Computed: true,
						MarkdownDescription: "Port of the endpoints, a number or a port name (the CRD's int-or-string, " +
							"always rendered as a string here); null when unset.",
					},
					"app_protocol": schema.StringAttribute{
						Computed:            true,
						MarkdownDescription: "Application protocol, such as `http`, `grpc` or `tcp` (the CRD's default).",
					},
				}},
			},
			"selector": schema.SingleNestedAttribute{
				Computed:            true,
				MarkdownDescription: "`spec.selector`: which data plane proxies are the service's endpoints; null when unset.",
				Attributes: map[string]schema.Attribute{
					"dataplane_labels": schema.MapAttribute{
						Computed:            true,
						ElementType:         types.StringType,
						MarkdownDescription: "Labels a Dataplane must carry (`dataplaneLabels.matchLabels`); null when unset.",
					},
					"dataplane_ref": schema.StringAttribute{
						Computed:            true,
						MarkdownDescription: "Name of the one Dataplane selected (`dataplaneRef.name`); null when unset.",
					},
				},
			},
			"state": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "`spec.state`: `Available` when the service has at least one healthy endpoint, " +
					"else `Unavailable` (the CRD's default). Kuma uses it to decide whether to send cross-zone traffic.",
			},
			"hostnames": schema.ListAttribute{
				Computed:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "`status.addresses[].hostname`: the hostnames the zone generated for the service.",
			},
			"vips": schema.ListAttribute{
				Computed:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "`status.vips[].ip`: the virtual IPs the zone assigned to the service.",
			},
			"dataplane_proxies": schema.SingleNestedAttribute{
				Computed:            true,
				MarkdownDescription: "`status.dataplaneProxies`: how many data plane proxies the service selects; null until the zone reports it.",
				Attributes: map[string]schema.Attribute{
					"total":     schema.Int64Attribute{Computed: true, MarkdownDescription: "Data plane proxies selected."},
					"connected": schema.Int64Attribute{Computed: true, MarkdownDescription: "Of those, connected to the zone control plane."},
					"healthy":   schema.Int64Attribute{Computed: true, MarkdownDescription: "Of those, with all inbounds healthy."},
				},
			},
			"tls_status": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`status.tls.status`: `Ready` once the service's endpoints serve mTLS, `NotReady` before; null when not reported.",
			},
		},
	}
}

// meshServiceAttrTypes are the types of the schema's top-level attributes,
// read from the schema once.
var meshServiceAttrTypes = sync.OnceValue(func() map[string]attr.Type {
	t, ok := meshServiceSchema().Type().(attr.TypeWithAttributeTypes)
	if !ok {
		panic("mesh_service: the schema type is not an object type")
	}
	return t.AttributeTypes()
})

// meshServiceObjectAttrTypes are the attribute types of the object attribute
// name, or of the elements of the list attribute name: derived from the
// schema, they cannot drift from it.
func meshServiceObjectAttrTypes(name string) map[string]attr.Type {
	t := meshServiceAttrTypes()[name]
	if l, ok := t.(attr.TypeWithElementType); ok {
		t = l.ElementType()
	}
	o, ok := t.(attr.TypeWithAttributeTypes)
	if !ok {
		panic(fmt.Sprintf("mesh_service: schema attribute %q is not an object or a list of objects", name))
	}
	return o.AttributeTypes()
}
