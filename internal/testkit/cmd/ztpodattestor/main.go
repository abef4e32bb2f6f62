// Command ztpodattestor is an external SPIRE agent WorkloadAttestor plugin
// that stands in for the kubelet in the test harness (harness.StartPodWorkload).
//
// SPIRE's built-in `k8s` workload attestor finds a process's pod through its
// cgroups (container ID -> pod UID) and asks the kubelet's /pods endpoint for
// the pod. Harness clusters have neither: no kubelet runs, and workloads are
// plain processes of this machine without container cgroups. The harness
// therefore records, for each process it starts "in" a pod, what the kubelet
// and the cgroups would have told the attestor, in a JSON file:
//
//	{"<pid>": {"namespace": ..., "pod_name": ..., "pod_uid": ..., "service_account": ...,
//	           "node_name": ..., "labels": {...}, "container_name": ..., "container_image": ...}}
//
// and this plugin answers Attest for such a PID with the selector values the
// built-in attestor derives from the same pod (sa:, ns:, node-name:, pod-uid:,
// pod-name:, pod-label:, pod-image:, container-name:, container-image: ...).
// The agent prefixes each with the plugin's configured name, so configured as
//
//	WorkloadAttestor "k8s" { plugin_cmd = "/path/ztpodattestor" plugin_data { pods_file = "/path/pods.json" } }
//
// the selectors are of type `k8s`, exactly what spire-controller-manager
// writes into the entries it renders from ClusterSPIFFEIDs. SPIRE loads a
// plugin with plugin_cmd as external before it looks at built-in names
// (pkg/common/catalog: loadPlugin), so the external plugin may take the
// built-in's name.
//
// A PID that is not in the file gets no selectors, as the built-in answers
// for a process that is not in a pod container. The file is read on every
// Attest, so the harness adds and removes processes while the agent runs.
package main

import (
	"context"
	"sync"

	"github.com/hashicorp/hcl"
	"github.com/spiffe/spire-plugin-sdk/pluginmain"
	workloadattestorv1 "github.com/spiffe/spire-plugin-sdk/proto/spire/plugin/agent/workloadattestor/v1"
	configv1 "github.com/spiffe/spire-plugin-sdk/proto/spire/service/common/config/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/podattest"
)

func main() {
	p := new(plugin)
	pluginmain.Serve(
		workloadattestorv1.WorkloadAttestorPluginServer(p),
		configv1.ConfigServiceServer(p),
	)
}

// config is the plugin_data block.
type config struct {
	// PodsFile is the JSON file mapping PIDs to pods (see the package comment).
	PodsFile string `hcl:"pods_file"`
}

type plugin struct {
	workloadattestorv1.UnimplementedWorkloadAttestorServer
	configv1.UnimplementedConfigServer

	mu       sync.RWMutex
	podsFile string
}

func parseConfig(text string) (config, error) {
	var c config
	if err := hcl.Decode(&c, text); err != nil {
		return c, status.Errorf(codes.InvalidArgument, "plugin_data: %v", err)
	}
	if c.PodsFile == "" {
		return c, status.Error(codes.InvalidArgument, "plugin_data: pods_file is required")
	}
	return c, nil
}

func (p *plugin) Configure(_ context.Context, req *configv1.ConfigureRequest) (*configv1.ConfigureResponse, error) {
	c, err := parseConfig(req.GetHclConfiguration())
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.podsFile = c.PodsFile
	p.mu.Unlock()
	return &configv1.ConfigureResponse{}, nil
}

func (p *plugin) Validate(_ context.Context, req *configv1.ValidateRequest) (*configv1.ValidateResponse, error) {
	_, err := parseConfig(req.GetHclConfiguration())
	resp := &configv1.ValidateResponse{Valid: err == nil}
	if err != nil {
		resp.Notes = []string{err.Error()}
	}
	return resp, nil
}

func (p *plugin) Attest(_ context.Context, req *workloadattestorv1.AttestRequest) (*workloadattestorv1.AttestResponse, error) {
	p.mu.RLock()
	file := p.podsFile
	p.mu.RUnlock()
	if file == "" {
		return nil, status.Error(codes.FailedPrecondition, "not configured")
	}
	pods, err := podattest.ReadFile(file)
	if err != nil {
		// The built-in fails the attestation when it cannot reach the
		// kubelet, rather than calling the process a non-pod one.
		return nil, status.Errorf(codes.Internal, "reading %s: %v", file, err)
	}
	pod, ok := pods[int(req.GetPid())]
	if !ok {
		return &workloadattestorv1.AttestResponse{}, nil
	}
	return &workloadattestorv1.AttestResponse{SelectorValues: podattest.SelectorValues(pod)}, nil
}
