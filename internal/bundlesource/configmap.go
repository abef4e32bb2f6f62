package bundlesource

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
)

// The two ways SPIRE writes its bundle into a ConfigMap, as a server's
// configuration names the plugins, and the key each writes by default:
//   - BundlePublisher "k8s_configmap", the SPIFFE Helm chart's default
//     (bundlePublisher.k8sConfigMap: format spiffe, key bundle.spiffe). It
//     creates the ConfigMap with a server-side apply under
//     PublisherFieldManager, publishes at once when SPIRE appends, prunes or
//     revokes an authority, and compares every 30 seconds otherwise.
//   - Notifier "k8sbundle", which the operator renders and the chart
//     renders with notifier.k8sBundle: PEM certificates under bundle.crt
//     (its config_map_key), patched into a ConfigMap that must exist, when
//     SPIRE loads or updates its bundle but not when it revokes an authority.
const (
	KeySPIFFE = "bundle.spiffe"
	KeyPEM    = "bundle.crt"

	PluginPublisher = `BundlePublisher "k8s_configmap"`
	PluginNotifier  = `Notifier "k8sbundle"`
	// PublisherFieldManager is the field manager the BundlePublisher applies
	// the ConfigMap under ("spire-bundlepublisher-" and its plugin name).
	PublisherFieldManager = "spire-bundlepublisher-k8s_configmap"
)

// writersHint says which plugin writes which key, for errors about a
// ConfigMap that does not say which bundle it holds.
var writersHint = "SPIRE's " + PluginPublisher + " (the SPIFFE Helm chart's default) writes SPIFFE bundle JSON under " +
	KeySPIFFE + "; its " + PluginNotifier + " (the operator's, and the chart's notifier.k8sBundle) writes PEM under " +
	KeyPEM + "."

// ConfigMap is a bundle ConfigMap. An empty Key reads whichever of KeySPIFFE
// and KeyPEM it has; when it has both, they must hold the same X.509
// authorities (one plugin may have been replaced by the other, leaving its
// key behind), and KeySPIFFE, which also carries the JWT authorities, is read.
type ConfigMap struct {
	Client               *kube.Client
	Namespace, Name, Key string
}

func (c ConfigMap) String() string {
	key := c.Key
	if key == "" {
		key = KeySPIFFE + " or " + KeyPEM
	}
	return fmt.Sprintf("ConfigMap %s/%s (key %s) on cluster %q", c.Namespace, c.Name, key, c.Client.DisplayName())
}

// Fetch implements Source. A missing ConfigMap or key is worth waiting for
// (SPIRE writes the bundle after it starts); content that is not a bundle,
// or two keys that disagree, are not.
func (c ConfigMap) Fetch(ctx context.Context, td spiffeid.TrustDomain) (*spiffebundle.Bundle, error) {
	obj, err := c.Client.Get(ctx, kube.ConfigMap, c.Namespace, c.Name)
	if err != nil {
		return nil, classifyAPIError(err)
	}
	data, _, _ := unstructured.NestedStringMap(obj.Object, "data")
	b, _, err := FromConfigMap(td, c.Namespace+"/"+c.Name, data, c.Key, Writers(obj))
	return b, err
}

// Writer reads the ConfigMap again and says which key a read takes and who
// wrote it (see Writers), for warnings about what the ConfigMap holds.
func (c ConfigMap) Writer(ctx context.Context) (key, writer string, err error) {
	obj, err := c.Client.Get(ctx, kube.ConfigMap, c.Namespace, c.Name)
	if err != nil {
		return "", "", err
	}
	data, _, _ := unstructured.NestedStringMap(obj.Object, "data")
	key = c.Key
	if key == "" {
		key = KeyPEM
		if strings.TrimSpace(data[KeySPIFFE]) != "" {
			key = KeySPIFFE
		}
	}
	return key, Writers(obj)[key], nil
}

// Writers maps each data key of a ConfigMap to who last wrote it, from its
// managed fields: PluginPublisher for the BundlePublisher's field manager,
// else `field manager "<name>"` (the Notifier patches under its client's
// name, spire-server by default). Keys without a record are left out.
func Writers(obj *unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	for _, f := range obj.GetManagedFields() {
		if f.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(f.FieldsV1.Raw, &fields); err != nil {
			continue
		}
		data, _ := fields["f:data"].(map[string]any)
		for k := range data {
			key, ok := strings.CutPrefix(k, "f:")
			if !ok {
				continue
			}
			out[key] = fmt.Sprintf("field manager %q", f.Manager)
			if f.Manager == PublisherFieldManager {
				out[key] = PluginPublisher
			}
		}
	}
	return out
}

// FromConfigMap reads td's bundle from the data of ConfigMap name
// ("<namespace>/<name>") under key, or with key "" under KeySPIFFE or KeyPEM
// as ConfigMap says, and returns the key read. writers (Writers) name who
// wrote each key in errors. A missing key is an error worth retrying; a
// value that is not a bundle, or two keys that disagree, is Permanent.
func FromConfigMap(td spiffeid.TrustDomain, name string, data map[string]string, key string, writers map[string]string) (*spiffebundle.Bundle, string, error) {
	keys := []string{key}
	if key == "" {
		keys = slices.DeleteFunc([]string{KeySPIFFE, KeyPEM}, func(k string) bool { return strings.TrimSpace(data[k]) == "" })
	} else if strings.TrimSpace(data[key]) == "" {
		keys = nil
	}
	if len(keys) == 0 {
		missing := "neither " + KeySPIFFE + " nor " + KeyPEM + " is set"
		if key != "" {
			missing = "key " + key + " is not set"
		}
		return nil, "", fmt.Errorf("%s in ConfigMap %s (it has %s). %s", missing, name, haveKeys(data), writersHint)
	}
	wrote := func(k string) string {
		if w := writers[k]; w != "" {
			return "written by " + w
		}
		return "no record of who wrote it"
	}
	bundles := make([]*spiffebundle.Bundle, len(keys))
	for i, k := range keys {
		b, err := Decode(td, []byte(data[k]))
		if err != nil {
			return nil, "", Permanent(fmt.Errorf("key %s of ConfigMap %s (%s) is not a bundle of %q: %w. %s",
				k, name, wrote(k), td.Name(), err, writersHint))
		}
		bundles[i] = b
	}
	if len(bundles) == 2 {
		a, b := trustbundle.FingerprintsSHA256(bundles[0]), trustbundle.FingerprintsSHA256(bundles[1])
		if !slices.Equal(a, b) {
			return nil, "", Permanent(fmt.Errorf("keys %s (%s) and %s (%s) of ConfigMap %s hold different X.509 "+
				"authorities of %q (SHA-256 %s and %s), so which one SPIRE keeps current cannot be told. %s Set "+
				"config_map.key to the key of the plugin the SPIRE server runs, or remove the other key",
				keys[0], wrote(keys[0]), keys[1], wrote(keys[1]), name, td.Name(),
				strings.Join(a, ", "), strings.Join(b, ", "), writersHint))
		}
	}
	return bundles[0], keys[0], nil
}

// haveKeys lists the keys of data for a message.
func haveKeys(data map[string]string) string {
	if len(data) == 0 {
		return "no keys"
	}
	return "keys " + strings.Join(slices.Sorted(maps.Keys(data)), ", ")
}
