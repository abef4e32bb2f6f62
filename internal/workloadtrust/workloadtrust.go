// Package workloadtrust answers whether the workloads a ClusterSPIFFEID
// selects federate as it declares: that is what a ClusterSPIFFEID is for,
// and the object alone does not say it. Three things must hold on the
// cluster, each asked once per Check:
//
//  1. the SPIRE server holds a bundle of every trust domain the
//     ClusterSPIFFEID federates with (`spire-server bundle list`): SPIRE
//     refuses an entry that federates with a trust domain it holds no bundle
//     of, and spire-controller-manager then only counts the failure;
//  2. spire-controller-manager rendered the ClusterSPIFFEID's entries with no
//     failures (its `status.stats`);
//  3. SPIRE's entry of every pod the ClusterSPIFFEID selects carries the
//     federation (`spire-server entry show`; an entry belongs to a pod by its
//     `k8s:pod-uid` selector, as spire-controller-manager renders it).
package workloadtrust

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
)

// Want is what one ClusterSPIFFEID declares.
type Want struct {
	Name          string   // ClusterSPIFFEID name
	FederatesWith []string // trust domains its entries must federate with
}

// The steps a Problem belongs to, in the order they must hold.
const (
	StepBundle  = "bundle"  // SPIRE holds no bundle of TrustDomain
	StepRender  = "render"  // spire-controller-manager counts failures
	StepEntries = "entries" // an entry lacks the federation, or is missing
)

// Problem is one reason the workloads do not federate yet.
type Problem struct {
	Step        string
	TrustDomain string
	// Entry names the entry (ID and SPIFFE ID) or pod the problem is about.
	Entry string
	// Reason is SPIRE's or the controller's account of it.
	Reason string
}

func (p Problem) String() string {
	var b strings.Builder
	switch p.Step {
	case StepBundle:
		fmt.Fprintf(&b, "the SPIRE server holds no bundle of %q", p.TrustDomain)
	case StepRender:
		b.WriteString("spire-controller-manager")
	default:
		if p.TrustDomain != "" {
			fmt.Fprintf(&b, "%s does not federate with %q", p.Entry, p.TrustDomain)
		} else {
			b.WriteString(p.Entry)
		}
	}
	if p.Reason != "" {
		b.WriteString(": " + p.Reason)
	}
	return b.String()
}

// controllerIgnores are the namespaces spire-controller-manager ignores
// unless configured otherwise (its default ignoreNamespaces): it renders no
// entry for their pods, so none is expected.
var controllerIgnores = []string{"kube-system", "kube-public", "spire-system"}

// SPIRE is what one SPIRE server holds that Check compares: the trust
// domains it has a federated bundle of and its registration entries.
type SPIRE struct {
	Bundles map[string]bool
	Entries []Entry
}

// Ask asks the SPIRE server for both, once each.
func Ask(ctx context.Context, s spireexec.Server) (SPIRE, error) {
	bundles, err := heldBundles(ctx, s)
	if err != nil {
		return SPIRE{}, err
	}
	entries, err := AskEntries(ctx, s)
	return SPIRE{Bundles: bundles, Entries: entries}, err
}

// Check asks the cluster and its SPIRE server once each and returns the
// problems left per ClusterSPIFFEID name (none: the workloads federate). An
// error means a question could not be asked.
func Check(ctx context.Context, c *kube.Client, s spireexec.Server, want []Want) (map[string][]Problem, error) {
	spire, err := Ask(ctx, s)
	if err != nil {
		return nil, err
	}
	return CheckWith(ctx, c, spire, want)
}

// CheckWith is Check with what SPIRE holds already asked (once per cluster
// for every ClusterSPIFFEID of a refresh).
func CheckWith(ctx context.Context, c *kube.Client, spire SPIRE, want []Want) (map[string][]Problem, error) {
	out := map[string][]Problem{}
	for _, w := range want {
		var problems []Problem
		for _, td := range sorted(w.FederatesWith) {
			if !spire.Bundles[td] {
				problems = append(problems, Problem{Step: StepBundle, TrustDomain: td,
					Reason: "declare a ClusterFederatedTrustDomain for it and let SPIRE fetch the bundle, or seed it"})
			}
		}
		obj, err := c.Get(ctx, kube.ClusterSPIFFEID, "", w.Name)
		if err != nil {
			return nil, err
		}
		problems = append(problems, renderProblems(obj)...)
		if len(problems) == 0 && len(w.FederatesWith) > 0 {
			pods, err := selectedPods(ctx, c, obj)
			if err != nil {
				return nil, err
			}
			problems = EntryProblems(pods, spire.Entries, w.FederatesWith)
		}
		out[w.Name] = problems
	}
	return out, nil
}

// Wait polls Check every interval until no problem is left or ctx ends; then
// its error names every problem left at SPIRE's last answer (and the error
// of a last question the timeout cut short, or the error asking when SPIRE
// never answered), and the problems it returns are those of that answer, so
// the caller need not ask again.
func Wait(ctx context.Context, c *kube.Client, s spireexec.Server, want []Want, every time.Duration) (map[string][]Problem, error) {
	start := time.Now()
	// seen is SPIRE's last answer, nil until it answers (Check's answer is
	// never nil). The timeout often cuts the question under way short (a
	// slow exec); the problems SPIRE named before it are then still what the
	// caller must be told.
	var seen map[string][]Problem
	for {
		problems, err := Check(ctx, c, s, want)
		if err == nil {
			seen = problems
		}
		left := Describe(problems)
		if err == nil && left == "" {
			return nil, nil
		}
		if IsPermanent(err) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			waited := time.Since(start).Round(time.Second)
			switch {
			case err == nil:
				return problems, fmt.Errorf("after %s the workloads do not federate yet: %s", waited, left)
			case seen != nil:
				return seen, fmt.Errorf("after %s the workloads do not federate yet: %s (the last check was cut short: %v)", waited, Describe(seen), err)
			}
			return nil, fmt.Errorf("after %s the workloads' federation could not be checked: %w", waited, err)
		case <-time.After(every):
		}
	}
}

// IsPermanent reports an error that asking again cannot cure: a refusal
// (no permission, no such container) or a ClusterSPIFFEID that is gone.
func IsPermanent(err error) bool {
	return err != nil && (spireexec.IsPermanent(err) || apierrors.IsForbidden(err) || kube.IsNotFound(err))
}

// Describe lists every problem in one text, "" when there is none.
func Describe(problems map[string][]Problem) string {
	names := make([]string, 0, len(problems))
	for n := range problems {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		for _, p := range problems[n] {
			parts = append(parts, fmt.Sprintf("ClusterSPIFFEID %q: %s", n, p))
		}
	}
	return strings.Join(parts, "; ")
}

// Entry is one SPIRE registration entry as `entry show -output json` prints it.
type Entry struct {
	ID            string
	SPIFFEID      string
	Selectors     []string // type:value
	FederatesWith []string
}

// Pod is a pod a ClusterSPIFFEID selects.
type Pod struct {
	Namespace, Name, UID string
}

// EntryProblems compares the entries of the pods with the trust domains they
// must federate with: a pod needs at least one entry (by its k8s:pod-uid
// selector) federating with all of them.
func EntryProblems(pods []Pod, entries []Entry, federatesWith []string) []Problem {
	byPod := map[string][]Entry{}
	for _, e := range entries {
		for _, sel := range e.Selectors {
			if uid, ok := strings.CutPrefix(sel, "k8s:pod-uid:"); ok {
				byPod[uid] = append(byPod[uid], e)
			}
		}
	}
	var problems []Problem
	for _, p := range pods {
		own := byPod[p.UID]
		if len(own) == 0 {
			problems = append(problems, Problem{Step: StepEntries, Entry: "pod " + p.Namespace + "/" + p.Name,
				Reason: "SPIRE holds no entry for it yet"})
			continue
		}
		var best []string
		for _, e := range own {
			missing := missingFrom(e.FederatesWith, federatesWith)
			if len(missing) == 0 {
				best = nil
				break
			}
			if best == nil || len(missing) < len(best) {
				best = missing
			}
		}
		for _, td := range best {
			problems = append(problems, Problem{Step: StepEntries, TrustDomain: td,
				Entry:  fmt.Sprintf("entry %s (%s, pod %s/%s)", own[0].ID, own[0].SPIFFEID, p.Namespace, p.Name),
				Reason: "spire-controller-manager has not updated it yet"})
		}
	}
	return problems
}

func missingFrom(have, want []string) []string {
	var missing []string
	for _, td := range sorted(want) {
		if !slices.Contains(have, td) {
			missing = append(missing, td)
		}
	}
	return missing
}

func sorted(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

// Stats is a ClusterSPIFFEID's status.stats.
type Stats struct {
	NamespacesSelected     int64 `json:"namespacesSelected"`
	NamespacesIgnored      int64 `json:"namespacesIgnored"`
	PodsSelected           int64 `json:"podsSelected"`
	PodEntryRenderFailures int64 `json:"podEntryRenderFailures"`
	EntriesMasked          int64 `json:"entriesMasked"`
	EntriesToSet           int64 `json:"entriesToSet"`
	EntryFailures          int64 `json:"entryFailures"`
}

// StatsOf reads obj's status.stats (zero when it has none yet).
func StatsOf(obj *unstructured.Unstructured) Stats {
	var st Stats
	m, _, _ := unstructured.NestedMap(obj.Object, "status", "stats")
	_ = runtime.DefaultUnstructuredConverter.FromUnstructured(m, &st)
	return st
}

// renderProblems are the failures spire-controller-manager counts in obj's
// status.stats.
func renderProblems(obj *unstructured.Unstructured) []Problem {
	st := StatsOf(obj)
	var problems []Problem
	if st.PodEntryRenderFailures > 0 {
		problems = append(problems, Problem{Step: StepRender, Reason: fmt.Sprintf(
			"%d pod entries failed to render (status.stats.podEntryRenderFailures; the controller's log names the template error)",
			st.PodEntryRenderFailures)})
	}
	if st.EntryFailures > 0 {
		problems = append(problems, Problem{Step: StepRender, Reason: fmt.Sprintf(
			"SPIRE refused %d entries (status.stats.entryFailures), as it does for an entry federating with a trust domain "+
				"whose bundle it does not hold", st.EntryFailures)})
	}
	return problems
}

// selectedPods lists the running pods obj selects outside the namespaces the
// controller ignores, as spire-controller-manager does: the namespace
// selector over namespaces, then the pod selector in each.
func selectedPods(ctx context.Context, c *kube.Client, obj *unstructured.Unstructured) ([]Pod, error) {
	nsSel, err := selectorAt(obj, "namespaceSelector")
	if err != nil {
		return nil, err
	}
	podSel, err := selectorAt(obj, "podSelector")
	if err != nil {
		return nil, err
	}
	namespaces, err := c.ListSelected(ctx, kube.Namespace, "", nsSel.String())
	if err != nil {
		return nil, err
	}
	var pods []Pod
	for _, ns := range namespaces {
		if slices.Contains(controllerIgnores, ns.GetName()) {
			continue
		}
		list, err := c.ListSelected(ctx, kube.Pod, ns.GetName(), podSel.String())
		if err != nil {
			return nil, err
		}
		for _, p := range list {
			node, _, _ := unstructured.NestedString(p.Object, "spec", "nodeName")
			phase, _, _ := unstructured.NestedString(p.Object, "status", "phase")
			if node == "" || phase == "Succeeded" || phase == "Failed" || p.GetDeletionTimestamp() != nil {
				continue
			}
			pods = append(pods, Pod{Namespace: p.GetNamespace(), Name: p.GetName(), UID: string(p.GetUID())})
		}
	}
	return pods, nil
}

func selectorAt(obj *unstructured.Unstructured, field string) (labels.Selector, error) {
	m, found, _ := unstructured.NestedMap(obj.Object, "spec", field)
	if !found {
		return labels.Everything(), nil
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &ls); err != nil {
		return nil, fmt.Errorf("spec.%s of ClusterSPIFFEID %s: %w", field, obj.GetName(), err)
	}
	return metav1.LabelSelectorAsSelector(&ls)
}

// heldBundles is the set of trust domains SPIRE holds a federated bundle of.
func heldBundles(ctx context.Context, s spireexec.Server) (map[string]bool, error) {
	out, err := s.Ask(ctx, spireexec.ListBundlesArgs...)
	if err != nil {
		return nil, err
	}
	bundles, err := spireexec.ParseBundleList(out)
	if err != nil {
		return nil, err
	}
	held := map[string]bool{}
	for td := range bundles {
		held[td] = true
	}
	return held, nil
}

// listEntryArgs asks SPIRE for every registration entry.
var listEntryArgs = []string{"entry", "show", "-output", "json"}

// AskEntries asks the SPIRE server for its registration entries, once (for
// a caller that has its bundles already).
func AskEntries(ctx context.Context, s spireexec.Server) ([]Entry, error) {
	out, err := s.Ask(ctx, listEntryArgs...)
	if err != nil {
		return nil, err
	}
	return ParseEntries(out)
}

// ParseEntries reads `spire-server entry show -output json`.
func ParseEntries(out []byte) ([]Entry, error) {
	type id struct {
		TrustDomain string `json:"trust_domain"`
		Path        string `json:"path"`
	}
	var shown struct {
		Entries []struct {
			ID        string `json:"id"`
			SPIFFEID  id     `json:"spiffe_id"`
			Selectors []struct {
				Type  string `json:"type"`
				Value string `json:"value"`
			} `json:"selectors"`
			FederatesWith []string `json:"federates_with"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(out, &shown); err != nil {
		return nil, fmt.Errorf("reading `spire-server entry show`: %w", err)
	}
	entries := make([]Entry, 0, len(shown.Entries))
	for _, e := range shown.Entries {
		entry := Entry{ID: e.ID, SPIFFEID: "spiffe://" + e.SPIFFEID.TrustDomain + e.SPIFFEID.Path, FederatesWith: e.FederatesWith}
		for _, sel := range e.Selectors {
			entry.Selectors = append(entry.Selectors, sel.Type+":"+sel.Value)
		}
		entries = append(entries, entry)
	}
	return entries, nil
}
