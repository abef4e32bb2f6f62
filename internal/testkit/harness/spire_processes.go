package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The processes beside the SPIRE server: the exec endpoint that makes pod
// exec reach the real binary, and spire-controller-manager.

// spireExecCommands are what an exec endpoint runs: only spire-server (bin),
// against the server's admin socket.
func spireExecCommands(bin, socket string) map[string]execCommand {
	return map[string]execCommand{
		"spire-server": {bin: bin, fixArgs: withSocketPath(socket)},
	}
}

// startExec serves exec in this process (tests).
func (s *Spire) startExec(ctx context.Context) error {
	var err error
	s.exec, err = startExecEndpoint(s.Namespace, s.PodName, s.Container, spireExecCommands(s.bin, s.SocketPath), s.ExecLogPath())
	if err != nil {
		return err
	}
	s.execPort = s.exec.Port
	return s.registerNodeAndPod(ctx)
}

// execEndpointReadyTimeout bounds how long a detached exec endpoint may take
// to serve.
const execEndpointReadyTimeout = 30 * time.Second

// startExecProcess starts the exec endpoint as a detached process
// (ExecEndpointCommand + ExecEndpointMain's flags), waits until it serves on
// the port it reports, and registers the Node and Pod that lead there.
func (s *Spire) startExecProcess(ctx context.Context) error {
	portFile := filepath.Join(s.Dir, "exec-endpoint.port")
	if err := os.Remove(portFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	cmd := s.opts.ExecEndpointCommand
	args := append(slices.Clone(cmd[1:]),
		"-"+execFlagNamespace, s.Namespace, "-"+execFlagPod, s.PodName, "-"+execFlagContainer, s.Container,
		"-"+execFlagSpire, s.bin, "-"+execFlagSocket, s.SocketPath, "-"+execFlagPortFile, portFile)
	var err error
	if s.execProc, err = startProc("exec endpoint", cmd[0], args, s.ExecLogPath(), true); err != nil {
		return err
	}
	if s.execPort, err = s.waitExecProcess(ctx, portFile); err != nil {
		return err
	}
	return s.registerNodeAndPod(ctx)
}

// waitExecProcess waits until the detached endpoint has written its port and
// answers its health check there, and returns the port.
func (s *Spire) waitExecProcess(ctx context.Context, portFile string) (int, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, execEndpointReadyTimeout)
	defer cancel()
	var last string
	for {
		if s.execProc.exited() {
			return 0, s.execProc.exitError()
		}
		data, err := os.ReadFile(portFile)
		if err == nil {
			port, perr := strconv.Atoi(strings.TrimSpace(string(data)))
			if perr != nil {
				return 0, fmt.Errorf("%s: %w", portFile, perr)
			}
			if err = probeExecEndpoint(s.execProc.pid(), port); err == nil {
				return port, nil
			}
		}
		last = err.Error()
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("exec endpoint (pid %d) not serving after %v (%v; last: %s); last lines of %s:\n%s",
				s.execProc.pid(), time.Since(start).Round(time.Millisecond), ctx.Err(), last,
				s.ExecLogPath(), fileTail(s.ExecLogPath(), 25))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *Spire) startControllerManager(ctx context.Context) error {
	bin, err := Tool("spire-controller-manager")
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		ports, err := freePorts(1)
		if err != nil {
			return err
		}
		healthAddr := "127.0.0.1:" + strconv.Itoa(ports[0])
		configPath := filepath.Join(s.Dir, "controller-manager.yaml")
		if err := os.WriteFile(configPath, []byte(s.controllerManagerConfig(healthAddr)), 0o644); err != nil {
			return err
		}
		s.cm, err = startProc("spire-controller-manager", bin, []string{"-config", configPath},
			s.ControllerManagerLogPath(), s.opts.Detach, "KUBECONFIG="+s.Cluster.Kubeconfig, "ENABLE_WEBHOOKS=false")
		if err != nil {
			return err
		}
		err = s.waitControllerManager(ctx, healthAddr)
		if err == nil {
			return nil
		}
		_ = s.cm.stop(0)
		if !errors.Is(err, errAddrInUse) || attempt == startAttempts || ctx.Err() != nil {
			return err
		}
	}
}

// ControllerManagerEntryIDPrefix starts the ID of every registration entry
// spire-controller-manager creates ("scm.<uuid>").
const ControllerManagerEntryIDPrefix = "scm"

func (s *Spire) controllerManagerConfig(healthAddr string) string {
	cfg := map[string]any{
		"apiVersion":            "spire.spiffe.io/v1alpha1",
		"kind":                  "ControllerManagerConfig",
		"clusterName":           s.Cluster.Name,
		"trustDomain":           s.TrustDomain,
		"clusterDomain":         "cluster.local",
		"spireServerSocketPath": s.SocketPath,
		"className":             s.ClassName,
		// Integer nanoseconds: a duration string makes it exit. Short, so a
		// change that arrives mid-reconcile is picked up quickly.
		"gcInterval": int64(time.Second),
		"metrics":    map[string]any{"bindAddress": "0"},
		"health":     map[string]any{"healthProbeBindAddress": healthAddr},
		// ClusterSPIFFEIDs as in a real cluster (StartPodWorkload). With an
		// entry ID prefix the controller manages only the entries it created:
		// without one it deletes every entry no ClusterSPIFFEID or
		// ClusterStaticEntry declares (spireentry: shouldProcessOrDeleteEntryID),
		// including those StartWorkload makes by hand.
		"reconcile":     map[string]any{"clusterFederatedTrustDomains": true, "clusterSPIFFEIDs": true},
		"entryIDPrefix": ControllerManagerEntryIDPrefix,
		"logLevel":      "debug",
	}
	data, _ := json.MarshalIndent(cfg, "", "  ") // JSON is YAML; a map of plain values always marshals
	return string(data) + "\n"
}

// waitControllerManager waits for /readyz, then a little more: readyz turns
// ok about a second before the workers run.
func (s *Spire) waitControllerManager(ctx context.Context, healthAddr string) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, spireReadyTimeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var last string
	for {
		if s.cm.exited() {
			return s.cm.exitError()
		}
		resp, err := client.Get("http://" + healthAddr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			last = "GET /readyz: " + resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			if s.cm.exited() {
				return s.cm.exitError()
			}
			return fmt.Errorf("spire-controller-manager (pid %d) not ready at %s after %v (%v; last: %s); last lines of %s:\n%s",
				s.cm.pid(), healthAddr, time.Since(start).Round(time.Millisecond), ctx.Err(), last,
				s.ControllerManagerLogPath(), fileTail(s.ControllerManagerLogPath(), 25))
		case <-time.After(100 * time.Millisecond):
		}
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Second):
	}
	if s.cm.exited() {
		return s.cm.exitError()
	}
	return nil
}
