// Package datasources implements the provider's data sources.
package datasources

import "github.com/hashicorp/terraform-plugin-framework/datasource"

var registry []func() datasource.DataSource

// register adds a data source constructor; each data source file calls it
// from init, so adding one touches no shared list.
func register(f func() datasource.DataSource) { registry = append(registry, f) }

// All returns every data source constructor of the provider.
func All() []func() datasource.DataSource {
	return append([]func() datasource.DataSource(nil), registry...)
}
