package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/podattest"
)

// The demo lab's agents and workloads, recorded in lab.json (SpireState) so
// that `ztlab mtls` can ask them for handshakes from another process and
// StopFromState stops them.

// SpireAgentState is a detached spire-agent (SpireAgentOptions.Detach).
type SpireAgentState struct {
	Name       string `json:"name"`
	SPIFFEID   string `json:"spiffe_id"`
	SocketPath string `json:"socket_path"` // the Workload API
	SocketDir  string `json:"socket_dir"`
	Dir        string `json:"dir"`
	PID        int    `json:"pid"`
}

// WorkloadState is a detached workload (WorkloadOptions.Detach or
// PodWorkloadOptions.Detach) and its registration entry, if it has one yet.
type WorkloadState struct {
	Name      string   `json:"name"`
	SPIFFEID  string   `json:"spiffe_id"`
	EntryID   string   `json:"entry_id"`
	ParentID  string   `json:"parent_id"`
	Selectors []string `json:"selectors"`
	Addr      string   `json:"addr"`
	Bin       string   `json:"bin"`
	Dir       string   `json:"dir"`
	PID       int      `json:"pid"`
	// AgentSocket is the Workload API its dial processes attest through.
	AgentSocket string `json:"agent_socket"`
	// AddrFile is where its server writes Addr once it serves: a pod
	// workload started before its identity exists
	// (PodWorkloadOptions.ServeLater) has no Addr yet when recorded.
	AddrFile string `json:"addr_file"`
	// Pod and PodsFile, for a pod workload: its Pod, and the agent's pod
	// attestor records, where its dial processes are registered as
	// processes of that Pod.
	Pod      *WorkloadPod `json:"pod,omitempty"`
	PodsFile string       `json:"pods_file,omitempty"`
}

// State describes the agent for tools in other processes.
func (a *SpireAgent) State() SpireAgentState {
	return SpireAgentState{Name: a.Name, SPIFFEID: a.SPIFFEID, SocketPath: a.SocketPath, SocketDir: a.sockDir, Dir: a.Dir, PID: a.PID()}
}

// State describes the workload for tools in other processes.
func (w *Workload) State() WorkloadState {
	st := WorkloadState{
		Name: w.Name, SPIFFEID: w.SPIFFEID, EntryID: w.EntryID, ParentID: w.Agent.SPIFFEID, Selectors: w.selectors,
		Addr: w.Addr, Bin: w.bin, Dir: w.Dir, AgentSocket: w.Agent.SocketPath, AddrFile: w.addrFile(), Pod: w.Pod,
	}
	if w.Pod != nil {
		st.PodsFile = w.Agent.podsFile
	}
	if w.proc != nil && !w.proc.exited() {
		st.PID = w.proc.pid()
	}
	return st
}

// probeWorkload reports nil when the recorded agent and workload still run.
func (s SpireState) probeWorkload() error {
	if a := s.Agent; a != nil && !isOurProcess(a.PID, "spire-agent", a.Dir) {
		return fmt.Errorf("spire-agent %s (pid %d) is not running", a.Name, a.PID)
	}
	if w := s.Workload; w != nil && !isOurProcess(w.PID, filepath.Base(w.Bin), w.Dir) {
		return fmt.Errorf("workload %s (pid %d) is not running", w.Name, w.PID)
	}
	return nil
}

// CheckMTLSState is CheckMTLS between recorded workloads. A server not
// serving yet (no SVID: no registration entry for it) fails the pair.
func CheckMTLSState(ctx context.Context, from, to WorkloadState) (ok bool, detail string) {
	addr, detail := serverAddr(to.Addr, to.AddrFile, to.SPIFFEID)
	if addr == "" {
		return false, detail
	}
	var attest attestFunc
	if from.Pod != nil {
		record := from.Pod.record()
		attest = func(pid int) (func(), error) { return registerPodProcessFile(from.PodsFile, pid, record) }
	}
	return dialMTLS(ctx, from.Bin, from.AgentSocket, addr, to.SPIFFEID, attest)
}

// podsFileMu serializes this process's changes to recorded agents' pod
// attestor records (registerPodProcessFile).
var podsFileMu sync.Mutex

// registerPodProcessFile is SpireAgent.registerPodProcess for an agent
// recorded in a State: it adds pid to the records file the agent's pod
// attestor reads, keeping the records already there.
func registerPodProcessFile(path string, pid int, r podattest.Record) (release func(), err error) {
	update := func(change func(map[int]podattest.Record)) error {
		podsFileMu.Lock()
		defer podsFileMu.Unlock()
		records, err := podattest.ReadFile(path)
		if err != nil {
			return err
		}
		change(records)
		return podattest.WriteFile(path, records)
	}
	if err := update(func(m map[int]podattest.Record) { m[pid] = r }); err != nil {
		return nil, err
	}
	return func() { _ = update(func(m map[int]podattest.Record) { delete(m, pid) }) }, nil
}
