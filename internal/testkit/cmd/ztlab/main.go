// Command ztlab runs a lab of local Kubernetes API servers (etcd +
// kube-apiserver pairs on 127.0.0.1, with the test CRDs installed) that
// outlives the command, for `make demo`; with --spire each cluster also gets
// a real SPIRE server and spire-controller-manager (harness.StartSpire), and
// the Node, Pod and exec endpoint through which pod exec of spire-server-0
// reaches the real spire-server, as in the acceptance tests. The SPIRE of
// the clusters --helm names is laid out as the SPIFFE Helm chart's defaults
// lay it out (harness.SpireOptions.Helm: SPIRE's BundlePublisher
// "k8s_configmap" writes bundle.spiffe), the others' as the OpenShift
// operator does (its Notifier "k8sbundle" writes bundle.crt).
//
//	ztlab up     --clusters east,west --state demo/state [--spire [--helm west] [--workloads]] [--audit] [--skip-crds]
//	ztlab status --state demo/state
//	ztlab show   --state demo/state [--wait 60s]
//	ztlab mtls   --state demo/state [--want ok|fail] [--wait 60s]
//	ztlab down   --state demo/state
//	ztlab tfvars --state demo/state
//
// up writes <state>/lab.json (PIDs, hosts, tokens), <state>/kubeconfig (one
// context per cluster, named after it) and <state>/clusters.json (per
// cluster: kubeconfig, context, trust domain, bundle endpoint URL, SPIRE
// admin socket), for configurations of one's own. If a healthy lab is
// already recorded there, up says so and exits 0.
//
// The exec endpoints run as detached processes of this program (the hidden
// `ztlab exec-endpoint`, harness.ExecEndpointMain), from a copy in
// <state>/bin, logging every request to <spire dir>/exec-endpoint.log; lab.json
// records them, so status checks their health and down stops them.
//
// With --workloads each cluster also gets a real spire-agent (k8s_psat, with
// the pod workload attestor) and a go-spiffe workload (internal/testkit/cmd/ztworkload)
// running as the Pod apps/app (ServiceAccount app), labelled
// zerotrust.example/workload=app, whose
// server accepts only the other clusters' workloads; both run detached and
// are recorded in lab.json too. The workload has no identity until a
// ClusterSPIFFEID selects its Pod (examples/n-cluster-mesh's gives it
// spiffe://<trust domain>/ns/apps/sa/app, federated with every peer, when its
// workloads variable selects the label, as `ztlab tfvars` sets it): it waits
// for it. mtls tries an mTLS handshake for every ordered pair of clusters.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

const usage = `usage:
  ztlab up     [--clusters east,west] [--state DIR] [--spire [--trust-domain-suffix demo.test] [--helm west] [--workloads]] [--audit] [--skip-crds]
  ztlab status [--state DIR]
  ztlab down   [--state DIR]
  ztlab show   [--state DIR] [--wait 60s]
               (the objects each cluster holds, asked from its API server, and
               the bundles each SPIRE server holds, asked from SPIRE; with SPIRE,
               exits 1 when a peer's bundle is missing after --wait; then what
               each cluster's pod exec endpoint served)
  ztlab tfvars [--state DIR]
               (prints clusters.json as the clusters variable of
               examples/n-cluster-mesh, with spire_install = "helm" for the
               clusters laid out as the chart does, and its workloads variable
               selecting the lab's workload pods: a terraform.tfvars.json)
  ztlab mtls   [--state DIR] [--want ok|fail] [--wait 60s]
               (needs up --workloads: a table of the mTLS handshake between the
               workloads of every ordered pair of clusters; --want exits 1 unless
               every pair has that outcome, retrying each pair for up to --wait)
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	code := 0
	switch os.Args[1] {
	case "up":
		err = up(ctx, os.Args[2:])
	case "down":
		err = down(os.Args[2:])
	case "status":
		code, err = status(ctx, os.Args[2:], os.Stdout)
	case "show":
		err = show(ctx, os.Args[2:], os.Stdout)
	case "tfvars":
		err = tfvars(os.Args[2:], os.Stdout)
	case "mtls":
		code, err = mtls(ctx, os.Args[2:], os.Stdout)
	case execEndpointCommand: // hidden: started by up, one per cluster with SPIRE
		err = harness.ExecEndpointMain(ctx, os.Args[2:])
	case "-h", "--help", "help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "ztlab: unknown command %q\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ztlab %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	os.Exit(code)
}

// execEndpointCommand is the hidden subcommand that serves pod exec.
const execEndpointCommand = "exec-endpoint"

type paths struct{ dir, state, kubeconfig, clusters, clustersJSON, bin string }

func statePaths(dir string) (paths, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return paths{}, err
	}
	return paths{
		dir:        abs,
		state:      filepath.Join(abs, "lab.json"),
		kubeconfig: filepath.Join(abs, "kubeconfig"),
		clusters:   filepath.Join(abs, "clusters"),
		// Not lab.json: that one holds admin tokens and PIDs.
		clustersJSON: filepath.Join(abs, "clusters.json"),
		bin:          filepath.Join(abs, "bin"),
	}, nil
}

func up(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	clusters := fs.String("clusters", "east,west", "comma-separated cluster names (each becomes a kubeconfig context)")
	stateDir := fs.String("state", "demo/state", "directory for lab.json, kubeconfig and cluster data")
	audit := fs.Bool("audit", false, "enable the apiserver audit log (<state>/clusters/<name>/audit.log)")
	skipCRDs := fs.Bool("skip-crds", false, "start bare clusters without the test CRDs")
	withSpire := fs.Bool("spire", false, "also start, per cluster, a SPIRE server and spire-controller-manager")
	tdSuffix := fs.String("trust-domain-suffix", "demo.test", "with --spire, cluster <name> gets trust domain <name>.<suffix>")
	withWorkloads := fs.Bool("workloads", false, "with --spire, also start a k8s_psat spire-agent and a pod workload per cluster (see ztlab mtls)")
	helm := fs.String("helm", "", "with --spire, comma-separated clusters whose SPIRE is laid out as the SPIFFE Helm chart does (the others: as the OpenShift operator does)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	helmClusters := splitNames(*helm)
	if len(helmClusters) > 0 && !*withSpire {
		return errors.New("--helm needs --spire")
	}
	if *withWorkloads && !*withSpire {
		return errors.New("--workloads needs --spire")
	}
	if *withSpire && *skipCRDs {
		return errors.New("--spire needs the CRDs (the SPIRE objects and ClusterFederatedTrustDomains): drop --skip-crds")
	}
	names := splitNames(*clusters)
	if len(names) == 0 {
		return errors.New("--clusters names no cluster")
	}
	for _, n := range helmClusters {
		if !slices.Contains(names, n) {
			return fmt.Errorf("--helm names %q, which --clusters does not", n)
		}
	}
	p, err := statePaths(*stateDir)
	if err != nil {
		return err
	}

	if st, err := harness.ReadState(p.state); err == nil {
		if healthy(ctx, st) {
			if hasSpire(st) != *withSpire {
				return fmt.Errorf("a lab is already running in %s, but %s SPIRE; stop it first (ztlab down --state %s)",
					p.dir, map[bool]string{true: "with", false: "without"}[hasSpire(st)], *stateDir)
			}
			if hasWorkloads(st) != *withWorkloads {
				return fmt.Errorf("a lab is already running in %s, but %s workloads; stop it first (ztlab down --state %s)",
					p.dir, map[bool]string{true: "with", false: "without"}[hasWorkloads(st)], *stateDir)
			}
			if running := helmOf(st); !slices.Equal(running, slices.Sorted(slices.Values(helmClusters))) {
				return fmt.Errorf("a lab is already running in %s, but with SPIRE laid out as the Helm chart does on [%s]; stop it first (ztlab down --state %s)",
					p.dir, strings.Join(running, ","), *stateDir)
			}
			fmt.Printf("a lab is already running in %s; not starting another (ztlab down --state %s stops it)\n\n", p.dir, *stateDir)
			printTable(os.Stdout, st, p.kubeconfig)
			return nil
		}
		fmt.Fprintf(os.Stderr, "ztlab: %s records a lab that is not (fully) running; stopping what is left of it\n", p.state)
		if err := harness.StopFromState(p.state); err != nil {
			return fmt.Errorf("stopping the stale lab: %w", err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}

	start := time.Now()
	lab, err := harness.Start(ctx, harness.Options{
		Names: names, Dir: p.clusters, SkipCRDs: *skipCRDs, AuditLog: *audit, Detach: true,
	})
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	if err := lab.WriteKubeconfig(p.kubeconfig); err != nil {
		_ = lab.Stop()
		return err
	}
	if err := lab.WriteState(p.state); err != nil {
		_ = lab.Stop()
		return err
	}
	fmt.Printf("started %d cluster(s) in %v\n", len(lab.Clusters), elapsed.Round(10*time.Millisecond))
	var spires []*harness.Spire
	if *withSpire {
		start := time.Now()
		exe, err := stableExecutable(p.bin)
		if err != nil {
			_ = lab.Stop()
			_ = os.Remove(p.state)
			return err
		}
		if spires, err = startSpires(ctx, lab, *tdSuffix, exe, helmClusters); err != nil {
			_ = lab.Stop()
			_ = os.Remove(p.state)
			return err
		}
		fmt.Printf("started SPIRE, spire-controller-manager and the pod exec endpoint on %d cluster(s) in %v\n",
			len(spires), time.Since(start).Round(10*time.Millisecond))
		var workloads []*harness.Workload
		if *withWorkloads {
			start := time.Now()
			if workloads, err = startWorkloads(ctx, spires); err != nil {
				stopSpires(spires)
				_ = lab.Stop()
				_ = os.Remove(p.state)
				return err
			}
			fmt.Printf("started a k8s_psat spire-agent and the pod workload apps/app (no identity until a ClusterSPIFFEID selects it) on %d cluster(s) in %v\n",
				len(workloads), time.Since(start).Round(10*time.Millisecond))
		}
		if err := lab.WriteStateWithWorkloads(p.state, spires, workloads); err != nil {
			stopWorkloads(workloads)
			stopSpires(spires)
			_ = lab.Stop()
			return err
		}
	}
	st, err := harness.ReadState(p.state)
	if err != nil {
		stopSpires(spires)
		_ = lab.Stop()
		return err
	}
	if err := writeClustersJSON(p.clustersJSON, st); err != nil {
		return err
	}
	fmt.Println()
	printTable(os.Stdout, st, p.kubeconfig)
	return nil
}

// startSpires starts a detached SPIRE server, spire-controller-manager and
// exec endpoint (exe exec-endpoint) per cluster, concurrently, laid out as
// the Helm chart does on the clusters helm names; on failure it stops all of
// them.
func startSpires(ctx context.Context, lab *harness.Lab, tdSuffix, exe string, helm []string) ([]*harness.Spire, error) {
	return harness.StartSpires(ctx, lab.Clusters, func(c *harness.Cluster) harness.SpireOptions {
		return harness.SpireOptions{
			TrustDomain: c.Name + "." + tdSuffix, ControllerManager: true, Detach: true,
			ExecEndpointCommand: []string{exe, execEndpointCommand}, Helm: slices.Contains(helm, c.Name),
		}
	})
}

// splitNames is the non-empty names of a comma-separated list.
func splitNames(list string) []string {
	var names []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	return names
}

// helmOf lists, sorted, the recorded clusters whose SPIRE is laid out as the
// Helm chart does.
func helmOf(st *harness.State) []string {
	var names []string
	for _, name := range st.Order {
		if s := st.Clusters[name].Spire; s != nil && s.Helm {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func stopSpires(spires []*harness.Spire) {
	for _, s := range spires {
		if s != nil {
			if err := s.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "ztlab:", err)
			}
		}
	}
}

func hasSpire(st *harness.State) bool {
	for _, c := range st.Clusters {
		if c.Spire != nil {
			return true
		}
	}
	return false
}

// clusterInfo is one entry of clusters.json: what a configuration of one's
// own needs to reach the cluster and federate with it. Keyed by cluster
// name, the file decodes straight into a Terraform map:
// jsondecode(file("demo/state/clusters.json")).
type clusterInfo struct {
	Kubeconfig        string `json:"kubeconfig"`
	Context           string `json:"context"`
	TrustDomain       string `json:"trust_domain,omitempty"`
	BundleEndpointURL string `json:"bundle_endpoint_url,omitempty"`
	SpireAdminSocket  string `json:"spire_admin_socket,omitempty"`
	// SpireInstall is "helm" where SPIRE is laid out as the Helm chart does,
	// "operator" where as the OpenShift operator does; empty without SPIRE.
	SpireInstall string `json:"spire_install,omitempty"`
}

func writeClustersJSON(path string, st *harness.State) error {
	out := map[string]clusterInfo{}
	for _, name := range st.Order {
		c := st.Clusters[name]
		// The shared kubeconfig, next to this file, holds every context.
		info := clusterInfo{Kubeconfig: filepath.Join(filepath.Dir(path), "kubeconfig"), Context: c.Context}
		if s := c.Spire; s != nil {
			info.TrustDomain, info.BundleEndpointURL, info.SpireAdminSocket = s.TrustDomain, s.BundleEndpointURL, s.SocketPath
			info.SpireInstall = map[bool]string{true: "helm", false: "operator"}[s.Helm]
		}
		out[name] = info
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// tfvars prints clusters.json as examples/n-cluster-mesh's clusters variable
// ({"clusters": {<name>: {config_path, config_context, bundle_endpoint_url}}},
// and spire_install = "helm" where SPIRE is laid out as the chart does: the
// operator's layout is the provider's default, so its clusters say nothing).
func tfvars(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("tfvars", flag.ContinueOnError)
	stateDir := fs.String("state", "demo/state", "directory given to ztlab up")
	if err := fs.Parse(args); err != nil {
		return err
	}
	p, err := statePaths(*stateDir)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(p.clustersJSON)
	if err != nil {
		return err
	}
	var clusters map[string]clusterInfo
	if err := json.Unmarshal(data, &clusters); err != nil {
		return fmt.Errorf("%s: %w", p.clustersJSON, err)
	}
	type entry struct {
		ConfigPath        string `json:"config_path"`
		ConfigContext     string `json:"config_context"`
		BundleEndpointURL string `json:"bundle_endpoint_url,omitempty"`
		SpireInstall      string `json:"spire_install,omitempty"`
	}
	// The example's ClusterSPIFFEIDs select the lab's workload pods by their
	// label, so that the apply gives them their federated identities.
	type workloads struct {
		PodLabels map[string]string `json:"pod_labels"`
	}
	out := struct {
		Clusters  map[string]entry `json:"clusters"`
		Workloads workloads        `json:"workloads"`
	}{Clusters: map[string]entry{}, Workloads: workloads{PodLabels: map[string]string{workloadLabel: workloadName}}}
	for name, c := range clusters {
		e := entry{ConfigPath: c.Kubeconfig, ConfigContext: c.Context, BundleEndpointURL: c.BundleEndpointURL}
		if c.SpireInstall == "helm" {
			e.SpireInstall = c.SpireInstall
		}
		out.Clusters[name] = e
	}
	data, err = json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}

func healthy(ctx context.Context, st *harness.State) bool {
	if len(st.Order) == 0 {
		return false
	}
	for _, name := range st.Order {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := st.Clusters[name].Probe(ctx)
		cancel()
		if err != nil {
			return false
		}
		// A lab from before exec endpoints has none: pod exec would fail there.
		if s := st.Clusters[name].Spire; s != nil && (s.ExecEndpoint == nil || s.Probe() != nil) {
			return false
		}
	}
	return true
}

func printTable(w io.Writer, st *harness.State, kubeconfig string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tHOST\tCONTEXT\tTRUST DOMAIN\tSPIRE LAID OUT AS\tBUNDLE ENDPOINT\tSPIRE ADMIN SOCKET")
	for _, name := range st.Order {
		c := st.Clusters[name]
		td, layout, url, sock := "-", "-", "-", "-"
		if s := c.Spire; s != nil {
			td, url, sock = s.TrustDomain, s.BundleEndpointURL, s.SocketPath
			layout = map[bool]string{true: "helm chart", false: "operator"}[s.Helm]
			if s.BundleKey != "" {
				// Which of SPIRE's plugins writes the bundle ConfigMap, by its key.
				layout += " (" + s.BundleKey + ")"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, c.Host, c.Context, td, layout, url, sock)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nexport KUBECONFIG=%s\n", kubeconfig)
}

func down(args []string) error {
	fs := flag.NewFlagSet("down", flag.ContinueOnError)
	stateDir := fs.String("state", "demo/state", "directory given to ztlab up")
	if err := fs.Parse(args); err != nil {
		return err
	}
	p, err := statePaths(*stateDir)
	if err != nil {
		return err
	}
	st, err := harness.ReadState(p.state)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Printf("no lab recorded in %s\n", p.dir)
		return nil
	}
	if err != nil {
		return err
	}
	if err := harness.StopFromState(p.state); err != nil {
		return err
	}
	for _, f := range []string{p.kubeconfig, p.clustersJSON} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	what := "cluster(s)"
	if hasSpire(st) {
		what = "cluster(s) with their SPIRE servers, spire-controller-managers and exec endpoints"
	}
	if hasWorkloads(st) {
		what = "cluster(s) with their SPIRE servers, spire-controller-managers, exec endpoints, spire-agents and workloads"
	}
	fmt.Printf("stopped %d %s: %s\n", len(st.Order), what, strings.Join(st.Order, ", "))
	return nil
}

// status prints each recorded cluster's state; exit code 1 unless all are up.
func status(ctx context.Context, args []string, w io.Writer) (int, error) {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	stateDir := fs.String("state", "demo/state", "directory given to ztlab up")
	if err := fs.Parse(args); err != nil {
		return 2, err
	}
	p, err := statePaths(*stateDir)
	if err != nil {
		return 2, err
	}
	st, err := harness.ReadState(p.state)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(w, "no lab recorded in %s\n", p.dir)
		return 1, nil
	}
	if err != nil {
		return 2, err
	}
	code := 0
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tHOST\tSTATUS\tETCD PID\tAPISERVER PID\tRSS (etcd+apiserver)\tSPIRE")
	for _, name := range st.Order {
		c := st.Clusters[name]
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := c.Probe(pctx)
		cancel()
		state := "up"
		if err != nil {
			state, code = "down: "+err.Error(), 1
		}
		etcd, api := c.RSS()
		spire := "-"
		if s := c.Spire; s != nil {
			spire = fmt.Sprintf("up (server pid %d, controller manager pid %d", s.ServerPID, s.ControllerManagerPID)
			if e := s.ExecEndpoint; e != nil {
				spire += fmt.Sprintf(", exec endpoint pid %d on port %d", e.PID, e.Port)
			}
			spire += ")"
			if err := s.Probe(); err != nil {
				spire, code = "down: "+err.Error(), 1
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d+%d MiB\t%s\n", c.Name, c.Host, state, c.EtcdPID, c.APIServerPID, etcd>>20, api>>20, spire)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nkubeconfig: %s\n", p.kubeconfig)
	return code, nil
}
