// Package datasources implements the provider's data sources.
package datasources

import "github.com/hashicorp/terraform-plugin-framework/datasource"

// All returns every data source constructor of the provider, sorted by name.
// A new data source is added here, so this list is the one place that says
// what the provider serves.
func All() []func() datasource.DataSource {
	return []func() datasource.DataSource{
		NewClusterSPIFFEIDDataSource,
		NewDomainVerificationDataSource,
		NewFederationStatusDataSource,
		NewMeshServiceDataSource,
		NewSpireServerDataSource,
		NewTrustBundleDataSource,
	}
}
