package harness

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/upstreamcrds"
)

// The project's own test CRDs, only for APIs that publish none
// (kuadrant.dev DomainVerification). One CustomResourceDefinition per file.
//
//go:embed crds/*.yaml
var embeddedCRDs embed.FS

// SpireControllerManagerCRDs are the CRDs CRDDocuments takes from the
// spire-controller-manager module (config/crd/bases/<group>_<plural>.yaml):
// the kinds it reconciles besides ClusterFederatedTrustDomain, whose CRD comes
// from the operator's published copy in the upstream CRD directory.
var SpireControllerManagerCRDs = []string{
	"spire.spiffe.io_clusterspiffeids.yaml",
	"spire.spiffe.io_clusterstaticentries.yaml",
}

const spireControllerManagerModule = "github.com/spiffe/spire-controller-manager"

var crdDocsCache struct {
	sync.Mutex
	docs [][]byte
}

// CRDDocuments returns every CRD the tests and the demo install: the
// operators' published CRDs from UpstreamCRDDocuments (unmodified), the remaining
// spire.spiffe.io CRDs from the spire-controller-manager module pinned in
// <root>/tools/spire-controller-manager/go.mod (read from the Go module cache,
// never copied into this repository), and the project's own CRDs for APIs
// that publish none (internal/testkit/harness/crds/*.yaml).
func CRDDocuments() ([][]byte, error) {
	crdDocsCache.Lock()
	defer crdDocsCache.Unlock()
	if crdDocsCache.docs != nil {
		return cloneDocs(crdDocsCache.docs), nil
	}
	docs, err := UpstreamCRDDocuments()
	if err != nil {
		return nil, err
	}
	scm, err := spireCRDDocuments()
	if err != nil {
		return nil, err
	}
	own, err := EmbeddedCRDDocuments()
	if err != nil {
		return nil, err
	}
	docs = append(append(docs, scm...), own...)
	crdDocsCache.docs = docs
	return cloneDocs(docs), nil
}

func cloneDocs(in [][]byte) [][]byte {
	out := make([][]byte, len(in))
	for i, d := range in {
		out[i] = append([]byte(nil), d...)
	}
	return out
}

// UpstreamCRDDocuments returns the operators' published CRDs, as pinned in
// internal/testkit/upstreamcrds/pins.tsv and in that order, each checked
// against its sha256: from $ZT_UPSTREAM_CRDS, the tool cache,
// ../shared/upstream-crds beside the clone, or a download from its project
// (see package upstreamcrds). Read once per process.
func UpstreamCRDDocuments() ([][]byte, error) {
	upstreamDocs.Do(func() {
		upstreamDocs.docs, upstreamDocs.err = fetchUpstreamCRDs()
	})
	if upstreamDocs.err != nil {
		return nil, upstreamDocs.err
	}
	return cloneDocs(upstreamDocs.docs), nil
}

var upstreamDocs struct {
	sync.Once
	docs [][]byte
	err  error
}

func fetchUpstreamCRDs() ([][]byte, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	pins, err := upstreamcrds.Pins()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return upstreamcrds.Fetch(ctx, pins, upstreamcrds.DefaultSources(harnessCacheDir(toolEnv()), root))
}

// UpstreamCRD returns the published CRD named name (plural.group) as a
// decoded object, for tests that compare the provider's schema with it.
func UpstreamCRD(name string) (map[string]any, error) {
	docs, err := UpstreamCRDDocuments()
	if err != nil {
		return nil, err
	}
	return CRDNamed(docs, name)
}

// CRDNamed finds the CRD named name (plural.group) in docs and decodes it.
func CRDNamed(docs [][]byte, name string) (map[string]any, error) {
	for _, d := range docs {
		objs, err := SplitYAML(d)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if md, _ := o["metadata"].(map[string]any); md != nil && md["name"] == name {
				return o, nil
			}
		}
	}
	return nil, fmt.Errorf("harness: no CRD named %s", name)
}

// CRDVersionSchema returns the openAPIV3Schema of a decoded CRD's served
// version.
func CRDVersionSchema(crd map[string]any, version string) (map[string]any, error) {
	spec, _ := crd["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if m["name"] != version || m["served"] != true {
			continue
		}
		s, _ := m["schema"].(map[string]any)
		if root, ok := s["openAPIV3Schema"].(map[string]any); ok {
			return root, nil
		}
		return nil, fmt.Errorf("harness: CRD version %s has no openAPIV3Schema", version)
	}
	return nil, fmt.Errorf("harness: the CRD does not serve version %s", version)
}

// EmbeddedCRDDocuments returns only the project's own test CRDs, sorted by file name.
func EmbeddedCRDDocuments() ([][]byte, error) {
	names, err := fs.Glob(embeddedCRDs, "crds/*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var docs [][]byte
	for _, n := range names {
		data, err := embeddedCRDs.ReadFile(n)
		if err != nil {
			return nil, err
		}
		docs = append(docs, data)
	}
	return docs, nil
}

// SpireControllerManagerDir returns the directory of the pinned
// spire-controller-manager module in the Go module cache, downloading it if
// needed.
func SpireControllerManagerDir() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	wrapper := filepath.Join(root, "tools", "spire-controller-manager")
	gomod, err := os.ReadFile(filepath.Join(wrapper, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("reading the spire-controller-manager pin: %w", err)
	}
	version := requiredVersion(gomod, spireControllerManagerModule)
	if version == "" {
		return "", fmt.Errorf("%s/go.mod does not require %s", wrapper, spireControllerManagerModule)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("go", "mod", "download", "-json", spireControllerManagerModule+"@"+version)
	cmd.Dir = wrapper
	cmd.Env = append(toolEnv(), "GOWORK=off")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var info struct {
		Dir   string
		Error string
	}
	if err := json.Unmarshal(stdout.Bytes(), &info); err != nil && runErr == nil {
		return "", fmt.Errorf("go mod download -json %s@%s: %w", spireControllerManagerModule, version, err)
	}
	if runErr != nil || info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download -json %s@%s (in %s) failed: %v %s\n%s",
			spireControllerManagerModule, version, wrapper, runErr, info.Error, tailLines(stderr.String(), 20))
	}
	return info.Dir, nil
}

func spireCRDDocuments() ([][]byte, error) {
	dir, err := SpireControllerManagerDir()
	if err != nil {
		return nil, err
	}
	var docs [][]byte
	for _, name := range SpireControllerManagerCRDs {
		data, err := os.ReadFile(filepath.Join(dir, "config", "crd", "bases", name))
		if err != nil {
			return nil, fmt.Errorf("spire-controller-manager CRD: %w", err)
		}
		docs = append(docs, data)
	}
	return docs, nil
}

// requiredVersion returns the version at which a go.mod requires module.
func requiredVersion(gomod []byte, module string) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "require" {
			f = f[1:]
		}
		if len(f) >= 2 && f[0] == module && strings.HasPrefix(f[1], "v") {
			return f[1]
		}
	}
	return ""
}

// SplitYAML splits a multi-document YAML (or JSON) stream into JSON objects,
// skipping empty documents.
func SplitYAML(data []byte) ([]map[string]any, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []map[string]any
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(obj) == 0 {
			continue
		}
		out = append(out, obj)
	}
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallCRDs creates or updates every CustomResourceDefinition in docs
// (YAML, possibly several per document), then waits until each is
// Established, its group-version discovery lists it, and a LIST on the new
// resource answers 200, so callers do not hit the stale-discovery window;
// finally until the apiserver's 2s create delay for freshly Established
// CRDs has passed (so a newly installed set costs ~2s once, here).
func InstallCRDs(ctx context.Context, cfg *rest.Config, docs [][]byte) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	var crds []*unstructured.Unstructured
	for i, doc := range docs {
		objs, err := SplitYAML(doc)
		if err != nil {
			return fmt.Errorf("CRD document %d: %w", i, err)
		}
		for _, o := range objs {
			u := &unstructured.Unstructured{Object: o}
			if u.GetKind() != "CustomResourceDefinition" || u.GetName() == "" {
				return fmt.Errorf("CRD document %d: kind %q name %q is not a CustomResourceDefinition", i, u.GetKind(), u.GetName())
			}
			crds = append(crds, u)
		}
	}
	client := dyn.Resource(crdGVR)
	for _, crd := range crds {
		_, err := client.Create(ctx, crd.DeepCopy(), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
				cur, err := client.Get(ctx, crd.GetName(), metav1.GetOptions{})
				if err != nil {
					return err
				}
				upd := crd.DeepCopy()
				upd.SetResourceVersion(cur.GetResourceVersion())
				_, err = client.Update(ctx, upd, metav1.UpdateOptions{})
				return err
			})
		}
		if err != nil {
			return fmt.Errorf("CRD %s: %w", crd.GetName(), err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	errs := make([]error, len(crds))
	established := make([]time.Time, len(crds))
	var wg sync.WaitGroup
	for i, crd := range crds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			established[i], errs[i] = waitCRDServed(ctx, dyn, disco, crd.GetName())
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	// The apiserver makes every create of a custom resource sleep 2s while
	// its CRD's Established condition is less than 2s old (an HA guard in
	// apiextensions-apiserver's handler). Wait that window out here so the
	// first create a test or the provider makes is not silently delayed.
	var latest time.Time
	for _, t := range established {
		if t.After(latest) {
			latest = t
		}
	}
	if d := time.Until(latest.Add(establishedCreateDelay + 50*time.Millisecond)); d > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
	return nil
}

// establishedCreateDelay is the window after a CRD becomes Established in
// which the apiserver delays creates of its resources by as much.
const establishedCreateDelay = 2 * time.Second

// waitCRDServed waits until crdServed succeeds and returns the time the CRD
// became Established (second precision, as the API server stores it).
func waitCRDServed(ctx context.Context, dyn dynamic.Interface, disco discovery.DiscoveryInterface, name string) (time.Time, error) {
	for {
		established, err := crdServed(ctx, dyn, disco, name)
		if err == nil {
			return established, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("CRD %s not served: %w", name, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func crdServed(ctx context.Context, dyn dynamic.Interface, disco discovery.DiscoveryInterface, name string) (time.Time, error) {
	var since time.Time
	crd, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return since, err
	}
	established := false
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	var msgs []string
	for _, c := range conds {
		m, _ := c.(map[string]any)
		t, _ := m["type"].(string)
		s, _ := m["status"].(string)
		if t == "Established" && s == "True" {
			established = true
			if ts, _ := m["lastTransitionTime"].(string); ts != "" {
				since, _ = time.Parse(time.RFC3339, ts)
			}
			if since.IsZero() {
				since = time.Now()
			}
		}
		if msg, _ := m["message"].(string); msg != "" && s != "True" {
			msgs = append(msgs, t+": "+msg)
		}
	}
	if !established {
		return since, fmt.Errorf("not Established yet %v", msgs)
	}
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if served, _ := m["served"].(bool); !served {
			continue
		}
		version, _ := m["name"].(string)
		gv := path.Join(group, version)
		list, err := disco.ServerResourcesForGroupVersion(gv)
		if err != nil {
			return since, fmt.Errorf("discovery of %s: %w", gv, err)
		}
		found := false
		for _, r := range list.APIResources {
			if r.Name == plural {
				found = true
			}
		}
		if !found {
			return since, fmt.Errorf("discovery of %s does not list %s yet", gv, plural)
		}
		gvr := schema.GroupVersionResource{Group: group, Version: version, Resource: plural}
		if _, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
			return since, fmt.Errorf("LIST %s: %w", gvr, err)
		}
	}
	return since, nil
}
