package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// PostgresOptions configures StartPostgres.
type PostgresOptions struct {
	// Dir holds the data directory, the log and the superuser's password
	// file. Empty: a temporary directory, removed by Stop. When the test
	// runs as root, the directory is handed to the server's user, so it must
	// not be inside a directory only root may enter (t.TempDir() is such a
	// directory: give a path under os.TempDir()).
	Dir string
	// Database is created and owned by the superuser. Default "terraform".
	Database string
}

// Postgres is one PostgreSQL server (Debian's package postgresql) on a free
// 127.0.0.1 port, with no Unix socket, password (SCRAM) authentication for
// every connection, and one database. It runs as an unprivileged user:
// postgres refuses to run as root, so a root test hands the data directory to
// the package's `postgres` user (or `nobody` where that user is missing).
type Postgres struct {
	// Port is the TCP port on 127.0.0.1.
	Port int
	// Database is the database made for the test.
	Database string
	// SuperUser and SuperPassword are the server's superuser, for set-up.
	SuperUser, SuperPassword string

	binDir    string
	dir       string
	removeDir bool
	proc      *proc
	stopOnce  sync.Once
	stopErr   error
}

// PostgresBinDir finds the newest PostgreSQL server installed by Debian's
// packages: its programs live in /usr/lib/postgresql/<major>/bin, off PATH.
func PostgresBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	var found []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			found = append(found, d)
		}
	}
	if len(found) == 0 {
		return "", errors.New("PostgreSQL not found (no /usr/lib/postgresql/*/bin/initdb): install the Debian package postgresql (scripts/apt.sh does; `make test` runs it)")
	}
	major := func(d string) int {
		n, _ := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		return n
	}
	sort.Slice(found, func(i, j int) bool { return major(found[i]) > major(found[j]) })
	return found[0], nil
}

// postgresCredential is whom the server runs as: nil (ourselves) unless we
// are root, whom postgres refuses; then the package's postgres user, or
// nobody.
func postgresCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
	}
	return nil, errors.New("running as root, and neither the user postgres nor nobody exists to run the PostgreSQL server as (postgres refuses root)")
}

// StartPostgres runs initdb into a fresh data directory and starts postgres
// on a free 127.0.0.1 port, then creates opts.Database. It returns once the
// server answers a query. On failure it stops what it started and returns
// an error quoting the server's log.
func StartPostgres(ctx context.Context, opts PostgresOptions) (*Postgres, error) {
	bin, err := PostgresBinDir()
	if err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	cred, err := postgresCredential()
	if err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	p := &Postgres{binDir: bin, dir: opts.Dir, Database: opts.Database, SuperUser: "zerotrust_admin"}
	if p.Database == "" {
		p.Database = "terraform"
	}
	if p.dir == "" {
		if p.dir, err = os.MkdirTemp("", "zt-pg-"); err != nil {
			return nil, fmt.Errorf("harness: %w", err)
		}
		p.removeDir = true
	} else if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	if err := p.start(ctx, cred); err != nil {
		_ = p.Stop()
		return nil, fmt.Errorf("harness: PostgreSQL: %w", err)
	}
	return p, nil
}

func (p *Postgres) start(ctx context.Context, cred *syscall.Credential) error {
	var err error
	if p.SuperPassword, err = randomHex(16); err != nil {
		return err
	}
	pwfile := filepath.Join(p.dir, "superuser-password")
	if err := os.WriteFile(pwfile, []byte(p.SuperPassword+"\n"), 0o600); err != nil {
		return err
	}
	if cred != nil {
		if err := chownTree(p.dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("handing %s to the server's user: %w", p.dir, err)
		}
	}
	data := filepath.Join(p.dir, "data")
	if err := runLogged("initdb", filepath.Join(p.binDir, "initdb"), filepath.Join(p.dir, "initdb.log"), cred,
		"-D", data, "-U", p.SuperUser, "--pwfile="+pwfile, "-E", "UTF8", "--locale=C",
		"--auth-host=scram-sha-256", "--auth-local=reject", "--no-sync"); err != nil {
		return err
	}
	var lastErr error
	for attempt := 1; attempt <= 5; attempt++ {
		ports, err := freePorts(1)
		if err != nil {
			return err
		}
		p.Port = ports[0]
		// A test's state is thrown away with the server: no fsync, and
		// small buffers, so that it costs a few MB and no disk flushes.
		p.proc, err = startProcAs("postgres", filepath.Join(p.binDir, "postgres"), []string{
			"-D", data, "-c", "listen_addresses=127.0.0.1", "-c", "port=" + strconv.Itoa(p.Port),
			"-c", "unix_socket_directories=", "-c", "fsync=off", "-c", "synchronous_commit=off",
			"-c", "full_page_writes=off", "-c", "shared_buffers=16MB", "-c", "max_connections=200",
		}, filepath.Join(p.dir, "postgres.log"), false, nil, cred)
		if err != nil {
			return err
		}
		lastErr = p.waitReady(ctx)
		if lastErr == nil {
			_, err := p.psql(ctx, "postgres", "-c", "CREATE DATABASE "+quoteIdent(p.Database))
			return err
		}
		_ = p.proc.stop(5 * time.Second)
		if !strings.Contains(fileTail(p.proc.logPath, 25), "already in use") || ctx.Err() != nil {
			return lastErr
		}
	}
	return lastErr
}

// waitReady polls until the server answers a query as the superuser.
func (p *Postgres) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		if p.proc.exited() {
			return p.proc.exitError()
		}
		if _, err := p.psql(ctx, "postgres", "-c", "SELECT 1"); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("postgres on 127.0.0.1:%d did not answer in time; last lines of %s:\n%s",
				p.Port, p.proc.logPath, fileTail(p.proc.logPath, 25))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ConnStr is the URL of the test database without credentials, for
// Terraform's pg backend (conn_str, or PG_CONN_STR) with PGUSER and
// PGPASSWORD in the environment.
func (p *Postgres) ConnStr() string {
	return fmt.Sprintf("postgres://127.0.0.1:%d/%s?sslmode=disable", p.Port, p.Database)
}

// SQL runs statements in the test database as the superuser, with psql,
// and returns psql's unaligned, tuples-only output.
func (p *Postgres) SQL(ctx context.Context, sql string) (string, error) {
	return p.psql(ctx, p.Database, "-c", sql)
}

// SQLFile runs the psql script file in the test database as the
// superuser, with psql variables vars (:"name" and :'name' in the script).
func (p *Postgres) SQLFile(ctx context.Context, file string, vars map[string]string) (string, error) {
	args := []string{"-f", file}
	for k, v := range vars {
		args = append(args, "-v", k+"="+v)
	}
	return p.psql(ctx, p.Database, args...)
}

// SQLAs runs statements in the test database as role user.
func (p *Postgres) SQLAs(ctx context.Context, user, password, sql string) (string, error) {
	return p.psqlAs(ctx, user, password, p.Database, "-c", sql)
}

func (p *Postgres) psql(ctx context.Context, db string, args ...string) (string, error) {
	return p.psqlAs(ctx, p.SuperUser, p.SuperPassword, db, args...)
}

func (p *Postgres) psqlAs(ctx context.Context, user, password, db string, args ...string) (string, error) {
	base := []string{"-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", strconv.Itoa(p.Port), "-U", user, "-d", db}
	cmd := exec.CommandContext(ctx, filepath.Join(p.binDir, "psql"), append(base, args...)...)
	cmd.Env = append(childEnv(), "PGPASSWORD="+password, "PGCONNECT_TIMEOUT=5")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("psql %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// Stop stops the server (a fast shutdown: open sessions are ended) and
// removes its directory when StartPostgres made it.
func (p *Postgres) Stop() error {
	p.stopOnce.Do(func() {
		if p.proc != nil && !p.proc.exited() {
			_ = p.proc.cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-p.proc.done:
			case <-time.After(10 * time.Second):
			}
			p.stopErr = p.proc.stop(0)
		}
		if p.removeDir {
			if err := os.RemoveAll(p.dir); err != nil && p.stopErr == nil {
				p.stopErr = err
			}
		}
	})
	return p.stopErr
}

// quoteIdent quotes a PostgreSQL identifier.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// runLogged runs bin to completion as cred (nil: ourselves), its output in
// logPath, and fails quoting the log's tail.
func runLogged(component, bin, logPath string, cred *syscall.Credential, args ...string) error {
	cmd := exec.Command(bin, args...)
	cmd.Dir = filepath.Dir(logPath)
	cmd.Env = childEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	_ = os.WriteFile(logPath, out, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w:\n%s", component, err, tailLines(string(out), 25))
	}
	return nil
}

// chownTree hands dir and everything in it to uid:gid.
func chownTree(dir string, uid, gid int) error {
	return filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
}
