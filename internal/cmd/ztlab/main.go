// Command ztlab runs a lab of local Kubernetes API servers (etcd +
// kube-apiserver pairs on 127.0.0.1, with the test CRDs installed) that
// outlives the command, for `make demo`.
//
//	ztlab up     --clusters east,west --state demo/state [--audit] [--skip-crds]
//	ztlab status --state demo/state
//	ztlab down   --state demo/state
//
// up writes <state>/lab.json (PIDs, hosts, tokens) and <state>/kubeconfig (one
// context per cluster, named after it). If a healthy lab is already recorded
// there, up says so and exits 0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/harness"
)

const usage = `usage:
  ztlab up     [--clusters east,west] [--state DIR] [--audit] [--skip-crds]
  ztlab status [--state DIR]
  ztlab down   [--state DIR]
  ztlab show   [--state DIR]   (what each cluster holds, asked from its API server)
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

type paths struct{ dir, state, kubeconfig, clusters string }

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
	}, nil
}

func up(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	clusters := fs.String("clusters", "east,west", "comma-separated cluster names (each becomes a kubeconfig context)")
	stateDir := fs.String("state", "demo/state", "directory for lab.json, kubeconfig and cluster data")
	audit := fs.Bool("audit", false, "enable the apiserver audit log (<state>/clusters/<name>/audit.log)")
	skipCRDs := fs.Bool("skip-crds", false, "start bare clusters without the test CRDs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var names []string
	for _, n := range strings.Split(*clusters, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return errors.New("--clusters names no cluster")
	}
	p, err := statePaths(*stateDir)
	if err != nil {
		return err
	}

	if st, err := harness.ReadState(p.state); err == nil {
		if healthy(ctx, st) {
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
	st, err := harness.ReadState(p.state)
	if err != nil {
		_ = lab.Stop()
		return err
	}
	fmt.Printf("started %d cluster(s) in %v\n\n", len(lab.Clusters), elapsed.Round(10*time.Millisecond))
	printTable(os.Stdout, st, p.kubeconfig)
	return nil
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
	}
	return true
}

func printTable(w io.Writer, st *harness.State, kubeconfig string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tHOST\tCONTEXT")
	for _, name := range st.Order {
		c := st.Clusters[name]
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, c.Host, c.Context)
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
	if err := os.Remove(p.kubeconfig); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	fmt.Printf("stopped %d cluster(s): %s\n", len(st.Order), strings.Join(st.Order, ", "))
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
	fmt.Fprintln(tw, "NAME\tHOST\tSTATUS\tETCD PID\tAPISERVER PID\tRSS (etcd+apiserver)")
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d+%d MiB\n", c.Name, c.Host, state, c.EtcdPID, c.APIServerPID, etcd>>20, api>>20)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nkubeconfig: %s\n", p.kubeconfig)
	return code, nil
}
