package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
)

// S3Publisher is SPIRE's BundlePublisher "aws_s3" of a server laid out as
// the Helm chart does (SpireOptions.S3Publisher), writing the bundle in
// SPIFFE format (what https_web readers parse) to Server with a custom
// `endpoint`, which makes SPIRE use path-style URLs.
//
// When SPIRE publishes (v1.15.3, pkg/server/bundle/pubmanager): whenever the
// datastore's own bundle changes (an authority appended by prepare, pruned,
// revoked; a taint is not such a change) and on a 30 s timer. The plugin
// puts the object only when the bundle differs from the last one it put
// successfully since the process started, so a put that failed (bucket
// down) is retried at the next tick, within 30 s of the bucket's return;
// but a bucket that lost the object is not written again until the bundle
// changes or spire-server restarts. zts3 keeps its objects across restarts.
type S3Publisher struct {
	Server *S3
	// Bucket defaults to Server's first bucket.
	Bucket string
	// ObjectKey defaults to S3ObjectKey(trust domain).
	ObjectKey string
	// RefreshHint is the plugin's `refresh_hint`, written into the published
	// bundle: readers poll at a quarter of it, but never take a hint under
	// one minute (bundleutil.MinimumRefreshHint), so 1m (a poll every 15 s)
	// is the fastest a lab can make readers follow. 0 leaves it unset:
	// SPIRE's bundle then carries the server's own hint (5 min by default).
	RefreshHint time.Duration
}

// S3ObjectKey is the object a server of trust domain td publishes to by
// default: "<td>/bundle.spiffe".
func S3ObjectKey(td string) string { return td + "/" + HelmBundleKey }

func (p *S3Publisher) bucket() string {
	if p.Bucket != "" {
		return p.Bucket
	}
	return p.Server.Buckets[0]
}

func (p *S3Publisher) objectKey(td string) string {
	if p.ObjectKey != "" {
		return p.ObjectKey
	}
	return S3ObjectKey(td)
}

// objectURL is where the bundle of td is read; "" without a publisher.
func (p *S3Publisher) objectURL(td string) string {
	if p == nil {
		return ""
	}
	return p.Server.ObjectURL(p.bucket(), p.objectKey(td))
}

// pluginData is the plugin's configuration as the chart renders it (JSON
// keys are SPIRE's). The chart leaves the credentials to the pod's cloud
// identity (IRSA on EKS); the lab's real configuration adds static keys.
func (p *S3Publisher) pluginData(td string) map[string]any {
	d := map[string]any{
		"region": S3Region, "bucket": p.bucket(), "object_key": p.objectKey(td),
		"format": HelmBundleFormat, "endpoint": p.Server.Endpoint,
	}
	if p.RefreshHint > 0 {
		d["refresh_hint"] = p.RefreshHint.String()
	}
	return d
}

// writeS3Publisher writes the aws_s3 BundlePublisher into server.conf.
func (s *Spire) writeS3Publisher(b *strings.Builder) {
	p := s.opts.S3Publisher
	if p == nil {
		return
	}
	b.WriteString("  BundlePublisher \"aws_s3\" {\n    plugin_data {\n")
	fmt.Fprintf(b, "      access_key_id = %q\n      secret_access_key = %q\n", S3AccessKeyID, S3SecretAccessKey)
	for _, k := range []string{"region", "bucket", "object_key", "format", "endpoint", "refresh_hint"} {
		if v, ok := p.pluginData(s.TrustDomain)[k]; ok {
			fmt.Fprintf(b, "      %s = %q\n", k, v)
		}
	}
	b.WriteString("    }\n  }\n")
}

// serverEnv is what spire-server runs with beyond this process's
// environment. Go's crypto/x509 on Linux reads the system roots from
// SSL_CERT_FILE (instead of the distribution's bundle file; SSL_CERT_DIR,
// else the system's directories, still add theirs): SPIRE's https_web
// client takes its roots from there. The AWS SDK does too, unless
// AWS_CA_BUNDLE names a file, whose certificates then replace the system
// roots (LoadDefaultConfig); machines like this one set it to the
// distribution's bundle, so it is pointed at the same roots.
func (s *Spire) serverEnv() []string {
	roots := s.opts.WebPKIRoots
	if roots == "" && s.opts.S3Publisher != nil {
		roots = s.opts.S3Publisher.Server.CACertFile
	}
	if roots == "" {
		return nil
	}
	return []string{"SSL_CERT_FILE=" + roots, "AWS_CA_BUNDLE=" + roots, "AWS_EC2_METADATA_DISABLED=true"}
}

// waitPublishedBundle waits, with S3Publisher, until the object at
// PublishedBundleURL holds the server's bundle.
func (s *Spire) waitPublishedBundle(ctx context.Context) error {
	p := s.opts.S3Publisher
	if p == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	td := spiffeid.RequireTrustDomainFromString(s.TrustDomain)
	for {
		data, err := p.Server.Get(ctx, s.PublishedBundleURL)
		if err == nil {
			var b *spiffebundle.Bundle
			if b, err = spiffebundle.Parse(td, data); err == nil && len(b.X509Authorities()) > 0 {
				return nil
			}
			err = fmt.Errorf("%w in %q", err, data)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("SPIRE's BundlePublisher \"aws_s3\" did not publish to %s (%v); last lines of %s:\n%s",
				s.PublishedBundleURL, err, s.LogPath(), fileTail(s.LogPath(), 25))
		case <-time.After(200 * time.Millisecond):
		}
	}
}
