// Package pgtest gives tests a PostgreSQL database of their own: on the server that
// STREAMSQL_TEST_PG_URL names, or else on a throwaway cluster it starts once per test
// process from the installed binaries (initdb and postgres, found on PATH or under
// /usr/lib/postgresql/*/bin). Each call of URL creates a fresh database.
//
// When no server can be had, URL skips the test, or fails it when
// STREAMSQL_TEST_REQUIRE_PG=1 (as CI sets).
//
// The throwaway server is a child of the test process that dies with it (Linux's
// parent-death signal); Main or Stop also shut it down and remove its directory, and a
// later start removes directories that dead test processes left behind.
//
// NewPrivate starts a server of one test's own, which it may stop and start again
// (Private.Stop, Private.Start): a real restart, as the shared server cannot have.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment variables the package reads.
const (
	// EnvURL names an existing server to use instead of starting one; its user must be
	// allowed to create databases.
	EnvURL = "STREAMSQL_TEST_PG_URL"
	// EnvRequire, set to 1, turns a missing server into a test failure.
	EnvRequire = "STREAMSQL_TEST_REQUIRE_PG"
)

// dirPrefix names the throwaway clusters' directories under os.TempDir: the pid of the
// test process that owns one follows it.
const dirPrefix = "streamsql-pgtest-"

var (
	mu      sync.Mutex
	started *server // the throwaway server, once started
	admin   string  // the URL to create databases through
	failure error   // why no server could be had, once known
	seq     atomic.Int64
)

// URL returns the URL of a new, empty database for t, dropped when t ends.
func URL(t testing.TB) string {
	t.Helper()
	base, err := adminURL()
	if err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("PostgreSQL is required (%s=1) but unavailable: %v", EnvRequire, err)
		}
		t.Skipf("no PostgreSQL server: %v (install PostgreSQL or set %s)", err, EnvURL)
	}
	name := fmt.Sprintf("streamsql_test_%d_%d", os.Getpid(), seq.Add(1))
	if err := exec1(base, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("creating test database: %v", err)
	}
	t.Cleanup(func() { _ = exec1(base, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	u, err := withDatabase(base, name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Main runs a package's tests and then stops the server they started.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop shuts down the throwaway server, if one runs, and removes its directory.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	if started != nil {
		started.stop()
		started = nil
	}
	admin, failure = "", nil
}

// adminURL returns the URL of the server's maintenance database, starting the
// throwaway server on first use.
func adminURL() (string, error) {
	mu.Lock()
	defer mu.Unlock()
	if admin != "" || failure != nil {
		return admin, failure
	}
	if u := os.Getenv(EnvURL); u != "" {
		admin = u
		return admin, nil
	}
	s, err := start()
	if err != nil {
		failure = err
		return "", err
	}
	started = s
	admin = s.url
	return admin, nil
}

// exec1 runs one statement on a fresh connection to url.
func exec1(u, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// withDatabase returns u naming database name instead of its own.
func withDatabase(u, name string) (string, error) {
	if strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://") {
		p, err := url.Parse(u)
		if err != nil {
			return "", fmt.Errorf("%s: %w", EnvURL, err)
		}
		p.Path = "/" + name
		return p.String(), nil
	}
	return u + " dbname=" + name, nil // keyword/value form: a later keyword wins
}

// server is a throwaway cluster run by this process.
type server struct {
	dir    string
	url    string
	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd.Wait returned
}

// start creates a cluster in a new temporary directory and runs it on a free loopback
// port, as the user postgres when this process runs as root (initdb refuses root).
func start() (*server, error) {
	bin, err := findBinaries()
	if err != nil {
		return nil, err
	}
	removeStale()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // a free port may be taken before postgres binds it
		s, err := create(bin)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// create makes a cluster and runs it; on failure, nothing is left.
func create(bin string) (*server, error) {
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", dirPrefix, os.Getpid()))
	if err != nil {
		return nil, err
	}
	cred, err := credential(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := initdb(bin, data, cred); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s, err := run(bin, dir, data, port, cred, true)
	if err != nil {
		os.RemoveAll(dir)
	}
	return s, err
}

// initdb creates a cluster in data.
func initdb(bin, data string, cred *syscall.Credential) error {
	cmd := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// run starts postgres on the cluster on port and waits until it accepts connections.
// With remove, the directory goes once the server exited.
func run(bin, dir, data string, port int, cred *syscall.Credential, remove bool) (*server, error) {
	logPath := filepath.Join(dir, "postgres.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	rm := dir
	if !remove {
		rm = "-"
	}
	// The server runs under a shell that shuts it down (and removes the cluster) when
	// this process dies, even killed: the kernel sends the shell SIGQUIT then.
	args := []string{"-c", wrapper, "pgtest", rm, filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "shared_buffers=32MB", "-c", "max_connections=200"}
	cmd := exec.Command("/bin/sh", args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	s := &server{dir: dir, url: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port), cmd: cmd, exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() { // owned by s: stop waits for it
		defer close(s.exited)
		// The parent-death signal follows the thread that started the child: keep this
		// thread for as long as the server runs.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("starting postgres: %w", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := exec1(s.url, "SELECT 1")
		if err == nil {
			return s, nil
		}
		select {
		case <-s.exited:
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("postgres exited: %s", strings.TrimSpace(string(log)))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.kill()
			return nil, fmt.Errorf("postgres did not accept connections within a minute: %v", err)
		}
	}
}

// stop shuts the server down and removes its directory.
func (s *server) stop() {
	s.shutdown()
	os.RemoveAll(s.dir)
}

// shutdown shuts the server down: a fast shutdown, then a kill.
func (s *server) shutdown() {
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.kill()
	}
}

// kill kills the shell, the server and its backends: their process group.
func (s *server) kill() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.exited
}

// wrapper runs postgres ("$2" and on): SIGINT or SIGTERM shut it down fast, SIGQUIT
// at once; once it exited, the directory "$1" is removed (none for "-").
const wrapper = `dir=$1; shift
"$@" & pid=$!
trap 'kill -INT $pid 2>/dev/null' INT TERM
trap 'kill -QUIT $pid 2>/dev/null' QUIT
while ! wait $pid; do kill -0 $pid 2>/dev/null || break; done
[ "$dir" = - ] || rm -rf "$dir"`

// findBinaries returns the directory of initdb and postgres: initdb's on PATH (with
// symlinks resolved, as packages link it), else the newest /usr/lib/postgresql/*/bin.
func findBinaries() (string, error) {
	var dirs []string
	if p, err := exec.LookPath("initdb"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(found, func(i, j int) bool { return version(found[i]) > version(found[j]) })
	dirs = append(dirs, found...)
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errors.New("initdb and postgres not found on PATH nor in /usr/lib/postgresql/*/bin")
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExec(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// credential returns who runs the server: nil (this process's user), or the user
// postgres when this process is root, which then owns dir.
func credential(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, and initdb refuses root: %w", err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("user postgres: %w", err)
	}
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

// removeStale removes the directories of clusters whose test process is gone.
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, d := range dirs {
		rest := strings.TrimPrefix(filepath.Base(d), dirPrefix)
		pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
		if err != nil || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(d)
		}
	}
}
