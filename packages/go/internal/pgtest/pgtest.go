// Package pgtest starts a throwaway PostgreSQL for the Go kit's tests, as tools/postgres does for
// the TypeScript kit's: a new cluster (initdb: trust authentication, superuser tenant, UTF-8, the C
// locale, fsync off) in a temporary directory, started on 127.0.0.1 at a free port (about 3 s, most
// of it initdb), killed and removed when the test ends. Debian's PostgreSQL
// (/usr/lib/postgresql/<version>/bin) unless POSTGRES_BIN_DIR names another. initdb and postgres
// refuse to run as root: as root (as CI is) it runs them as the postgres user, which Debian's
// package creates. Without PostgreSQL a test is skipped with a warning; in CI (CI=true) it fails.
package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is a running PostgreSQL.
type Server struct {
	// URL is postgres://tenant@127.0.0.1:<port>/postgres, for pgxpool.New.
	URL string
	cmd *exec.Cmd
	dir string
}

// Bin is the directory of initdb and postgres, or "" when there is none.
func Bin() string {
	if dir := os.Getenv("POSTGRES_BIN_DIR"); dir != "" {
		return dir
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(found, func(i, j int) bool { return version(found[i]) > version(found[j]) })
	if len(found) > 0 {
		return filepath.Dir(found[0])
	}
	if path, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(path)
	}
	return ""
}

func version(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

// Start starts a PostgreSQL for t (closed when t ends), skipped under -short (failing in CI
// without PostgreSQL).
func Start(t testing.TB) *Server {
	t.Helper()
	Require(t)
	s, err := Launch()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Require skips t under -short or without PostgreSQL, and fails it in CI (CI=true) without one.
func Require(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: PostgreSQL is a real process")
	}
	if Bin() == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("PostgreSQL is required in CI: apt-get install -y postgresql, or set POSTGRES_BIN_DIR")
		}
		t.Skip("PostgreSQL is not installed (apt-get install -y postgresql, or set POSTGRES_BIN_DIR)")
	}
}

// Launch starts a PostgreSQL; Close kills it and removes its directory. A package's tests may
// share one (from TestMain), each in tables of its own.
func Launch() (*Server, error) {
	bin := Bin()
	dir, err := os.MkdirTemp("", "tenant-postgres-")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Server, error) {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	credential, err := runAs(dir)
	if err != nil {
		return fail(err)
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "tenant", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: credential}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %v\n%s", err, out))
	}
	port, err := freePort()
	if err != nil {
		return fail(err)
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "shared_buffers=16MB", "-c", "max_connections=200")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: credential}
	log, _ := os.Create(filepath.Join(dir, "log"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	s := &Server{URL: fmt.Sprintf("postgres://tenant@127.0.0.1:%d/postgres", port), cmd: cmd, dir: dir}
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, s.URL)
		cancel()
		if err == nil {
			_ = conn.Close(context.Background())
			return s, nil
		}
		if time.Since(start) > 30*time.Second {
			out, _ := os.ReadFile(filepath.Join(dir, "log"))
			s.Close()
			return nil, fmt.Errorf("PostgreSQL did not answer within 30 s: %v\n%s", err, out)
		}
	}
}

// Close kills the server (its backends exit once they find the postmaster gone) and removes its directory.
func (s *Server) Close() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	_ = os.RemoveAll(s.dir)
}

// runAs is the postgres user's credential when this process is root (and dir given to it), else nil.
func runAs(dir string) (*syscall.Credential, error) {
	if os.Getuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, PostgreSQL must run as the postgres user, which is missing (apt-get install -y postgresql makes it)")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
