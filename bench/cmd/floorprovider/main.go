// Command floorprovider is the benchmark's plugin floor: what any provider
// built on the same framework pays, whatever it does. It has the zerotrust
// provider's schema and zerotrust_federated_trust_domain's schema and
// identity schema (so the framework walks the same attributes, defaults,
// validators and attribute plan modifiers), is served the same way
// (internal/protoserver behind tf6server.Serve), and does nothing of its own: no
// ModifyPlan, Read returns the state it gets, Create and Update store the
// plan (unknown computed values as null) and make no API call.
//
// bench/cmd/bench builds it and installs it as ztfabric/ztfloor; its resource
// is ztfloor_federated_trust_domain. Never part of a release.
package main

import (
	"context"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/protoserver"
	ztprovider "github.com/ztfabric/terraform-provider-zerotrust/internal/provider"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/resources"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
)

// address is the source address Terraform knows the provider by; logName
// names its log level variable, TF_LOG_PROVIDER_ZTFLOOR.
const (
	address = "registry.terraform.io/ztfabric/ztfloor"
	logName = "ztfloor"
)

func main() {
	protoserver.Tune(logName)
	floor, err := protoserver.New(func() provider.Provider { return &floorProvider{real: ztprovider.New("floor")()} })()
	if err == nil {
		err = tf6server.Serve(address, func() tfprotov6.ProviderServer { return floor }, tf6server.WithLogEnvVarName(logName))
	}
	if err != nil {
		log.Fatal(err.Error())
	}
}

type floorProvider struct{ real provider.Provider }

func (p *floorProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "ztfloor"
}

func (p *floorProvider) Schema(ctx context.Context, req provider.SchemaRequest, resp *provider.SchemaResponse) {
	p.real.Schema(ctx, req, resp)
}

// Configure connects to nothing.
func (p *floorProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (p *floorProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource {
		ftd, ok := resources.NewFederatedTrustDomainResource().(resource.ResourceWithIdentity)
		if !ok {
			panic("zerotrust_federated_trust_domain has no identity: the floor would not match it")
		}
		return &floorResource{real: ftd}
	}}
}

func (p *floorProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

type floorResource struct{ real resource.ResourceWithIdentity }

var _ resource.ResourceWithIdentity = (*floorResource)(nil)

func (r *floorResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = typename.FederatedTrustDomain.Under(req.ProviderTypeName)
}

func (r *floorResource) Schema(ctx context.Context, req resource.SchemaRequest, resp *resource.SchemaResponse) {
	r.real.Schema(ctx, req, resp)
}

func (r *floorResource) IdentitySchema(ctx context.Context, req resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	r.real.IdentitySchema(ctx, req, resp)
}

func (r *floorResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.store(ctx, req.Plan.Raw, &resp.State.Raw, resp)
}

func (r *floorResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.store(ctx, req.Plan.Raw, &resp.State.Raw, nil)
}

// Read returns the state it got (the framework pre-fills the response with
// it), and like the real resource an identity when the prior state holds
// none (state written by Terraform < 1.12, where the framework still wants
// one from Read).
func (r *floorResource) Read(ctx context.Context, _ resource.ReadRequest, resp *resource.ReadResponse) {
	if resp.Identity != nil && resp.Identity.Raw.IsFullyNull() {
		setIdentity(ctx, &resp.State, resp.Identity, &resp.Diagnostics)
	}
}

func (r *floorResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

// store writes plan, with unknown values made null, as the new state; on
// create it also records the identity (cluster and name), as the real
// resource does.
func (r *floorResource) store(ctx context.Context, plan tftypes.Value, state *tftypes.Value, created *resource.CreateResponse) {
	v, err := tftypes.Transform(plan, func(_ *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if !v.IsKnown() {
			return tftypes.NewValue(v.Type(), nil), nil
		}
		return v, nil
	})
	if err != nil {
		if created != nil {
			created.Diagnostics.AddError("Floor Provider", err.Error())
		}
		return
	}
	*state = v
	// Identity is nil for clients without identity support (Terraform < 1.12).
	if created == nil || created.Identity == nil {
		return
	}
	setIdentity(ctx, &created.State, created.Identity, &created.Diagnostics)
}

// setIdentity copies cluster and name from state into identity.
func setIdentity(ctx context.Context, state *tfsdk.State, identity *tfsdk.ResourceIdentity, diags *diag.Diagnostics) {
	for _, name := range []string{"cluster", "name"} {
		var s *string
		diags.Append(state.GetAttribute(ctx, path.Root(name), &s)...)
		diags.Append(identity.SetAttribute(ctx, path.Root(name), s)...)
	}
}
