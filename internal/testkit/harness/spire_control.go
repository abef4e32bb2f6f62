package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// Stopping and restarting a running Spire, and what tests read of it while
// it runs (process ids, state).

// StopServer stops the spire-server process (SIGTERM, then SIGKILL) and
// leaves everything else running: the bundle endpoint goes down, and the
// controller manager and exec requests fail until StartServer.
func (s *Spire) StopServer() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.server == nil || s.server.exited() {
		return nil
	}
	if err := s.server.stop(spireStopGrace); err != nil {
		return fmt.Errorf("spire %s: %w", s.TrustDomain, err)
	}
	return nil
}

// StartServer starts the spire-server process again with the same
// configuration, ports, data and keys, and waits until it is ready.
func (s *Spire) StartServer(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.server != nil && !s.server.exited() {
		return fmt.Errorf("spire %s: spire-server (pid %d) is already running", s.TrustDomain, s.server.pid())
	}
	var err error
	for attempt := 1; ; attempt++ {
		err = s.startServer(ctx)
		if err == nil {
			return nil
		}
		_ = s.server.stop(0)
		// The ports were ours a moment ago; one may linger briefly.
		if !errors.Is(err, errAddrInUse) || attempt == 5 || ctx.Err() != nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("spire %s: restarting: %w", s.TrustDomain, err)
}

// ServerPID is the pid of the running spire-server process, or 0.
func (s *Spire) ServerPID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.server == nil || s.server.exited() {
		return 0
	}
	return s.server.pid()
}

// ControllerManagerPID is the pid of the running spire-controller-manager, or 0.
func (s *Spire) ControllerManagerPID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cm == nil || s.cm.exited() {
		return 0
	}
	return s.cm.pid()
}

// State describes the server for tools in other processes (see
// Lab.WriteState and StopFromState).
func (s *Spire) State() SpireState {
	st := SpireState{
		TrustDomain: s.TrustDomain, BundleEndpointURL: s.BundleEndpointURL, EndpointSPIFFEID: s.EndpointSPIFFEID,
		Namespace: s.Namespace, BundleConfigMap: s.BundleConfigMap, BundleNamespace: s.BundleNamespace, BundleKey: s.BundleKey, Helm: s.opts.Helm,
		SocketPath: s.SocketPath, SocketDir: s.sockDir, Dir: s.Dir, Bin: s.bin,
		ServerPID: s.ServerPID(), ControllerManagerPID: s.ControllerManagerPID(),
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.execProc != nil && !s.execProc.exited() {
		st.ExecEndpoint = &ExecEndpointState{
			PID: s.execProc.pid(), Port: s.execPort, Bin: s.opts.ExecEndpointCommand[0], LogPath: s.ExecLogPath(),
		}
	}
	return st
}

// Stop stops the controller manager, the exec endpoint and the server, and
// removes the socket directory (and Dir when it is temporary). Objects in
// the cluster stay. Safe to call more than once.
func (s *Spire) Stop() error {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		var errs []error
		if s.cm != nil {
			errs = append(errs, s.cm.stop(spireStopGrace))
		}
		if s.exec != nil {
			errs = append(errs, s.exec.Stop())
		}
		if s.execProc != nil {
			errs = append(errs, s.execProc.stop(spireStopGrace))
		}
		if s.server != nil {
			errs = append(errs, s.server.stop(spireStopGrace))
		}
		if s.sockDir != "" {
			errs = append(errs, os.RemoveAll(s.sockDir))
		}
		s.stopErr = errors.Join(errs...)
		if s.stopErr == nil && s.removeDir {
			_ = os.RemoveAll(s.Dir)
		}
		if s.stopErr != nil {
			s.stopErr = fmt.Errorf("spire %s: stopping: %w", s.TrustDomain, s.stopErr)
		}
	})
	return s.stopErr
}
