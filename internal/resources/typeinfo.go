package resources

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
)

// typeInfo is what a resource type declares once, in its _resource.go: its
// Terraform type name, the Kubernetes kinds it manages, its identity's shape
// and its import ID string. The resource and its list resource embed it, so
// Metadata, IdentitySchema, the import prologue (importTarget) and the list
// resource's Metadata and kinds all come from here and cannot disagree.
type typeInfo struct {
	// name is the type name after the provider's (internal/typename, the
	// one place type names are spelled).
	name typename.Name
	// kinds are the Kubernetes kinds the resource manages, the ones its list
	// resource lists.
	kinds    []kube.Kind
	shape    identityShape
	importID importIDForm
	// planChecks names each plan-time check the resource makes on its
	// cluster, for the one warning that lists what a plan skips on a
	// cluster that does not answer (UnreachableNotes).
	planChecks []string
	// whenUnreachable says what the plan does instead for the resource's
	// objects on a cluster that does not answer, when that is more than
	// skipping planChecks (UnreachableNotes).
	whenUnreachable string
	// sharesObject: the resource manages a part of an object someone else
	// owns (and leaves it behind), so an object a Helm release owns is no
	// reason to refuse its create or import (helm_owned.go).
	sharesObject bool
}

// info returns the descriptor a resource embeds.
func (t *typeInfo) info() *typeInfo { return t }

// typeInfos returns the descriptor of every resource in All, in its order.
func typeInfos() []*typeInfo {
	var infos []*typeInfo
	for _, newResource := range All() {
		if r, ok := newResource().(interface{ info() *typeInfo }); ok {
			infos = append(infos, r.info())
		}
	}
	return infos
}

// Metadata implements resource.Resource and list.ListResource.
func (t *typeInfo) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = t.name.Under(req.ProviderTypeName)
}

// IdentitySchema implements resource.ResourceWithIdentity.
func (t *typeInfo) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = t.shape.schema()
}

// importIDForm says what the import ID string holds after an optional
// "<cluster>/" prefix (cluster keys may contain "/"; namespaces and names
// may not): the "/"-separated fields namespace and name, or one of them
// when the kind allows a single name, or one key of the resource's own
// syntax.
type importIDForm struct {
	// namespaced: the fields start with the namespace.
	namespaced bool
	// fixedName is the one name the kind allows. A namespaced kind's ID then
	// holds only the namespace; a cluster-scoped kind's ID must be the name.
	fixedName string
	// key parses an ID that is one field of the resource's own syntax
	// (mesh_trust_domain's "<kind>[:<namespace>]:<name>"), with format its
	// description; fixedName and namespaced are then unused.
	key    func(string) (objectIdentity, error)
	format string
	// note ends the description of the accepted forms.
	note string
	// wrongName is the error for an import identity that names another
	// object than fixedName, a format of the name it gives.
	wrongName string
}

// fields are the names of the "/"-separated fields after the cluster.
func (f importIDForm) fields() []string {
	switch {
	case f.namespaced && f.fixedName != "":
		return []string{"namespace"}
	case f.namespaced:
		return []string{"namespace", "name"}
	}
	return []string{"name"}
}

// describe is the accepted forms, for the error that rejects an ID.
func (f importIDForm) describe() string {
	form := f.format
	if form == "" {
		parts := f.fields()
		for i, p := range parts {
			parts[i] = "<" + p + ">"
		}
		if f.fixedName != "" && !f.namespaced {
			parts = []string{f.fixedName}
		}
		key := strings.Join(parts, "/")
		form = fmt.Sprintf("%q (default connection) or %q", key, "<cluster>/"+key)
	}
	if f.note != "" {
		form += f.note
	}
	return form
}

// parse reads an import ID string into the identity it names. The fields
// are taken from the right; what is left of them is the cluster key.
func (f importIDForm) parse(id string) (objectIdentity, error) {
	fields := f.fields()
	if f.key != nil {
		fields = []string{"key"}
	}
	values := make([]string, len(fields))
	rest, cluster := id, ""
	for i := len(fields) - 1; i >= 0; i-- {
		j := strings.LastIndex(rest, "/")
		if j < 0 && i > 0 {
			return objectIdentity{}, fmt.Errorf("the %s is missing", fields[i-1])
		}
		values[i] = rest[j+1:]
		if values[i] == "" {
			return objectIdentity{}, fmt.Errorf("the %s is empty", fields[i])
		}
		if j >= 0 {
			rest = rest[:j]
			if i == 0 {
				if strings.TrimSpace(rest) == "" {
					return objectIdentity{}, errors.New("the cluster key is empty")
				}
				cluster = rest
			}
		}
	}
	if f.key != nil {
		out, err := f.key(values[0])
		if err != nil {
			return objectIdentity{}, err
		}
		out.Cluster = cluster
		return out, nil
	}
	out := objectIdentity{Cluster: cluster, Name: f.fixedName}
	for i, field := range fields {
		switch field {
		case "namespace":
			out.Namespace = values[i]
		case "name":
			if f.fixedName != "" && values[i] != f.fixedName {
				return objectIdentity{}, fmt.Errorf("the only object of its kind is named %q", f.fixedName)
			}
			out.Name = values[i]
		}
	}
	return out, nil
}

// object names one object of the type by its id in a message, as
// `zerotrust_istio_csr "east/istio-system"`.
func (t *typeInfo) object(id types.String) string {
	return fmt.Sprintf("zerotrust_%s %q", t.name, id.ValueString())
}
