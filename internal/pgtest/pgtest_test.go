package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestFreshDatabases checks that each URL names a reachable, empty database of its own.
func TestFreshDatabases(t *testing.T) {
	ctx := context.Background()
	a, b := pgtest.URL(t), pgtest.URL(t)
	if a == b {
		t.Fatalf("two calls gave the same database %s", a)
	}
	conn, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE t (x int)"); err != nil {
		t.Fatal(err)
	}
	conn2, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close(ctx)
	var n int
	if err := conn2.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 't'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the second database sees the first one's table")
	}
}

// TestStopAndRestart: Stop shuts the throwaway server down, and the next URL starts a
// new one.
func TestStopAndRestart(t *testing.T) {
	if os.Getenv(pgtest.EnvURL) != "" {
		t.Skip("uses the server of " + pgtest.EnvURL)
	}
	ctx := context.Background()
	before := pgtest.URL(t)
	pgtest.Stop()
	if conn, err := pgx.Connect(ctx, before); err == nil {
		conn.Close(ctx)
		t.Fatal("the server still accepts connections after Stop")
	}
	after := pgtest.URL(t)
	conn, err := pgx.Connect(ctx, after)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
}

// TestPrivateRestart: a private server stopped refuses connections, and started again
// answers on the same URL with the data it had; its directory goes when the test ends.
func TestPrivateRestart(t *testing.T) {
	ctx := context.Background()
	var dir string
	t.Run("restart", func(t *testing.T) {
		p := pgtest.NewPrivate(t)
		dir = p.Dir()
		conn, err := pgx.Connect(ctx, p.URL())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, "CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)"); err != nil {
			t.Fatal(err)
		}
		p.Stop(t)
		if err := conn.Ping(ctx); err == nil {
			t.Error("a connection still answers after Stop")
		}
		conn.Close(ctx)
		if conn, err := pgx.Connect(ctx, p.URL()); err == nil {
			conn.Close(ctx)
			t.Fatal("the server accepts connections after Stop")
		}
		p.Start(t)
		conn, err = pgx.Connect(ctx, p.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var x int
		if err := conn.QueryRow(ctx, "SELECT x FROM kept").Scan(&x); err != nil || x != 7 {
			t.Fatalf("after the restart: %d, %v; want the row written before", x, err)
		}
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the private server's directory %s is left: %v", dir, err)
	}
}
