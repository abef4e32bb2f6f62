package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// workloadName is each cluster's workload: the Pod apps/app, of the
// ServiceAccount app, labelled workloadLabel=app, which
// examples/n-cluster-mesh's ClusterSPIFFEID gives the ID
// spiffe://<trust domain>/ns/apps/sa/app.
const (
	workloadName      = "app"
	workloadNamespace = "apps"
	workloadLabel     = "zerotrust.example/workload"
	// workloadIdentityWait is how long a workload waits for its identity:
	// nothing gives it one until `terraform apply` creates the
	// ClusterSPIFFEIDs.
	workloadIdentityWait = 2 * time.Hour
)

// startWorkloads starts, per SPIRE server, a detached k8s_psat spire-agent
// and a pod workload whose server accepts only the other servers' workloads;
// on failure it stops what it started. No ClusterSPIFFEID selects the Pods
// yet, so the workloads have no identity: each waits for the one the
// example's ClusterSPIFFEID will give it.
func startWorkloads(ctx context.Context, spires []*harness.Spire) ([]*harness.Workload, error) {
	var workloads []*harness.Workload
	for _, s := range spires {
		var allow []string
		for _, peer := range spires {
			if peer != s {
				allow = append(allow, workloadID(peer.TrustDomain))
			}
		}
		a, err := harness.StartSpireAgentWith(ctx, s, harness.SpireAgentOptions{Name: "node", K8sPSAT: true, Detach: true})
		if err != nil {
			stopWorkloads(workloads)
			return nil, err
		}
		w, err := harness.StartPodWorkload(ctx, a, harness.PodWorkloadOptions{
			Namespace: workloadNamespace, Pod: workloadName, ServiceAccount: workloadName,
			Labels: map[string]string{workloadLabel: workloadName}, Allow: allow, SPIFFEID: workloadID(s.TrustDomain),
			ReadyTimeout: workloadIdentityWait, ServeLater: true, Detach: true,
		})
		if err != nil {
			_ = a.Stop()
			stopWorkloads(workloads)
			return nil, err
		}
		workloads = append(workloads, w)
	}
	return workloads, nil
}

// workloadID is the SPIFFE ID the example's template gives the workload of
// trust domain td.
func workloadID(td string) string {
	return "spiffe://" + td + "/ns/" + workloadNamespace + "/sa/" + workloadName
}

func stopWorkloads(workloads []*harness.Workload) {
	for _, w := range workloads {
		for _, err := range []error{w.Stop(), w.Agent.Stop()} {
			if err != nil {
				fmt.Fprintln(os.Stderr, "ztlab:", err)
			}
		}
	}
}

func hasWorkloads(st *harness.State) bool {
	for _, c := range st.Clusters {
		if c.Spire != nil && c.Spire.Workload != nil {
			return true
		}
	}
	return false
}

// mtls prints, for every ordered pair of clusters, whether the first
// cluster's workload completes an mTLS handshake with the second's, each
// authorizing only the other's SPIFFE ID. Exit code 1 when --want is given
// and a pair's outcome differs after --wait.
func mtls(ctx context.Context, args []string, w io.Writer) (int, error) {
	fs := flag.NewFlagSet("mtls", flag.ContinueOnError)
	stateDir := fs.String("state", "demo/state", "directory given to ztlab up")
	want := fs.String("want", "", `"ok" or "fail": exit 1 unless every pair has that outcome`)
	waitFor := fs.Duration("wait", 0, "with --want, retry each pair until it has the wanted outcome or this passes")
	if err := fs.Parse(args); err != nil {
		return 2, err
	}
	if *want != "" && *want != "ok" && *want != "fail" {
		return 2, fmt.Errorf(`--want must be "ok" or "fail", not %q`, *want)
	}
	p, err := statePaths(*stateDir)
	if err != nil {
		return 2, err
	}
	st, err := harness.ReadState(p.state)
	if err != nil {
		return 2, err
	}
	var spires []harness.SpireState
	for _, name := range st.Order {
		if s := st.Clusters[name].Spire; s != nil && s.Workload != nil {
			spires = append(spires, *s)
		}
	}
	if len(spires) < 2 {
		return 2, errors.New("the lab has fewer than two workloads: start it with ztlab up --spire --workloads")
	}

	type result struct {
		from, to harness.SpireState
		ok       bool
		detail   string
	}
	var results []*result
	for _, from := range spires {
		for _, to := range spires {
			if from.TrustDomain != to.TrustDomain {
				results = append(results, &result{from: from, to: to})
			}
		}
	}
	var wg sync.WaitGroup
	for _, r := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			deadline := time.Now().Add(*waitFor)
			for {
				r.ok, r.detail = harness.CheckMTLSState(ctx, *r.from.Workload, *r.to.Workload)
				if *want == "" || r.ok == (*want == "ok") || time.Now().After(deadline) || ctx.Err() != nil {
					return
				}
				time.Sleep(time.Second)
			}
		}()
	}
	wg.Wait()

	code := 0
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FROM\tTO\tHANDSHAKE\tDETAIL")
	for _, r := range results {
		outcome := "fail"
		if r.ok {
			outcome = "ok"
		}
		if *want != "" && outcome != *want {
			code = 1
			outcome += " (want " + *want + ")"
		}
		detail := r.detail
		// "handshake with <addr>: " says nothing the row does not.
		if rest, ok := strings.CutPrefix(detail, "handshake with "); ok {
			if _, reason, ok := strings.Cut(rest, ": "); ok {
				detail = reason
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.from.Workload.SPIFFEID, r.to.Workload.SPIFFEID, outcome, oneLine(detail, 120))
	}
	tw.Flush()
	return code, nil
}

// oneLine joins s's lines and cuts it to at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
