package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/harness"
)

var cftdGVR = schema.GroupVersionResource{Group: "spire.spiffe.io", Version: "v1alpha1", Resource: "clusterfederatedtrustdomains"}

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
	return printSpireBundles(w, st, held)
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
