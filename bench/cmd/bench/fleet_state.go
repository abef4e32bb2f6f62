package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// The fleet's state backend (BENCH_FLEET_STATE). "pg", the default, is
// Terraform's pg backend on a real PostgreSQL server the bench starts, as a
// team running tens of clusters keeps its state; "local" is the state file
// the example gets as shipped. The choice weighs at 25 clusters: the local
// backend writes and fsyncs the whole state file after every object it
// applies (statemgr.Filesystem.WriteState persists), so an apply of n
// objects marshals the state about n times and costs Terraform CPU in n
// times the state's size; a remote backend keeps the state in memory and
// persists it every 20 s and at the end.
const (
	fleetStatePG    = "pg"
	fleetStateLocal = "local"
)

// fleetReport is the report's name for a state backend: bench/FLEET.md for
// the default, FLEET-local.md for the state file, so one run does not
// overwrite the other's figures.
func fleetReport(state string) string {
	if state == fleetStatePG {
		return "FLEET"
	}
	return "FLEET-" + state
}

// fleetState is the backend a fleet run keeps its rows' state in.
// A nil pg is the local state file.
type fleetState struct {
	pg *harness.Postgres
}

// startFleetState starts what the backend needs: for pg, one server the
// rows share, each row in a schema of its own.
func startFleetState(ctx context.Context, kind string) (*fleetState, error) {
	switch kind {
	case fleetStateLocal:
		return &fleetState{}, nil
	case fleetStatePG:
	default:
		return nil, fmt.Errorf("BENCH_FLEET_STATE: unknown state backend %q (pg, local)", kind)
	}
	// No Dir: the harness makes a data directory the server's user may
	// reach, and Stop removes it.
	pg, err := harness.StartPostgres(ctx, harness.PostgresOptions{Database: "fleet"})
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL for the pg state backend (make apt installs it): %w", err)
	}
	return &fleetState{pg: pg}, nil
}

func (s *fleetState) stop() {
	if s.pg == nil {
		return
	}
	if err := s.pg.Stop(); err != nil {
		logf("fleet: stopping PostgreSQL: %v", err)
	}
}

// configure writes the backend block beside the example's main.tf, as a
// user adds one, and the environment the pg backend reads its connection
// from: the schema is the row's own, which the backend creates.
func (s *fleetState) configure(env *tfEnv, dir, schema string) error {
	if s.pg == nil {
		return nil
	}
	backend := fmt.Sprintf("terraform {\n  backend \"pg\" {\n    schema_name = %q\n  }\n}\n", schema)
	if err := os.WriteFile(filepath.Join(dir, "backend.tf"), []byte(backend), 0o644); err != nil {
		return err
	}
	env.dirEnv.Store(dir, []string{"PG_CONN_STR=" + s.pg.ConnStr(), "PGUSER=" + s.pg.SuperUser, "PGPASSWORD=" + s.pg.SuperPassword})
	return nil
}
