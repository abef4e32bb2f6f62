// Package statehttp is a Terraform state store for the benchmarks: the
// server side of Terraform's `http` backend (GET reads a state, POST writes
// it, DELETE removes it; no locking), in memory, on 127.0.0.1.
//
// Why the benchmarks need one: the local backend writes the whole state
// file after every resource it applies (Terraform's filesystem state
// manager persists on every write), so an apply of n objects serializes
// the state n times, a cost that grows with n squared whatever the
// provider. Teams that run a fleet keep state in a remote backend (S3,
// GCS, azurerm, Terraform Cloud), whose state manager keeps writes in
// memory and persists at most every 20 seconds. A run against this store
// measures what such a team pays; the http backend is the one of those
// that needs no cloud.
package statehttp

import (
	"io"
	"net"
	"net/http"
	"sync"
)

// Store holds one state per URL path.
type Store struct {
	mu     sync.Mutex
	states map[string][]byte
}

// ServeHTTP answers the http backend's requests.
func (s *Store) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.states == nil {
		s.states = map[string][]byte{}
	}
	switch r.Method {
	case http.MethodGet:
		state, ok := s.states[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNoContent) // no state yet
			return
		}
		_, _ = w.Write(state)
	case http.MethodPost, http.MethodPut:
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.states[r.URL.Path] = body
	case http.MethodDelete:
		delete(s.states, r.URL.Path)
	default:
		http.Error(w, "method not supported", http.StatusMethodNotAllowed)
	}
}

// Start serves a new Store on a free port of 127.0.0.1; the returned URL is
// its root (a configuration's state lives at any path below it).
func Start() (url string, stop func(), err error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: &Store{}} //nolint:gosec // loopback only, for the benchmark's lifetime
	go func() { _ = srv.Serve(lis) }()
	return "http://" + lis.Addr().String(), func() { _ = srv.Close() }, nil
}
