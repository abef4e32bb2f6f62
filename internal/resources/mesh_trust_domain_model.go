package resources

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type meshTrustDomainResourceModel struct {
	ID                          types.String `tfsdk:"id"`
	Cluster                     types.String `tfsdk:"cluster"`
	Mesh                        types.Object `tfsdk:"mesh"`
	TrustDomain                 types.String `tfsdk:"trust_domain"`
	TrustDomainAliases          types.List   `tfsdk:"trust_domain_aliases"`
	KeepPreviousAsAlias         types.Bool   `tfsdk:"keep_previous_as_alias"`
	CACertificates              types.List   `tfsdk:"ca_certificates"`
	CAAddress                   types.String `tfsdk:"ca_address"`
	CABundles                   types.List   `tfsdk:"ca_bundles"`
	ForceConflicts              types.Bool   `tfsdk:"force_conflicts"`
	KeepOnDestroy               types.Bool   `tfsdk:"keep_on_destroy"`
	SPIFFEIDPrefix              types.String `tfsdk:"spiffe_id_prefix"`
	PreviousTrustDomains        types.List   `tfsdk:"previous_trust_domains"`
	EffectiveTrustDomainAliases types.List   `tfsdk:"effective_trust_domain_aliases"`
}

// meshModel is the `mesh` attribute: which object holds the trust settings.
type meshModel struct {
	Kind      types.String `tfsdk:"kind"`
	Name      types.String `tfsdk:"name"`
	Namespace types.String `tfsdk:"namespace"`
	KumaMesh  types.String `tfsdk:"kuma_mesh"`
}

// caCertificateModel is one `ca_certificates` entry.
type caCertificateModel struct {
	PEM             types.String `tfsdk:"pem"`
	SPIFFEBundleURL types.String `tfsdk:"spiffe_bundle_url"`
	TrustDomains    types.List   `tfsdk:"trust_domains"`
	CertSigners     types.List   `tfsdk:"cert_signers"`
}

// object is the `mesh` value; the struct matches the schema, so the
// conversion cannot fail (a test converts every kind).
func (m meshModel) object() types.Object {
	v, diags := types.ObjectValueFrom(context.Background(), meshAttrTypes(), m)
	if diags.HasError() {
		panic(fmt.Sprintf("meshModel does not match the mesh attribute: %v", diags))
	}
	return v
}

// key names the object among all mesh objects of a cluster:
// "<kind>:<name>" or "<kind>:<namespace>:<name>" (the import ID without the
// cluster).
func (m meshModel) key() string {
	if m.Namespace.ValueString() == "" {
		return m.Kind.ValueString() + ":" + m.Name.ValueString()
	}
	return m.Kind.ValueString() + ":" + m.Namespace.ValueString() + ":" + m.Name.ValueString()
}

// sameObject reports whether two mesh values name the same object.
func (m meshModel) sameObject(other meshModel) bool {
	return m.Kind.Equal(other.Kind) && m.Name.Equal(other.Name) && m.Namespace.Equal(other.Namespace)
}

func (m meshModel) describe(kind meshKind) string {
	name := m.Name.ValueString()
	if ns := m.Namespace.ValueString(); ns != "" {
		name = ns + "/" + name
	}
	return fmt.Sprintf("%s %s", kind.kube, name)
}

// meshWrites says which of the fields written only on request the
// configuration sets.
type meshWrites struct {
	trustDomain bool
	kumaMesh    bool
}

func configuredWrites(ctx context.Context, config tfsdk.Config, diags *diag.Diagnostics) meshWrites {
	var m meshTrustDomainResourceModel
	diags.Append(config.Get(ctx, &m)...)
	var mesh meshModel
	if !m.Mesh.IsNull() && !m.Mesh.IsUnknown() {
		diags.Append(m.Mesh.As(ctx, &mesh, basetypes.ObjectAsOptions{})...)
	}
	return meshWrites{trustDomain: !m.TrustDomain.IsNull(), kumaMesh: !mesh.KumaMesh.IsNull()}
}

// meshTrustDomainObjectFromModel is the apply configuration holding only this resource's fields:
// never a field the CRD defaults or the operator sets, and an optional one
// only when it is configured.
func meshTrustDomainObjectFromModel(ctx context.Context, m meshTrustDomainResourceModel, writes meshWrites, kind meshKind, mesh meshModel) (*unstructured.Unstructured, diag.Diagnostics) {
	var diags diag.Diagnostics
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetName(mesh.Name.ValueString())
	obj.SetNamespace(mesh.Namespace.ValueString())
	set := func(value any, fields ...string) {
		if err := unstructured.SetNestedField(obj.Object, value, fields...); err != nil {
			diags.AddError("Cannot Build Object", fmt.Sprintf("Setting %s: %v. This is a bug in the provider.", strings.Join(fields, "."), err))
		}
	}
	if writes.trustDomain {
		set(m.TrustDomain.ValueString(), kind.trustDomainPath...)
	}
	switch kind.name {
	case meshKindSail:
		if !m.TrustDomainAliases.IsNull() || len(stringsOf(m.PreviousTrustDomains)) > 0 {
			set(anySlice(stringsOf(m.EffectiveTrustDomainAliases)), sailAliasesPath...)
		}
		if !m.CACertificates.IsNull() {
			entries, d := caCertificatesJSON(ctx, m.CACertificates)
			diags.Append(d...)
			set(entries, sailCACertsPath...)
		}
		if !m.CAAddress.IsNull() {
			set(m.CAAddress.ValueString(), sailCAAddressPath...)
		}
	case meshKindKuma:
		bundles := make([]any, 0, len(m.CABundles.Elements()))
		for _, pem := range stringsOf(m.CABundles) {
			bundles = append(bundles, map[string]any{"type": "Pem", "pem": map[string]any{"value": pem}})
		}
		set(bundles, kumaCABundlesPath...)
		if writes.kumaMesh {
			obj.SetLabels(map[string]string{kumaMeshLabel: mesh.KumaMesh.ValueString()})
		}
	}
	return obj, diags
}

func caCertificatesJSON(ctx context.Context, list types.List) ([]any, diag.Diagnostics) {
	var entries []caCertificateModel
	diags := list.ElementsAs(ctx, &entries, false)
	out := make([]any, 0, len(entries))
	for _, e := range entries {
		entry := map[string]any{}
		objSetString(entry, "pem", e.PEM)
		objSetString(entry, "spiffeBundleUrl", e.SPIFFEBundleURL)
		objSetStrings(entry, "trustDomains", stringsOf(e.TrustDomains))
		objSetStrings(entry, "certSigners", stringsOf(e.CertSigners))
		out = append(out, entry)
	}
	return out, diags
}

// setMeshTrustDomainFromObject copies what the object holds into the model, so edits
// made outside Terraform plan back. previous_trust_domains is bookkeeping of
// this resource and is kept; the aliases read are split into it and the
// configured ones.
func setMeshTrustDomainFromObject(ctx context.Context, m *meshTrustDomainResourceModel, kind meshKind, obj *unstructured.Unstructured) diag.Diagnostics {
	var diags diag.Diagnostics
	mesh := meshModel{
		Kind: types.StringValue(kind.name), Name: types.StringValue(obj.GetName()),
		Namespace: optionalString(obj.GetNamespace()), KumaMesh: types.StringNull(),
	}
	if kind.name == meshKindKuma {
		mesh.KumaMesh = optionalString(obj.GetLabels()[kumaMeshLabel])
	}
	m.Mesh = mesh.object()
	m.ID = types.StringValue(resourceID(m.Cluster, mesh.key()))
	td, found, _ := unstructured.NestedString(obj.Object, kind.trustDomainPath...)
	m.TrustDomain = types.StringNull()
	if found {
		m.TrustDomain = types.StringValue(td)
	}
	m.SPIFFEIDPrefix = spiffeIDPrefix(effectiveTrustDomain(kind, m.TrustDomain))
	if m.KeepPreviousAsAlias.IsNull() || m.KeepPreviousAsAlias.IsUnknown() {
		m.KeepPreviousAsAlias = types.BoolValue(false)
	}
	if m.ForceConflicts.IsNull() || m.ForceConflicts.IsUnknown() {
		m.ForceConflicts = types.BoolValue(false)
	}
	if m.KeepOnDestroy.IsNull() || m.KeepOnDestroy.IsUnknown() {
		m.KeepOnDestroy = types.BoolValue(false)
	}

	switch kind.name {
	case meshKindSail:
		previous := stringsOf(m.PreviousTrustDomains)
		m.PreviousTrustDomains = stringList(previous)
		aliases, present, _ := unstructured.NestedStringSlice(obj.Object, sailAliasesPath...)
		m.EffectiveTrustDomainAliases = stringList(aliases)
		// An alias both configured and kept as a former trust domain is on
		// the object once; it stays configured.
		priorConfigured := stringsOf(m.TrustDomainAliases)
		var configured []string
		for _, alias := range aliases {
			if !slices.Contains(previous, alias) || slices.Contains(priorConfigured, alias) {
				configured = append(configured, alias)
			}
		}
		switch {
		case !present, len(configured) == 0 && len(previous) > 0 && m.TrustDomainAliases.IsNull():
			m.TrustDomainAliases = types.ListNull(types.StringType)
		default:
			m.TrustDomainAliases = stringList(configured)
		}
		m.CACertificates = types.ListNull(types.ObjectType{AttrTypes: caCertificateAttrTypes()})
		if items, found, _ := unstructured.NestedSlice(obj.Object, sailCACertsPath...); found {
			list, d := caCertificatesValue(ctx, items)
			diags.Append(d...)
			m.CACertificates = list
		}
		address, found, _ := unstructured.NestedString(obj.Object, sailCAAddressPath...)
		m.CAAddress = types.StringNull()
		if found {
			m.CAAddress = types.StringValue(address)
		}
	default:
		m.PreviousTrustDomains = types.ListNull(types.StringType)
		m.EffectiveTrustDomainAliases = types.ListNull(types.StringType)
		m.TrustDomainAliases = types.ListNull(types.StringType)
		m.CACertificates = types.ListNull(types.ObjectType{AttrTypes: caCertificateAttrTypes()})
		m.CAAddress = types.StringNull()
	}
	m.CABundles = types.ListNull(types.StringType)
	if kind.name == meshKindKuma {
		items, _, _ := unstructured.NestedSlice(obj.Object, kumaCABundlesPath...)
		pems := make([]string, 0, len(items))
		for _, item := range items {
			if b, ok := item.(map[string]any); ok {
				if pem, ok := objMap(b, "pem"); ok {
					pems = append(pems, objText(pem["value"]))
				}
			}
		}
		m.CABundles = stringList(pems)
	}
	return diags
}

func caCertificatesValue(ctx context.Context, items []any) (types.List, diag.Diagnostics) {
	optionalList := func(m map[string]any, key string) types.List {
		if _, ok := m[key]; !ok {
			return types.ListNull(types.StringType)
		}
		return stringList(objStrings(m, key))
	}
	entries := make([]caCertificateModel, 0, len(items))
	for _, item := range items {
		entry, _ := item.(map[string]any)
		entries = append(entries, caCertificateModel{
			PEM:             objString(entry, "pem"),
			SPIFFEBundleURL: objString(entry, "spiffeBundleUrl"),
			TrustDomains:    optionalList(entry, "trustDomains"),
			CertSigners:     optionalList(entry, "certSigners"),
		})
	}
	return types.ListValueFrom(ctx, types.ObjectType{AttrTypes: caCertificateAttrTypes()}, entries)
}

// parseMeshKey reads "<kind>", "<kind>:<name>" or "<kind>:<namespace>:<name>".
func parseMeshKey(key string) (meshModel, error) {
	parts := strings.Split(key, ":")
	kind, ok := meshKinds[parts[0]]
	if !ok {
		return meshModel{}, fmt.Errorf("the kind %q is not one of %s", parts[0], strings.Join(meshKindNames(), ", "))
	}
	m := meshModel{Kind: types.StringValue(kind.name), Namespace: optionalString(kind.defaultNamespace), KumaMesh: types.StringNull()}
	switch {
	case len(parts) == 1 && kind.defaultName != "":
		m.Name = types.StringValue(kind.defaultName)
	case len(parts) == 2 && !kind.kube.Namespaced:
		m.Name = types.StringValue(parts[1])
	case len(parts) == 3 && kind.kube.Namespaced:
		m.Namespace, m.Name = types.StringValue(parts[1]), types.StringValue(parts[2])
	case kind.kube.Namespaced:
		return meshModel{}, errors.New("a namespaced kind needs <kind>:<namespace>:<name>")
	default:
		return meshModel{}, errors.New("the cluster-scoped istio_sail needs <kind>:<name>")
	}
	if m.Name.ValueString() == "" || (kind.kube.Namespaced && m.Namespace.ValueString() == "") {
		return meshModel{}, errors.New("the name and namespace must not be empty")
	}
	return m, nil
}

// effectiveTrustDomain is the trust domain the mesh runs on when the object
// holds td: an Istio object without one runs on cluster.local.
func effectiveTrustDomain(kind meshKind, td types.String) types.String {
	if td.IsNull() && kind.defaultTrustDomain != "" {
		return types.StringValue(kind.defaultTrustDomain)
	}
	return td
}

func liveTrustDomainOf(kind meshKind, obj *unstructured.Unstructured) string {
	td, _, _ := unstructured.NestedString(obj.Object, kind.trustDomainPath...)
	if td == "" {
		td = kind.defaultTrustDomain
	}
	return td
}

func spiffeIDPrefix(td types.String) types.String {
	switch {
	case td.IsUnknown():
		return types.StringUnknown()
	case td.IsNull():
		return types.StringNull()
	}
	return types.StringValue("spiffe://" + td.ValueString() + "/")
}

// meshTrustDomainStateFromObject is the state of a resource adopting obj, a mesh object
// of kind on cluster: what ImportState stores and what the list resource
// returns, so import and list cannot drift apart.
func meshTrustDomainStateFromObject(ctx context.Context, cluster types.String, kind meshKind, obj *unstructured.Unstructured) (meshTrustDomainResourceModel, diag.Diagnostics) {
	state := meshTrustDomainResourceModel{
		Cluster: cluster, TrustDomainAliases: types.ListNull(types.StringType),
		KeepPreviousAsAlias: types.BoolValue(false), PreviousTrustDomains: types.ListNull(types.StringType),
	}
	if kind.name == meshKindSail {
		state.PreviousTrustDomains = stringList(nil)
	}
	diags := setMeshTrustDomainFromObject(ctx, &state, kind, obj)
	return state, diags
}

// meshFromIdentity is the mesh an import identity names. An empty namespace
// or name stands for the kind's default, as a bare kind does in the ID string.
func meshFromIdentity(id objectIdentity) (meshKind, meshModel, error) {
	kind, ok := meshKinds[id.Kind]
	if !ok {
		return kind, meshModel{}, fmt.Errorf("kind: %q is not one of %s", id.Kind, strings.Join(meshKindNames(), ", "))
	}
	namespace, name := cmp.Or(id.Namespace, kind.defaultNamespace), cmp.Or(id.Name, kind.defaultName)
	switch {
	case !kind.kube.Namespaced && namespace != "":
		return kind, meshModel{}, fmt.Errorf("namespace: the cluster-scoped %s has none; set it to \"\"", kind.name)
	case kind.kube.Namespaced && namespace == "":
		return kind, meshModel{}, fmt.Errorf("namespace: %s objects are namespaced; name the namespace", kind.name)
	case name == "":
		return kind, meshModel{}, fmt.Errorf("name: %s has no default object; name it", kind.name)
	}
	return kind, meshModel{
		Kind: types.StringValue(kind.name), Name: types.StringValue(name),
		Namespace: optionalString(namespace), KumaMesh: types.StringNull(),
	}, nil
}
