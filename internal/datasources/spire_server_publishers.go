package datasources

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spirefacts"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
)

// bundlePublisherFields are the attributes of one bundle_publishers
// element, with how each is read from a spirefacts.Publisher.
var bundlePublisherFields = []struct {
	name, description string
	value             func(spirefacts.Publisher) string
}{
	{"type", "The BundlePublisher plugin: `" + spirefacts.PublisherAWSS3 + "` (Amazon S3 or an S3-compatible store), `" +
		spirefacts.PublisherGCSBucket + "` (Google Cloud Storage) or `" + spirefacts.PublisherAzureBlob + "` (Azure Blob Storage).",
		func(p spirefacts.Publisher) string { return p.Type }},
	{"bucket", "Where the object is: the S3 `bucket`, the GCS `bucket_name` or the Azure `container_name`.",
		func(p spirefacts.Publisher) string { return p.Bucket }},
	{"object", "The object written: the S3 `object_key`, the GCS `object_name` or the Azure `blob_name`.",
		func(p spirefacts.Publisher) string { return p.Object }},
	{"region", "The S3 `region`; null for the others or where unset.",
		func(p spirefacts.Publisher) string { return p.Region }},
	{"endpoint", "The S3 `endpoint` (an S3-compatible store, addressed path-style) or the Azure `service_endpoint`; " +
		"null for the cloud's own.", func(p spirefacts.Publisher) string { return p.Endpoint }},
	{"storage_account", "The Azure `storage_account_name`; null for the others.",
		func(p spirefacts.Publisher) string { return p.StorageAccount }},
	{"format", "The bundle format written: `spiffe`, `jwks` or `pem`. Peers federate only from `spiffe`: SPIRE's " +
		"`https_web` profile reads a SPIFFE bundle, so `zerotrust_trust_bundle`'s `published` source refuses the others.",
		func(p spirefacts.Publisher) string { return p.Format }},
	{"refresh_hint", "The `refresh_hint` written into the published bundle (e.g. `5m`): how often peers fetch it again. " +
		"Null keeps the server's own refresh hint.", func(p spirefacts.Publisher) string { return p.RefreshHint }},
	{"url", "The `https://` URL peers federate from, with the `https_web` profile, never `https_spiffe`: as the " +
		"plugin's client addresses the object (S3 virtual-hosted, `https://<bucket>.s3.<region>.amazonaws.com/<key>`, " +
		"path-style for a bucket name with dots and with a custom `endpoint`, `<endpoint>/<bucket>/<key>`; GCS " +
		"`https://storage.googleapis.com/<bucket>/<object>`; Azure `https://<account>.<service endpoint>/<container>/<blob>`). " +
		"Readers need anonymous read access to that one object (the guide \"Federation through published bundles\" " +
		"gives the bucket policy per cloud). Null when the configuration lacks a part of it.",
		func(p spirefacts.Publisher) string { return p.URL }},
}

var bundlePublisherType = func() types.ObjectType {
	attrs := make(map[string]attr.Type, len(bundlePublisherFields))
	for _, f := range bundlePublisherFields {
		attrs[f.name] = types.StringType
	}
	return types.ObjectType{AttrTypes: attrs}
}()

// bundlePublishersAttribute is zerotrust_spire_server's bundle_publishers.
func bundlePublishersAttribute() schema.ListNestedAttribute {
	attrs := make(map[string]schema.Attribute, len(bundlePublisherFields))
	for _, f := range bundlePublisherFields {
		attrs[f.name] = schema.StringAttribute{Computed: true, MarkdownDescription: f.description}
	}
	return schema.ListNestedAttribute{
		Computed: true,
		MarkdownDescription: "The server's BundlePublishers that write its trust bundle to object storage (`" +
			spirefacts.PublisherAWSS3 + "`, `" + spirefacts.PublisherGCSBucket + "`, `" + spirefacts.PublisherAzureBlob +
			"`), from the chart's server configuration: the chart's `bundlePublisher.awsS3` and " +
			"`bundlePublisher.gcpCloudStorage` values, or any of the three added through its " +
			"`unsupportedBuiltInPlugins.bundlePublisher`. A peer federates from `url` with " +
			"`zerotrust_federated_trust_domain` (`bundle_endpoint_profile.type = \"https_web\"`) and bootstraps from " +
			"`zerotrust_trust_bundle`'s `published` source, with no path between the SPIRE servers. Empty for the " +
			"operator: its server configuration has no BundlePublisher, so an operator cluster cannot publish this way; " +
			"carry its bundle with `" + typename.SpireBundle.Full() + "` (the courier) or serve it from a bundle " +
			"endpoint. Operator clusters can still consume other clusters' published bundles.",
		NestedObject: schema.NestedAttributeObject{Attributes: attrs},
	}
}

// bundlePublishersValue is bundle_publishers for ps: an empty list, not
// null, when the server publishes to no object store.
func bundlePublishersValue(ps []spirefacts.Publisher) (types.List, diag.Diagnostics) {
	var diags diag.Diagnostics
	elems := make([]attr.Value, 0, len(ps))
	for _, p := range ps {
		values := make(map[string]attr.Value, len(bundlePublisherFields))
		for _, f := range bundlePublisherFields {
			values[f.name] = providerdata.OptionalString(f.value(p))
		}
		obj, d := types.ObjectValue(bundlePublisherType.AttrTypes, values)
		diags.Append(d...)
		elems = append(elems, obj)
	}
	list, d := types.ListValue(bundlePublisherType, elems)
	diags.Append(d...)
	return list, diags
}
