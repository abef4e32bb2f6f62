package acctest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

var (
	postgresOnce sync.Once
	postgresLab  *harness.Postgres
	postgresErr  error
)

// Postgres returns the test binary's PostgreSQL server (Debian's package
// postgresql), the state backend of the workspace tests: it starts on first
// use, on a free 127.0.0.1 port, and stops when the binary's tests are done.
// Roles and schemas are server-wide: tests name theirs uniquely.
func Postgres(t *testing.T) *harness.Postgres {
	t.Helper()
	postgresOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		// Its own temporary directory, not under WorkDir: a root test hands
		// it to the server's unprivileged user, who must be able to reach it.
		postgresLab, postgresErr = harness.StartPostgres(ctx, harness.PostgresOptions{})
		if postgresErr == nil {
			AtExit(func() { _ = postgresLab.Stop() })
		}
	})
	if postgresErr != nil {
		t.Fatalf("acctest: cannot start PostgreSQL: %v", postgresErr)
	}
	return postgresLab
}
