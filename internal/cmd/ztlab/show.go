package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
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
// state), the ClusterFederatedTrustDomains each cluster holds.
func show(ctx context.Context, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("show", flag.ContinueOnError)
	stateDir := fs.String("state", "demo/state", "directory given to ztlab up")
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
	return tw.Flush()
}
