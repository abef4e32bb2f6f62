package harness

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestAccPostgres starts the PostgreSQL server the workspace tests keep
// their Terraform state in, and checks it runs as an unprivileged user,
// listens on 127.0.0.1 only, refuses a wrong password, and that Stop removes
// its directory.
func TestAccPostgres(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	p, err := StartPostgres(ctx, PostgresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL on 127.0.0.1:%d ready in %v", p.Port, time.Since(start).Round(time.Millisecond))
	defer func() {
		if err := p.Stop(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(p.dir); !os.IsNotExist(err) {
			t.Errorf("Stop left %s behind (%v)", p.dir, err)
		}
	}()
	got, err := p.SQL(ctx, "SELECT current_database() || ' ' || current_setting('listen_addresses')")
	if err != nil {
		t.Fatal(err)
	}
	if want := p.Database + " 127.0.0.1"; got != want {
		t.Errorf("database and listen address = %q, want %q", got, want)
	}
	if uid := procUID(t, p.proc.pid()); uid == 0 {
		t.Errorf("postgres (pid %d) runs as root", p.proc.pid())
	}
	p.SuperPassword = "wrong"
	if _, err := p.SQL(ctx, "SELECT 1"); err == nil {
		t.Error("a wrong password was accepted")
	}
}

// procUID is the user owning pid, from /proc.
func procUID(t *testing.T, pid int) uint32 {
	t.Helper()
	info, err := os.Stat("/proc/" + strconv.Itoa(pid))
	if err != nil {
		t.Fatal(err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		t.Fatalf("no owner for /proc/%d", pid)
	}
	return st.Uid
}
