package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

var cftdGVR = kube.ClusterFederatedTrustDomain.GVR()

// show prints, asked from each cluster's API server (not from any Terraform
// state), the ClusterFederatedTrustDomains each cluster holds, and, for a lab
// with SPIRE, the bundles each SPIRE server holds, asked from SPIRE itself.
// Every other cluster's trust domain is expected there: show waits up to
// --wait for them (spire-controller-manager reconciles asynchronously) and
// fails when one is still missing.
func show(ctx context.Context, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("show", flag.ContinueOnError)
	stateDir := fs.String("state", "demo/state", "directory given to ztlab up")
	wait := fs.Duration("wait", 0, "with SPIRE: how long to wait for every peer's bundle to arrive")
	if err := fs.Parse(args); err != nil {
		return err
	}
	p, err := statePaths(*stateDir)
	if err != nil {
		return err
	}
	st, err := harness.ReadState(p.state)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tCLUSTERFEDERATEDTRUSTDOMAIN\tTRUST DOMAIN\tBUNDLE ENDPOINT\tPROFILE\tBOOTSTRAP BUNDLE\tMANAGED BY")
	for _, name := range st.Order {
		c := st.Clusters[name]
		cfg := &rest.Config{Host: c.Host, BearerToken: c.Token, TLSClientConfig: rest.TLSClientConfig{CAFile: c.CACertFile}}
		dyn, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return err
		}
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		list, err := dyn.Resource(cftdGVR).List(lctx, metav1.ListOptions{})
		cancel()
		if err != nil {
			fmt.Fprintf(tw, "%s\t(error: %v)\t\t\t\t\t\n", name, err)
			continue
		}
		if len(list.Items) == 0 {
			fmt.Fprintf(tw, "%s\t(none)\t\t\t\t\t\n", name)
		}
		sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].GetName() < list.Items[j].GetName() })
		for _, item := range list.Items {
			str := func(f ...string) string {
				v, _, _ := unstructured.NestedString(item.Object, append([]string{"spec"}, f...)...)
				return v
			}
			bundle := "no"
			if str("trustDomainBundle") != "" {
				bundle = "yes"
			}
			managers := ""
			for _, m := range item.GetManagedFields() {
				if managers != "" {
					managers += ","
				}
				managers += m.Manager
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, item.GetName(), str("trustDomain"),
				str("bundleEndpointURL"), str("bundleEndpointProfile", "type"), bundle, managers)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !hasSpire(st) {
		return nil
	}
	fmt.Fprintln(w)
	held := waitForPeers(ctx, st, *wait)
	if err := printSpireBundles(w, st, held); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return printExecRequests(w, st)
}

// spireHolds is what one SPIRE server answered: the trust domains whose
// bundles it holds, or the error asking it.
type spireHolds struct {
	tds map[string]bool
	err error
}

// expectedPeers are the trust domains of every other cluster with SPIRE.
func expectedPeers(st *harness.State, name string) []string {
	var peers []string
	for _, other := range st.Order {
		if s := st.Clusters[other].Spire; other != name && s != nil {
			peers = append(peers, s.TrustDomain)
		}
	}
	sort.Strings(peers)
	return peers
}

// askSpire runs `spire-server bundle list` against every SPIRE server.
func askSpire(ctx context.Context, st *harness.State) map[string]spireHolds {
	held := map[string]spireHolds{}
	for _, name := range st.Order {
		s := st.Clusters[name].Spire
		if s == nil {
			continue
		}
		qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		tds, err := s.FederatedTrustDomains(qctx)
		cancel()
		h := spireHolds{tds: map[string]bool{}, err: err}
		for _, td := range tds {
			h.tds[td] = true
		}
		held[name] = h
	}
	return held
}

func complete(st *harness.State, held map[string]spireHolds) bool {
	for name, h := range held {
		if h.err != nil {
			return false
		}
		for _, peer := range expectedPeers(st, name) {
			if !h.tds[peer] {
				return false
			}
		}
	}
	return true
}

// waitForPeers asks every SPIRE server until each holds all its peers'
// bundles or wait has passed, and returns the last answers.
func waitForPeers(ctx context.Context, st *harness.State, wait time.Duration) map[string]spireHolds {
	deadline := time.Now().Add(wait)
	for {
		held := askSpire(ctx, st)
		if complete(st, held) || !time.Now().Before(deadline) || ctx.Err() != nil {
			return held
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// printSpireBundles prints one row per (cluster, trust domain) for every
// peer expected and every bundle held, and fails when a peer is missing.
func printSpireBundles(w io.Writer, st *harness.State, held map[string]spireHolds) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tSPIRE TRUST DOMAIN\tPEER TRUST DOMAIN\tBUNDLE IN SPIRE (spire-server bundle list)")
	var missing []string
	for _, name := range st.Order {
		s := st.Clusters[name].Spire
		if s == nil {
			continue
		}
		h := held[name]
		if h.err != nil {
			fmt.Fprintf(tw, "%s\t%s\t(error: %v)\t\n", name, s.TrustDomain, h.err)
			missing = append(missing, name+": SPIRE did not answer")
			continue
		}
		rows := map[string]string{}
		for td := range h.tds {
			rows[td] = "present (not a cluster of this lab)"
		}
		for _, peer := range expectedPeers(st, name) {
			if h.tds[peer] {
				rows[peer] = "present"
			} else {
				rows[peer] = "MISSING"
				missing = append(missing, name+" lacks "+peer)
			}
		}
		if len(rows) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t(none)\t\n", name, s.TrustDomain)
		}
		tds := make([]string, 0, len(rows))
		for td := range rows {
			tds = append(tds, td)
		}
		sort.Strings(tds)
		for _, td := range tds {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, s.TrustDomain, td, rows[td])
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("peer bundles missing from SPIRE: %s", strings.Join(missing, "; "))
	}
	fmt.Fprintln(w, "\nevery SPIRE server holds the bundle of every peer")
	return nil
}

// execWait is what one cluster's exec endpoint log says about the latest
// wait_for_bundle polls for one peer (`spire-server bundle list -id
// spiffe://<peer>`, repeated until SPIRE holds the bundle).
type execWait struct {
	polls, heldPoll int
	first, heldAt   time.Time // first poll; end of the first poll that succeeded
}

// execLog is what one exec endpoint served, read from its log: the
// wait_for_bundle polls per peer trust domain, and how many requests each
// spire-server subcommand got.
type execLog struct {
	waits       map[string]*execWait
	subcommands map[string]int
}

// readExecLog parses the lines kubelet.go's execEndpoint writes:
//
//	<RFC 3339 time> exec <ns>/<pod>/<container> ["spire-server" "bundle" ...] from <addr>
//	<RFC 3339 time> exec ["spire-server" "bundle" ...]: ok after 12ms
//	<RFC 3339 time> exec ["spire-server" "bundle" ...]: exit code 1 after 9ms
func readExecLog(path string) (execLog, error) {
	l := execLog{waits: map[string]*execWait{}, subcommands: map[string]int{}}
	data, err := os.ReadFile(path)
	if err != nil {
		return l, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		stamp, rest, ok := strings.Cut(line, " exec ")
		if !ok {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, stamp)
		if err != nil {
			continue
		}
		open, end := strings.IndexByte(rest, '['), strings.IndexByte(rest, ']')
		if open < 0 || end < open {
			continue
		}
		var argv []string
		for _, f := range strings.Fields(rest[open+1 : end]) {
			if u, err := strconv.Unquote(f); err == nil {
				argv = append(argv, u)
			}
		}
		request := !strings.HasPrefix(rest, "[") // completions start with the argv
		if request && len(argv) >= 3 {
			l.subcommands[strings.Join(argv[:3], " ")]++
		}
		// wait_for_bundle's poll: spire-server bundle list -id spiffe://<td>
		if len(argv) != 5 || argv[1] != "bundle" || argv[2] != "list" || argv[3] != "-id" {
			continue
		}
		td := strings.TrimPrefix(argv[4], "spiffe://")
		w := l.waits[td]
		if w == nil {
			w = &execWait{}
			l.waits[td] = w
		}
		switch {
		case request && !w.heldAt.IsZero():
			// A later wait (another apply): show the latest one.
			*w = execWait{polls: 1, first: at}
		case request:
			w.polls++
			if w.first.IsZero() {
				w.first = at
			}
		case strings.Contains(rest, "]: ok after") && w.heldAt.IsZero():
			w.heldAt, w.heldPoll = at, w.polls
		}
	}
	return l, nil
}

// printExecRequests shows, from each cluster's exec endpoint log, what pod
// exec of spire-server-0 served: per peer, how long wait_for_bundle polled
// until SPIRE held the peer's bundle (the time is part of the
// ClusterFederatedTrustDomain's creation), and the requests per subcommand
// (bundle show: zerotrust_trust_bundle with spire_server; bundle delete:
// delete_bundle_on_destroy).
func printExecRequests(w io.Writer, st *harness.State) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tPEER TRUST DOMAIN\tWAIT_FOR_BUNDLE (pod exec: spire-server bundle list -id)\tWAITED")
	var other []string
	for _, name := range st.Order {
		s := st.Clusters[name].Spire
		if s == nil {
			continue
		}
		if s.ExecEndpoint == nil {
			fmt.Fprintf(tw, "%s\t\t(no exec endpoint: pod exec of spire-server-0 fails in this lab)\t\n", name)
			continue
		}
		l, err := readExecLog(s.ExecEndpoint.LogPath)
		if err != nil {
			fmt.Fprintf(tw, "%s\t\t(error: %v)\t\n", name, err)
			continue
		}
		if len(l.waits) == 0 {
			fmt.Fprintf(tw, "%s\t\t(not asked)\t\n", name)
		}
		tds := make([]string, 0, len(l.waits))
		for td := range l.waits {
			tds = append(tds, td)
		}
		sort.Strings(tds)
		for _, td := range tds {
			wt := l.waits[td]
			polls := fmt.Sprintf("%d poll(s)", wt.polls)
			waited := "bundle never held"
			if !wt.heldAt.IsZero() {
				polls += fmt.Sprintf(", bundle held at poll %d", wt.heldPoll)
				waited = wt.heldAt.Sub(wt.first).Round(time.Millisecond).String()
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, td, polls, waited)
		}
		subs := make([]string, 0, len(l.subcommands))
		for sub, n := range l.subcommands {
			subs = append(subs, fmt.Sprintf("%s: %d", sub, n))
		}
		sort.Strings(subs)
		other = append(other, fmt.Sprintf("  %s (%s): %s", name, s.ExecEndpoint.LogPath, strings.Join(subs, ", ")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\npod exec requests served per cluster (each exec endpoint's log):")
	for _, line := range other {
		fmt.Fprintln(w, line)
	}
	return nil
}
