package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// The mesh-dead case deadRestarted: every cluster alive at plan, and the
// last cluster's kube-apiserver killed once the apply has written
// blipKillAfter of its objects, started again with the same command line
// blipDown later. The provider rides the refused connections out (the
// cluster answered earlier in the run); the case measures what that costs
// the apply against the alive case, and counts its errors (goal 0).
const (
	blipKillAfter = 2
	blipDown      = 3 * time.Second
)

// restartMidApply waits until c holds blipKillAfter objects whose bundle
// endpoint URL ends with suffix (the change the apply makes), kills c's
// kube-apiserver, starts it again blipDown later and returns how long it
// was down and how many of the objects had changed when it was killed.
// done ends the wait early: the apply finished before the kill point,
// reported as 0 s down.
func restartMidApply(ctx context.Context, c *harness.Cluster, suffix string, done <-chan struct{}) (time.Duration, int, error) {
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		return 0, 0, err
	}
	changed := 0
	for changed < blipKillAfter {
		select {
		case <-done:
			return 0, changed, nil
		case <-ctx.Done():
			return 0, changed, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		list, err := dyn.Resource(kube.ClusterFederatedTrustDomain.GVR()).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		changed = 0
		for _, item := range list.Items {
			url, _, _ := unstructured.NestedString(item.Object, "spec", "bundleEndpointURL")
			if strings.HasSuffix(url, suffix) {
				changed++
			}
		}
	}
	killed := time.Now()
	if err := c.StopAPIServer(); err != nil {
		return 0, changed, fmt.Errorf("killing %s's kube-apiserver: %w", c.Name, err)
	}
	time.Sleep(blipDown)
	if err := c.StartAPIServer(ctx); err != nil {
		return 0, changed, fmt.Errorf("starting %s's kube-apiserver again: %w", c.Name, err)
	}
	return time.Since(killed), changed, nil
}

// judgeBlip is judgeDead for deadRestarted, whose plan meets every cluster
// alive: its verdict is on the apply, "met" when every run exited 0 with no
// error, left no change, and really met the restart.
func judgeBlip(runs []DeadRun) deadVerdict {
	v := judgeDead(runs, deadRestarted, 0)
	if v.Verdict == "no data" {
		return v
	}
	v.Verdict = "met"
	for _, r := range runs {
		if r.Case == deadRestarted && (r.ApplyExit != 0 || r.ApplyErrors != 0 || r.Left != 0 || r.Down == 0) {
			v.Verdict = "not met"
		}
	}
	return v
}
