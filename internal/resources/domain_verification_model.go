package resources

import (
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/domainverification"
)

type domainVerificationResourceModel struct {
	ID               types.String   `tfsdk:"id"`
	Cluster          types.String   `tfsdk:"cluster"`
	Name             types.String   `tfsdk:"name"`
	Domain           types.String   `tfsdk:"domain"`
	APIVersion       types.String   `tfsdk:"api_version"`
	ForceConflicts   types.Bool     `tfsdk:"force_conflicts"`
	AdoptExisting    types.Bool     `tfsdk:"adopt_existing"`
	Adopted          types.Bool     `tfsdk:"adopted"`
	Token            types.String   `tfsdk:"token"`
	TXTRecordName    types.String   `tfsdk:"txt_record_name"`
	TXTRecordValue   types.String   `tfsdk:"txt_record_value"`
	Verified         types.Bool     `tfsdk:"verified"`
	LastChecked      types.String   `tfsdk:"last_checked"`
	NextVerification types.String   `tfsdk:"next_verification"`
	Message          types.String   `tfsdk:"message"`
	Timeouts         timeouts.Value `tfsdk:"timeouts"`
}

// domainVerificationStateFromObject is the state of an object the resource
// does not manage yet, what ImportState stores and the list resource returns
// (one function, so the two cannot differ). The API version is the one the
// object's spec was written in, read from its managed fields: it is not part
// of the object itself. An object this provider's field manager (manager)
// never applied was made by another manager, such as Kuadrant's ingress
// webhook: it is adopted, so the resource never writes it and destroy leaves
// it in place, as after a Create with adopt_existing.
func domainVerificationStateFromObject(cluster types.String, obj *unstructured.Unstructured, manager string) domainVerificationResourceModel {
	state := domainVerificationResourceModel{
		Cluster:        cluster,
		APIVersion:     types.StringValue(domainverification.CreatedWith(obj)),
		ForceConflicts: types.BoolValue(false),
		AdoptExisting:  types.BoolValue(false),
		Adopted:        types.BoolValue(!applier(manager).wrote(obj)),
		Timeouts:       timeouts.Value{Object: types.ObjectNull(domainVerificationObjectAttrTypes("timeouts"))},
	}
	setDomainVerificationFromObject(&state, obj)
	return state
}

// setDomainVerificationFromObject copies the object's spec and status into
// the model.
func setDomainVerificationFromObject(m *domainVerificationResourceModel, obj *unstructured.Unstructured) {
	m.Name = types.StringValue(obj.GetName())
	m.ID = types.StringValue(resourceID(m.Cluster, obj.GetName()))
	m.Domain = types.StringValue(domainverification.Domain(obj))
	m.TXTRecordName = m.Domain
	st := domainverification.StatusOf(obj)
	m.Token = optionalString(st.Token)
	m.TXTRecordValue = m.Token
	m.Verified = types.BoolPointerValue(st.Verified)
	m.LastChecked = optionalString(st.LastChecked)
	m.NextVerification = optionalString(st.NextCheck)
	m.Message = optionalString(st.Message)
	if m.ForceConflicts.IsNull() || m.ForceConflicts.IsUnknown() {
		m.ForceConflicts = types.BoolValue(false)
	}
	if m.AdoptExisting.IsNull() || m.AdoptExisting.IsUnknown() {
		m.AdoptExisting = types.BoolValue(false)
	}
	if m.APIVersion.IsNull() || m.APIVersion.IsUnknown() {
		m.APIVersion = types.StringValue(domainverification.V1)
	}
}
