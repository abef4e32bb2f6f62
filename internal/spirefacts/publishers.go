package spirefacts

import (
	"encoding/json"
	"net/url"
	"strings"
)

// The BundlePublisher plugins of SPIRE that publish the trust bundle to
// object storage (pkg/server/plugin/bundlepublisher in SPIRE 1.15), as the
// server's configuration names them.
const (
	PublisherAWSS3        = "aws_s3"
	PublisherGCSBucket    = "gcp_cloudstorage"
	PublisherAzureBlob    = "azure_blob"
	azureDefaultEndpoint  = "blob.core.windows.net" // azure_blob's service_endpoint when unset
	gcsPublicHost         = "storage.googleapis.com"
	awsS3PublicHostSuffix = "amazonaws.com"
)

// PublisherTypes lists the object-storage publishers in the order a
// server's configuration is read.
var PublisherTypes = []string{PublisherAWSS3, PublisherGCSBucket, PublisherAzureBlob}

// Publisher is one object-storage BundlePublisher of a SPIRE server: where
// it writes the bundle and the https URL peers read it from with the
// https_web profile. Strings are "" where the configuration does not say.
type Publisher struct {
	// Type is one of PublisherTypes.
	Type string
	// Bucket is the S3 bucket, the GCS bucket_name or the Azure container_name.
	Bucket string
	// Object is the S3 object_key, the GCS object_name or the Azure blob_name.
	Object string
	// Region is the S3 region.
	Region string
	// Endpoint is the S3 endpoint (an S3-compatible store) or the Azure
	// service_endpoint; "" for the cloud's own.
	Endpoint string
	// StorageAccount is the Azure storage_account_name.
	StorageAccount string
	// Format is the bundle format written: spiffe, jwks or pem. Only
	// spiffe can be federated from.
	Format string
	// RefreshHint is the refresh_hint written into the bundle, as
	// configured (e.g. "5m"); "" keeps the server's own.
	RefreshHint string
	// URL is where the object is read over HTTPS.
	URL string
}

// publisherConf is the plugin_data of the three publishers, one struct:
// their field names do not collide.
type publisherConf struct {
	Region             string `json:"region"`
	Bucket             string `json:"bucket"`
	ObjectKey          string `json:"object_key"`
	Endpoint           string `json:"endpoint"`
	BucketName         string `json:"bucket_name"`
	ObjectName         string `json:"object_name"`
	StorageAccountName string `json:"storage_account_name"`
	ServiceEndpoint    string `json:"service_endpoint"`
	ContainerName      string `json:"container_name"`
	BlobName           string `json:"blob_name"`
	Format             string `json:"format"`
	RefreshHint        string `json:"refresh_hint"`
}

// publishers reads the object-storage BundlePublishers of a server's
// plugins section, in PublisherTypes order.
func publishers(plugins map[string]json.RawMessage) []Publisher {
	var out []Publisher
	for _, typ := range PublisherTypes {
		for _, d := range pluginData(plugins["BundlePublisher"], typ) {
			var c publisherConf
			if json.Unmarshal(d, &c) != nil {
				continue
			}
			p := Publisher{Type: typ, Format: c.Format, RefreshHint: c.RefreshHint}
			switch typ {
			case PublisherAWSS3:
				p.Bucket, p.Object, p.Region, p.Endpoint = c.Bucket, c.ObjectKey, c.Region, c.Endpoint
			case PublisherGCSBucket:
				p.Bucket, p.Object = c.BucketName, c.ObjectName
			case PublisherAzureBlob:
				p.Bucket, p.Object, p.StorageAccount, p.Endpoint = c.ContainerName, c.BlobName, c.StorageAccountName, c.ServiceEndpoint
			}
			p.URL = p.objectURL()
			out = append(out, p)
		}
	}
	return out
}

// objectURL is where the object p writes is read over HTTPS, as each
// plugin's client addresses it: S3 with a custom endpoint path-style (the
// plugin sets UsePathStyle), else virtual-hosted (path-style for a bucket
// name with dots, which the wildcard certificate does not cover); GCS at
// storage.googleapis.com/<bucket>/<object>; Azure at
// https://<account>.<service endpoint>/<container>/<blob>, as the plugin
// builds its account URL. "" when the configuration lacks a part.
func (p Publisher) objectURL() string {
	if p.Bucket == "" || p.Object == "" {
		return ""
	}
	object := escapeObject(p.Object)
	switch p.Type {
	case PublisherAWSS3:
		if p.Endpoint != "" {
			return strings.TrimSuffix(p.Endpoint, "/") + "/" + url.PathEscape(p.Bucket) + "/" + object
		}
		host := "s3." + awsS3PublicHostSuffix
		if p.Region != "" {
			host = "s3." + p.Region + "." + awsS3PublicHostSuffix
		}
		if strings.Contains(p.Bucket, ".") {
			return "https://" + host + "/" + p.Bucket + "/" + object
		}
		return "https://" + p.Bucket + "." + host + "/" + object
	case PublisherGCSBucket:
		return "https://" + gcsPublicHost + "/" + url.PathEscape(p.Bucket) + "/" + object
	case PublisherAzureBlob:
		if p.StorageAccount == "" {
			return ""
		}
		endpoint := p.Endpoint
		if endpoint == "" {
			endpoint = azureDefaultEndpoint
		}
		return "https://" + p.StorageAccount + "." + endpoint + "/" + url.PathEscape(p.Bucket) + "/" + object
	}
	return ""
}

// escapeObject escapes an object key for a URL path, keeping its slashes.
func escapeObject(key string) string {
	parts := strings.Split(strings.TrimPrefix(key, "/"), "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}
