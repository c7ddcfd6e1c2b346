package pgtest

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Private is a throwaway server of one test's own, from the same binaries and with the
// same setup as the shared one, that the test may stop and start again on the same
// port and data directory: a real restart, which no other test sees. It is stopped and
// its directory removed when the test ends. If the test process dies, the server dies
// with it and a later start removes the directory.
type Private struct {
	bin, dir, data string
	cred           *syscall.Credential
	port           int
	s              *server // nil while stopped
}

// NewPrivate starts a private server for t. Without the binaries it skips t, or fails
// it when EnvRequire is set; a server named by EnvURL does not stand in for it.
func NewPrivate(t testing.TB) *Private {
	t.Helper()
	bin, err := findBinaries()
	if err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("PostgreSQL is required (%s=1) but unavailable: %v", EnvRequire, err)
		}
		t.Skipf("no PostgreSQL binaries for a private server: %v", err)
	}
	removeStale()
	var s *server
	p := &Private{bin: bin}
	for attempt := 0; attempt < 3; attempt++ { // a free port may be taken before postgres binds it
		if err = p.create(); err != nil {
			continue
		}
		if p.port, err = freePort(); err != nil {
			break
		}
		if s, err = run(p.bin, p.dir, p.data, p.port, p.cred, false); err == nil {
			break
		}
		os.RemoveAll(p.dir)
	}
	if err != nil {
		t.Fatalf("starting a private PostgreSQL server: %v", err)
	}
	p.s = s
	t.Cleanup(func() {
		if p.s != nil {
			p.s.stop()
		}
		os.RemoveAll(p.dir)
	})
	return p
}

// create makes the cluster's directory and runs initdb in it.
func (p *Private) create() error {
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", dirPrefix, os.Getpid()))
	if err != nil {
		return err
	}
	if p.cred, err = credential(dir); err != nil {
		os.RemoveAll(dir)
		return err
	}
	p.dir, p.data = dir, filepath.Join(dir, "data")
	if err := initdb(p.bin, p.data, p.cred); err != nil {
		os.RemoveAll(dir)
		return err
	}
	return nil
}

// URL returns the URL of the server's maintenance database (postgres); the test
// creates what it needs there. It stays the same across restarts.
func (p *Private) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.port)
}

// Dir is the server's directory, its cluster and log.
func (p *Private) Dir() string { return p.dir }

// Stop shuts the server down (a fast shutdown: its connections are closed, new ones
// refused), keeping its data.
func (p *Private) Stop(t testing.TB) {
	t.Helper()
	if p.s == nil {
		t.Fatal("pgtest: Stop of a stopped server")
	}
	p.s.shutdown()
	p.s = nil
}

// Start starts the stopped server again, on the same port and data, and waits until
// it accepts connections.
func (p *Private) Start(t testing.TB) {
	t.Helper()
	if p.s != nil {
		t.Fatal("pgtest: Start of a running server")
	}
	s, err := run(p.bin, p.dir, p.data, p.port, p.cred, false)
	if err != nil {
		t.Fatalf("starting the private PostgreSQL server again: %v", err)
	}
	p.s = s
}
