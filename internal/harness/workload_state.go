package harness

import (
	"context"
	"fmt"
	"path/filepath"
)

// The demo lab's agents and workloads, recorded in lab.json (SpireState) so
// that `ztlab mtls` can ask them for handshakes from another process and
// StopFromState stops them.

// SpireAgentState is a detached spire-agent (StartDetachedSpireAgent).
type SpireAgentState struct {
	Name       string `json:"name"`
	SPIFFEID   string `json:"spiffe_id"`
	SocketPath string `json:"socket_path"` // the Workload API
	SocketDir  string `json:"socket_dir"`
	Dir        string `json:"dir"`
	PID        int    `json:"pid"`
}

// WorkloadState is a detached workload (WorkloadOptions.Detach) and its
// registration entry.
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
}

// State describes the agent for tools in other processes.
func (a *SpireAgent) State() SpireAgentState {
	return SpireAgentState{Name: a.Name, SPIFFEID: a.SPIFFEID, SocketPath: a.SocketPath, SocketDir: a.sockDir, Dir: a.Dir, PID: a.PID()}
}

// State describes the workload for tools in other processes.
func (w *Workload) State() WorkloadState {
	st := WorkloadState{
		Name: w.Name, SPIFFEID: w.SPIFFEID, EntryID: w.EntryID, ParentID: w.Agent.SPIFFEID, Selectors: w.selectors,
		Addr: w.Addr, Bin: w.bin, Dir: w.Dir, AgentSocket: w.Agent.SocketPath,
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

// CheckMTLSState is CheckMTLS between recorded workloads.
func CheckMTLSState(ctx context.Context, from, to WorkloadState) (ok bool, detail string) {
	return dialMTLS(ctx, from.Bin, from.AgentSocket, to.Addr, to.SPIFFEID, nil)
}

// SetWorkloadFederatesWith is Workload.SetFederatesWith for the workload
// recorded in s: its entry federates with exactly trustDomains afterwards.
func (s SpireState) SetWorkloadFederatesWith(ctx context.Context, trustDomains ...string) error {
	w := s.Workload
	if w == nil {
		return fmt.Errorf("spire %s: no workload recorded", s.TrustDomain)
	}
	tds, err := trustDomainIDs(trustDomains)
	if err != nil {
		return fmt.Errorf("workload %s: %w", w.Name, err)
	}
	args := append([]string{"entry", "update", "-entryID", w.EntryID}, entryArgs(w.ParentID, w.SPIFFEID, w.Selectors, tds)...)
	out, err := spireCLI(ctx, s.Bin, s.SocketPath, s.TrustDomain, args...)
	if err == nil {
		_, err = entryResult(out)
	}
	if err != nil {
		return fmt.Errorf("workload %s: %w", w.Name, err)
	}
	return nil
}
