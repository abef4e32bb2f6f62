package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/domainverification"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// NewDomainVerificationListResource lists zerotrust_domain_verification objects.
func NewDomainVerificationListResource() list.ListResource {
	return newListShell(domainVerificationType,
		"Lists the Kuadrant `DomainVerification` objects of the provider's clusters that "+
			"`zerotrust_domain_verification` can manage, for `terraform query` and import. They are read in API "+
			"version `v1`, as import reads them; `api_version` of each result is the version its spec was written "+
			"in. Objects whose `spec.domain` the resource would refuse, and objects being deleted, are left out.",
		map[string]listschema.Attribute{"domain": listschema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Only the objects that verify this domain (`spec.domain`), such as `apps.example.com`.",
			Validators:          []validator.String{validate.DomainName()},
		}},
		func(f domainVerificationListConfig) listConverter { return f.convert })
}

type domainVerificationListConfig struct {
	listScope
	Domain types.String `tfsdk:"domain"`
}

// convert makes a list result of obj: the identity, a display name naming
// the domain, and the state ImportState would store.
func (f domainVerificationListConfig) convert(ctx context.Context, t listTarget, obj *unstructured.Unstructured, includeResource bool) (
	listedObject, bool, diag.Diagnostics,
) {
	domain := domainverification.Domain(obj)
	switch {
	case !f.Domain.IsNull() && domain != f.Domain.ValueString(),
		obj.GetDeletionTimestamp() != nil,
		!validDomain(ctx, domain):
		return listedObject{}, true, nil
	}
	state := domainVerificationStateFromObject(clusterValue(t.key), obj, t.client.FieldManager)
	lo := listedObject{
		id:      domainVerificationType.identityOf(state),
		display: resourceID(state.Cluster, obj.GetName()) + " (" + domain + ")",
	}
	if includeResource {
		lo.state = &state
	}
	return lo, false, nil
}

// validDomain reports whether the resource's `domain` validator accepts
// domain: configuration generated from an object it refuses would not plan.
func validDomain(ctx context.Context, domain string) bool {
	var resp validator.StringResponse
	validate.DomainName().ValidateString(ctx, validator.StringRequest{ConfigValue: types.StringValue(domain)}, &resp)
	return !resp.Diagnostics.HasError()
}
