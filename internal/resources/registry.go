package resources

import "github.com/hashicorp/terraform-plugin-framework/resource"

var registry []func() resource.Resource

// register adds a resource constructor; each resource file calls it from
// init, so adding a resource touches no shared list.
func register(f func() resource.Resource) { registry = append(registry, f) }

// All returns every resource constructor of the provider.
func All() []func() resource.Resource { return append([]func() resource.Resource(nil), registry...) }
