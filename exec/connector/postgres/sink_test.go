package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/internal/pgtest"
	"github.com/streamsql/streamsql/planner"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fixture is a fresh database, a connection to inspect it, and a checked allocator.
type fixture struct {
	t        *testing.T
	url      string
	conn     *pgx.Conn
	mem      *memory.CheckedAllocator
	stateDir string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, url: pgtest.URL(t), mem: memory.NewCheckedAllocator(memory.NewGoAllocator()), stateDir: t.TempDir()}
	conn, err := pgx.Connect(context.Background(), f.url)
	if err != nil {
		t.Fatal(err)
	}
	f.conn = conn
	t.Cleanup(func() {
		conn.Close(context.Background())
		f.mem.AssertSize(t, 0)
	})
	return f
}

func (f *fixture) exec(sql string) {
	f.t.Helper()
	if _, err := f.conn.Exec(context.Background(), sql); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
}

// rows returns the rows of query, each as its columns' text joined by '|', sorted.
func (f *fixture) rows(query string) []string {
	f.t.Helper()
	rs, err := f.conn.Query(context.Background(), query)
	if err != nil {
		f.t.Fatalf("%s: %v", query, err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		vals, err := rs.Values()
		if err != nil {
			f.t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				parts[i] = "null"
			} else {
				parts[i] = fmt.Sprint(v)
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rs.Err(); err != nil {
		f.t.Fatalf("%s: %v", query, err)
	}
	slices.Sort(out)
	return out
}

func (f *fixture) expect(query string, want ...string) {
	f.t.Helper()
	got := f.rows(query)
	if !slices.Equal(got, want) {
		f.t.Errorf("%s:\n got %q\nwant %q", query, got, want)
	}
}

var kvSchema = planner.Schema{{Name: "k", Type: planner.TypeBigInt}, {Name: "v", Type: planner.TypeString}}

// table declares a sink table of columns kvSchema (or schema) writing to target.
func (f *fixture) table(target string, pk []string, opts ...string) *planner.Table {
	t := &planner.Table{Name: "pg_sink", PrimaryKey: pk, Options: map[string]string{
		"connector": "postgres", "url": f.url, "table-name": target,
	}}
	for _, c := range kvSchema {
		t.Columns = append(t.Columns, planner.TableColumn{Name: c.Name, Type: c.Type})
	}
	for i := 0; i+1 < len(opts); i += 2 {
		t.Options[opts[i]] = opts[i+1]
	}
	return t
}

// open opens the sink of t; id names the sink task (its spool and commit record).
func (f *fixture) open(t *planner.Table, checkpointed bool, id string) *sink {
	f.t.Helper()
	s, err := f.tryOpen(t, checkpointed, id)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { s.Close() })
	return s.(*sink)
}

func (f *fixture) tryOpen(t *planner.Table, checkpointed bool, id string) (connector.Sink, error) {
	spec := connector.SinkSpec{Table: t, Schema: t.PhysicalSchema(), Mem: f.mem, ID: id, Checkpointed: checkpointed}
	if checkpointed {
		spec.StateDir = f.stateDir
	}
	return Sink.Open(context.Background(), spec)
}

// batch builds rows of kvSchema from JSON objects, with the given kinds (nil: inserts).
func (f *fixture) batch(schema planner.Schema, rows string, kinds ...exec.RowKind) exec.Batch {
	f.t.Helper()
	rec, _, err := array.RecordFromJSON(f.mem, exec.ArrowSchema(schema), strings.NewReader(rows), array.WithUseNumber())
	if err != nil {
		f.t.Fatal(err)
	}
	return exec.Batch{Rec: rec, Kinds: kinds}
}

// process hands the sink a batch, which it releases afterwards.
func (f *fixture) process(s *sink, rows string, kinds ...exec.RowKind) error {
	b := f.batch(kvSchema, rows, kinds...)
	defer b.Release()
	return s.Process(context.Background(), 0, b)
}

func (f *fixture) mustProcess(s *sink, rows string, kinds ...exec.RowKind) {
	f.t.Helper()
	if err := f.process(s, rows, kinds...); err != nil {
		f.t.Fatal(err)
	}
}

var ctx = context.Background()

// TestUpsertSemantics: with a primary key, +I and +U upsert, -D deletes, -U is
// ignored, and the last change of a key wins, within a flush and across flushes.
func TestUpsertSemantics(t *testing.T) {
	for _, maxRows := range []string{"1", "1000"} {
		t.Run("max-rows "+maxRows, func(t *testing.T) {
			f := newFixture(t)
			f.exec("CREATE TABLE target (k bigint PRIMARY KEY, v text)")
			f.exec("INSERT INTO target VALUES (9, 'old')")
			s := f.open(f.table("target", []string{"k"}, "sink.buffer-flush.max-rows", maxRows), false, "")
			f.mustProcess(s, `[{"k":1,"v":"a"},{"k":2,"v":"b"},{"k":3,"v":"c"},{"k":9,"v":"new"}]`)
			f.mustProcess(s, `[{"k":1,"v":"a"},{"k":1,"v":"a2"},{"k":2,"v":"b"},{"k":3,"v":"c"},{"k":4,"v":"d"},{"k":4,"v":"d"}]`,
				exec.UpdateBefore, exec.UpdateAfter, exec.UpdateBefore, exec.Delete, exec.Insert, exec.Delete)
			f.mustProcess(s, `[{"k":3,"v":"c3"},{"k":1,"v":"stale"}]`, exec.Insert, exec.UpdateBefore)
			if err := s.Finish(ctx); err != nil {
				t.Fatal(err)
			}
			f.expect("SELECT k, v FROM target", "1|a2", "2|b", "3|c3", "9|new")
		})
	}
}

// TestAppendMode: without a primary key every insert is appended, duplicates too, and
// an update fails the job with a message that says why.
func TestAppendMode(t *testing.T) {
	f := newFixture(t)
	f.exec("CREATE TABLE log (k bigint, v text)")
	tbl := f.table("log", nil)
	tbl.Columns[1].Name = "V" // a plain name folds to lower case, as in Flink's dialect
	s := f.open(tbl, false, "")
	f.mustProcess(s, `[{"k":1,"v":"a"},{"k":1,"v":"a"},{"k":2,"v":null}]`)
	if err := s.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	f.expect("SELECT k, v FROM log", "1|a", "1|a", "2|null")

	s2 := f.open(f.table("log", nil), false, "")
	err := f.process(s2, `[{"k":1,"v":"a"},{"k":1,"v":"b"}]`, exec.UpdateBefore, exec.UpdateAfter)
	if !errors.Is(err, connector.ErrNotAppendOnly) || !strings.Contains(err.Error(), "PRIMARY KEY") || !strings.Contains(err.Error(), "pg_sink") {
		t.Errorf("update without a key: got %v", err)
	}
	if err := s2.Finish(ctx); err == nil {
		t.Errorf("a failed sink finished")
	}
}

// TestFlushByMaxRows: rows wait until max-rows of them are buffered.
func TestFlushByMaxRows(t *testing.T) {
	f := newFixture(t)
	f.exec("CREATE TABLE target (k bigint PRIMARY KEY, v text)")
	s := f.open(f.table("target", []string{"k"}, "sink.buffer-flush.max-rows", "3", "sink.buffer-flush.interval", "1 h"), false, "")
	f.mustProcess(s, `[{"k":1,"v":"a"},{"k":2,"v":"b"}]`)
	f.mustProcess(s, `[{"k":2,"v":"b2"}]`) // folds into key 2: still two rows
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	f.expect("SELECT k, v FROM target")
	f.mustProcess(s, `[{"k":3,"v":"c"}]`)
	f.expect("SELECT k, v FROM target", "1|a", "2|b2", "3|c")
}

// TestFlushByInterval: buffered rows are written once the interval passed, by the
// next Process or Flush, and not before.
func TestFlushByInterval(t *testing.T) {
	f := newFixture(t)
	f.exec("CREATE TABLE target (k bigint PRIMARY KEY, v text)")
	s := f.open(f.table("target", []string{"k"}, "sink.buffer-flush.max-rows", "0", "sink.buffer-flush.interval", "300 ms"), false, "")
	f.mustProcess(s, `[{"k":1,"v":"a"}]`)
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	f.expect("SELECT k, v FROM target")
	time.Sleep(350 * time.Millisecond)
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	f.expect("SELECT k, v FROM target", "1|a")
	f.mustProcess(s, `[{"k":2,"v":"b"}]`)
	f.expect("SELECT k, v FROM target", "1|a")
	time.Sleep(350 * time.Millisecond)
	f.mustProcess(s, `[{"k":3,"v":"c"}]`)
	f.expect("SELECT k, v FROM target", "1|a", "2|b", "3|c")
	// A barrier writes at once.
	f.mustProcess(s, `[{"k":4,"v":"d"}]`)
	if _, err := s.Snapshot(ctx, 1); err != nil {
		t.Fatal(err)
	}
	f.expect("SELECT k, v FROM target", "1|a", "2|b", "3|c", "4|d")
}

// TestJDBCURL: Flink's jdbc:postgresql:// url is translated, its driver-only
// parameters dropped, and a sink connects through it.
func TestJDBCURL(t *testing.T) {
	for in, want := range map[string]string{
		"jdbc:postgresql://db:5433/shop?user=u&password=p&reWriteBatchedInserts=true": "postgresql://db:5433/shop?password=p&user=u",
		"jdbc:postgresql://db/shop?ssl=true&currentSchema=s":                          "postgresql://db/shop?search_path=s&sslmode=require",
		"jdbc:postgresql:shop":                     "postgresql://localhost/shop",
		"postgres://u@h/db?sslmode=disable":        "postgres://u@h/db?sslmode=disable",
		"postgresql://h:1/db?application_name=x":   "postgresql://h:1/db?application_name=x",
		"jdbc:postgresql://h/db?ApplicationName=a": "postgresql://h/db?application_name=a",
	} {
		got, err := translateURL(in)
		if err != nil || got != want {
			t.Errorf("translateURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"jdbc:mysql://h/db", "http://h/db", ""} {
		if _, err := translateURL(bad); err == nil {
			t.Errorf("translateURL(%q) accepted", bad)
		}
	}

	f := newFixture(t)
	f.exec("CREATE TABLE target (k bigint PRIMARY KEY, v text)")
	u, err := url.Parse(f.url)
	if err != nil {
		t.Fatal(err)
	}
	jdbc := fmt.Sprintf("jdbc:postgresql://%s%s?user=%s&prepareThreshold=0&sslmode=disable", u.Host, u.Path, u.User.Username())
	tbl := f.table("target", []string{"k"}, "url", jdbc, "driver", "org.postgresql.Driver", "sink.parallelism", "1", "sink.max-retries", "2")
	tbl.Options["connector"] = "jdbc"
	s := f.open(tbl, false, "")
	f.mustProcess(s, `[{"k":1,"v":"a"}]`)
	if err := s.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	f.expect("SELECT k, v FROM target", "1|a")
}

// TestOptionErrors: bad options and an unreachable server or missing table fail Open
// with one sentence that names the table and the problem.
func TestOptionErrors(t *testing.T) {
	f := newFixture(t)
	f.exec("CREATE TABLE target (k bigint PRIMARY KEY, v text)")
	cases := []struct {
		opts []string
		want string
	}{
		{[]string{"url", ""}, "option 'url' is required"},
		{[]string{"table-name", " "}, "option 'table-name' is required"},
		{[]string{"sink.delivery-guarantee", "twice"}, "'sink.delivery-guarantee' must be 'none', 'at-least-once' or 'exactly-once'"},
		{[]string{"sink.buffer-flush.max-rows", "-1"}, "'sink.buffer-flush.max-rows' must be an integer"},
		{[]string{"sink.buffer-flush.interval", "soon"}, "option 'sink.buffer-flush.interval'"},
		{[]string{"scan.fetch-size", "10"}, "unsupported option 'scan.fetch-size'"},
		{[]string{"url", "mysql://h/db"}, "expected a postgres://"},
		{[]string{"table-name", "missing"}, "PostgreSQL table missing does not exist"},
		{[]string{"url", "postgres://postgres@127.0.0.1:1/x?connect_timeout=2"}, "cannot connect to PostgreSQL at 127.0.0.1:1: failed to connect to `user=postgres database=x`: 127.0.0.1:1 (127.0.0.1): dial error"},
	}
	for _, c := range cases {
		tbl := f.table("target", []string{"k"}, c.opts...)
		s, err := f.tryOpen(tbl, false, "")
		if err == nil {
			s.Close()
			t.Errorf("%v: opened", c.opts)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "table pg_sink: ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: got %q, want it to contain %q", c.opts, err, c.want)
		}
	}
	f.exec("CREATE TABLE target_int (k bigint PRIMARY KEY, v integer)")
	f.exec("CREATE TABLE nokey (k bigint, v text)")
	f.exec("CREATE TABLE other (k bigint PRIMARY KEY, w text)")
	for target, want := range map[string]string{
		"target_int": `PostgreSQL table target_int does not fit the sink's rows: column "v" is of type integer but expression is of type text`,
		"nokey":      "PostgreSQL table nokey does not fit the sink's rows: there is no unique or exclusion constraint matching the ON CONFLICT specification",
		"other":      `PostgreSQL table other does not fit the sink's rows: column "v" of relation "other" does not exist`,
	} {
		s, err := f.tryOpen(f.table(target, []string{"k"}), false, "")
		if err == nil {
			s.Close()
			t.Errorf("%s: opened", target)
		} else if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %q, want it to contain %q", target, err, want)
		}
	}
	tbl := f.table("target", []string{"nope"})
	if _, err := f.tryOpen(tbl, false, ""); err == nil || !strings.Contains(err.Error(), "primary key column nope") {
		t.Errorf("bad key: %v", err)
	}
}

// TestBadRowMessage: a row the table rejects fails the job with one message naming
// the sink, the row and the database's error; exactly-once commits none of its epoch.
func TestBadRowMessage(t *testing.T) {
	for _, exactly := range []bool{false, true} {
		t.Run(fmt.Sprintf("exactly-once %v", exactly), func(t *testing.T) {
			f := newFixture(t)
			f.exec("CREATE TABLE target (k bigint PRIMARY KEY, v text NOT NULL)")
			g := "at-least-once"
			if exactly {
				g = "exactly-once"
			}
			s := f.open(f.table("target", []string{"k"}, "sink.delivery-guarantee", g), true, "task-0")
			f.mustProcess(s, `[{"k":1,"v":"a"},{"k":2,"v":null},{"k":3,"v":"c"}]`)
			var err error
			if exactly {
				if _, err = s.Snapshot(ctx, 1); err != nil {
					t.Fatal(err)
				}
				err = s.CheckpointComplete(ctx, 1)
			} else {
				_, err = s.Snapshot(ctx, 1)
			}
			if err == nil {
				t.Fatal("a NOT NULL violation was accepted")
			}
			msg := err.Error()
			for _, want := range []string{"table pg_sink:", "target", "k=2, v=null", `null value in column "v"`, "23502"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			if strings.Count(msg, "\n") > 0 {
				t.Errorf("message spans lines: %q", msg)
			}
			if exactly {
				f.expect("SELECT k, v FROM target") // nothing of the failed epoch
				f.expect("SELECT checkpoint_id FROM streamsql_commits", "0")
			}
		})
	}
}

// TestOutOfRangeRow: a value the column's type cannot hold names its row too.
func TestOutOfRangeRow(t *testing.T) {
	f := newFixture(t)
	f.exec("CREATE TABLE small (k int PRIMARY KEY, v text)")
	s := f.open(f.table("small", []string{"k"}), false, "")
	f.mustProcess(s, `[{"k":1,"v":"a"},{"k":9999999999,"v":"b"}]`)
	err := s.Finish(ctx)
	if err == nil {
		t.Fatal("an out-of-range key was accepted")
	}
	var re *RowError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "rejected row +I(k=9999999999, v=\"b\"): integer out of range") {
		t.Errorf("got %v", err)
	}
	f.expect("SELECT k, v FROM small") // the flush failed as a whole
}

// TestExactlyOnceVisibility: rows become visible only when their checkpoint completes,
// each epoch at once, and a completion covers the earlier epochs too.
func TestExactlyOnceVisibility(t *testing.T) {
	f := newFixture(t)
	f.exec("CREATE TABLE log (k bigint, v text)")
	s := f.open(f.table("log", nil, "sink.delivery-guarantee", "exactly-once", "sink.buffer-flush.max-rows", "1"), true, "task-0")
	f.mustProcess(s, `[{"k":1,"v":"a"},{"k":2,"v":"b"}]`)
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	f.expect("SELECT k, v FROM log")
	if _, err := s.Snapshot(ctx, 1); err != nil {
		t.Fatal(err)
	}
	f.mustProcess(s, `[{"k":3,"v":"c"}]`)
	if _, err := s.Snapshot(ctx, 2); err != nil {
		t.Fatal(err)
	}
	f.mustProcess(s, `[{"k":4,"v":"d"}]`)
	f.expect("SELECT k, v FROM log")
	if err := s.CheckpointComplete(ctx, 1); err != nil {
		t.Fatal(err)
	}
	f.expect("SELECT k, v FROM log", "1|a", "2|b")
	st, err := s.Snapshot(ctx, 4) // checkpoint 3 never reached this task
	if err != nil {
		t.Fatal(err)
	}
	if string(st) != `{"epochs":[2,4]}` {
		t.Errorf("state %s", st)
	}
	if err := s.CheckpointComplete(ctx, 4); err != nil {
		t.Fatal(err)
	}
	f.expect("SELECT k, v FROM log", "1|a", "2|b", "3|c", "4|d")
	f.mustProcess(s, `[{"k":5,"v":"e"}]`)
	if err := s.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	f.expect("SELECT k, v FROM log", "1|a", "2|b", "3|c", "4|d")
	if _, err := s.Snapshot(ctx, 5); err != nil { // the final checkpoint
		t.Fatal(err)
	}
	if err := s.CheckpointComplete(ctx, 5); err != nil {
		t.Fatal(err)
	}
	f.expect("SELECT k, v FROM log", "1|a", "2|b", "3|c", "4|d", "5|e")
	f.expect("SELECT sink_id, checkpoint_id FROM streamsql_commits", "task-0|5")
	if files := spoolFiles(t, s); len(files) != 0 {
		t.Errorf("spool files left: %v", files)
	}
}

func spoolFiles(t *testing.T, s *sink) []string {
	entries, err := os.ReadDir(s.spool.dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestRestoreCommitsOnce: a restored sink commits the epochs its checkpoint lists,
// whose notice a crash lost, exactly once: restoring twice, or after the commit itself
// went through before the crash, adds nothing.
func TestRestoreCommitsOnce(t *testing.T) {
	f := newFixture(t)
	f.exec("CREATE TABLE log (k bigint, v text)")
	tbl := f.table("log", nil, "sink.delivery-guarantee", "exactly-once")
	s := f.open(tbl, true, "task-0")
	f.mustProcess(s, `[{"k":1,"v":"a"},{"k":2,"v":"b"}]`)
	state1, err := s.Snapshot(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	f.mustProcess(s, `[{"k":3,"v":"c"}]`)
	if _, err := s.Snapshot(ctx, 2); err != nil { // checkpoint 2 never completes
		t.Fatal(err)
	}
	f.mustProcess(s, `[{"k":4,"v":"d"}]`)
	if err := s.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close() // crash: checkpoint 1 completed, its notice lost
	f.expect("SELECT k, v FROM log")

	for attempt := 0; attempt < 2; attempt++ { // the second: a crash right after restoring
		r := f.open(tbl, true, "task-0")
		if err := r.Restore(state1); err != nil {
			t.Fatal(err)
		}
		f.expect("SELECT k, v FROM log", "1|a", "2|b")
		if files := spoolFiles(t, r); len(files) != 0 {
			t.Errorf("attempt %d: spool files left after restore: %v", attempt, files)
		}
		r.Close()
	}

	// A commit that went through, with the crash before the spool file was removed.
	r := f.open(tbl, true, "task-0")
	if err := r.Restore(state1); err != nil {
		t.Fatal(err)
	}
	f.mustProcess(r, `[{"k":5,"v":"e"}]`)
	state2, err := r.Snapshot(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(r.spool.dir, epochName(2))
	saved, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CheckpointComplete(ctx, 2); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if err := os.WriteFile(path, saved, 0o644); err != nil {
		t.Fatal(err)
	}
	r2 := f.open(tbl, true, "task-0")
	if err := r2.Restore(state2); err != nil {
		t.Fatal(err)
	}
	f.expect("SELECT k, v FROM log", "1|a", "2|b", "5|e")
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the committed epoch's spool file was not removed: %v", err)
	}
}

// TestFreshStartRemovesLeftovers: a sink opened without Restore removes the spool
// files of an earlier attempt before its first write, and commits only its own rows.
func TestFreshStartRemovesLeftovers(t *testing.T) {
	f := newFixture(t)
	f.exec("CREATE TABLE log (k bigint, v text)")
	tbl := f.table("log", nil, "sink.delivery-guarantee", "exactly-once")
	s := f.open(tbl, true, "task-0")
	f.mustProcess(s, `[{"k":1,"v":"a"}]`)
	if _, err := s.Snapshot(ctx, 1); err != nil {
		t.Fatal(err)
	}
	f.mustProcess(s, `[{"k":2,"v":"b"}]`)
	if err := s.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if files := spoolFiles(t, s); !slices.Equal(files, []string{"epoch-1.rows", "open.rows"}) {
		t.Fatalf("spool files before restart: %v", files)
	}

	r := f.open(tbl, true, "task-0")
	f.mustProcess(r, `[{"k":3,"v":"c"}]`)
	if files := spoolFiles(t, r); len(files) != 0 {
		t.Errorf("leftovers after the first write: %v", files)
	}
	if _, err := r.Snapshot(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := r.CheckpointComplete(ctx, 1); err != nil {
		t.Fatal(err)
	}
	f.expect("SELECT k, v FROM log", "3|c")
}

// TestFreshStartAfterFinishedRun: a job run again from scratch restarts checkpoint
// ids at 1; its commits must not be mistaken for the earlier run's.
func TestFreshStartAfterFinishedRun(t *testing.T) {
	f := newFixture(t)
	f.exec("CREATE TABLE log (k bigint, v text)")
	tbl := f.table("log", nil, "sink.delivery-guarantee", "exactly-once")
	for run := 1; run <= 2; run++ {
		s := f.open(tbl, true, "task-0")
		f.mustProcess(s, fmt.Sprintf(`[{"k":%d,"v":"x"}]`, run))
		for id := int64(1); id <= 3; id++ {
			if _, err := s.Snapshot(ctx, id); err != nil {
				t.Fatal(err)
			}
			if err := s.CheckpointComplete(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
	}
	f.expect("SELECT k, v FROM log", "1|x", "2|x")
}

// TestTypes: every column type reaches PostgreSQL with its value.
func TestTypes(t *testing.T) {
	f := newFixture(t)
	f.exec(`CREATE TABLE typed (id int PRIMARY KEY, b boolean, big bigint, d double precision, dec numeric(10,2),
		s varchar(20), ts timestamp(3), tsz timestamptz, day date, iv interval, ym interval, n text, t0 time, t3 time(3))`)
	schema := planner.Schema{
		{Name: "id", Type: planner.TypeInt}, {Name: "b", Type: planner.TypeBoolean}, {Name: "big", Type: planner.TypeBigInt},
		{Name: "d", Type: planner.TypeDouble}, {Name: "dec", Type: planner.DecimalType(10, 2)}, {Name: "s", Type: planner.TypeString},
		{Name: "ts", Type: planner.TypeTS}, {Name: "tsz", Type: planner.TypeTSLTZ}, {Name: "day", Type: planner.TypeDate},
		{Name: "iv", Type: planner.TypeInterval}, {Name: "ym", Type: planner.TypeMonths}, {Name: "n", Type: planner.TypeNull},
		{Name: "t0", Type: planner.TimeType(0)}, {Name: "t3", Type: planner.TimeType(3)},
	}
	tbl := &planner.Table{Name: "pg_typed", PrimaryKey: []string{"id"}, Options: map[string]string{"connector": "postgres", "url": f.url, "table-name": "public.Typed"}}
	for _, c := range schema {
		tbl.Columns = append(tbl.Columns, planner.TableColumn{Name: c.Name, Type: c.Type})
	}
	for _, exactly := range []bool{false, true} {
		f.exec("TRUNCATE typed")
		if exactly {
			tbl.Options["sink.delivery-guarantee"] = "exactly-once"
		}
		s := f.open(tbl, exactly, "typed")
		b := f.batch(schema, `[
			{"id":1,"b":true,"big":9007199254740993,"d":1.5,"dec":"12.34","s":"héllo","ts":"2019-01-17 09:43:19","tsz":"2019-01-17 09:43:19.123","day":"2019-01-17","iv":5000,"ym":{"months":14},"n":null,"t0":45296,"t3":45296789},
			{"id":2,"b":null,"big":null,"d":null,"dec":null,"s":null,"ts":null,"tsz":null,"day":null,"iv":null,"ym":null,"n":null,"t0":null,"t3":null}]`)
		err := s.Process(ctx, 0, b)
		b.Release()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Snapshot(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if err := s.CheckpointComplete(ctx, 1); err != nil {
			t.Fatal(err)
		}
		f.expect(`SELECT id, b, big, d, dec::text, s, ts::text, (tsz AT TIME ZONE 'UTC')::text, day::text, iv::text, ym::text, n, t0::text, t3::text FROM typed`,
			"1|true|9007199254740993|1.5|12.34|héllo|2019-01-17 09:43:19|2019-01-17 09:43:19.123|2019-01-17|00:00:05|1 year 2 mons|null|12:34:56|12:34:56.789",
			"2|null|null|null|null|null|null|null|null|null|null|null|null|null")
		s.Close()
	}
}

// TestBufferEncoding: a buffer survives the spool encoding, and damaged chunks are
// reported, never a panic.
func TestBufferEncoding(t *testing.T) {
	f := &fixture{t: t, mem: memory.NewCheckedAllocator(memory.NewGoAllocator())}
	defer f.mem.AssertSize(t, 0)
	schema := planner.Schema{{Name: "k", Type: planner.TypeBigInt}, {Name: "s", Type: planner.TypeString},
		{Name: "d", Type: planner.DecimalType(20, 3)}, {Name: "x", Type: planner.TypeDouble}, {Name: "b", Type: planner.TypeBoolean}}
	types := make([]kind, len(schema))
	names := make([]string, len(schema))
	for i, c := range schema {
		types[i], _ = kindOf(c.Type)
		names[i] = c.Name
	}
	buf := newBuffer(names, types, []int{0})
	b := f.batch(schema, `[{"k":1,"s":"a","d":"-1.5","x":2.5,"b":true},{"k":2,"s":null,"d":"123456789012.345","x":null,"b":false},{"k":1,"s":"z","d":"0.001","x":-0.5,"b":null}]`,
		exec.Insert, exec.Delete, exec.UpdateAfter)
	if err := buf.add(b); err != nil {
		t.Fatal(err)
	}
	b.Release()
	data := buf.encode(nil)
	out := newBuffer(names, types, nil)
	if err := out.decode(data); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < buf.n; i++ {
		if got, want := out.rowText(i), buf.rowText(i); got != want {
			t.Errorf("row %d: got %s, want %s", i, got, want)
		}
	}
	if got := out.rowText(0); got != `+I(k=1, s="z", d=0.001, x=-0.5, b=null)` {
		t.Errorf("folded row: %s", got)
	}
	if got := out.rowText(1); got != `-D(k=2, s=null, d=123456789012.345, x=null, b=false)` {
		t.Errorf("deleted row: %s", got)
	}
	for n := 0; n < len(data); n++ {
		if err := out.decode(data[:n]); err == nil {
			t.Errorf("a chunk cut to %d bytes decoded", n)
		}
	}
	if err := out.decode(append(data, 0)); err == nil {
		t.Errorf("a chunk with trailing bytes decoded")
	}
}

func TestDelivery(t *testing.T) {
	tbl := &planner.Table{Name: "x", Options: map[string]string{"connector": "postgres"}}
	if d := Sink.Delivery(tbl); d != connector.Appends {
		t.Errorf("no key: %v", d)
	}
	tbl.PrimaryKey = []string{"k"}
	if d := Sink.Delivery(tbl); d != connector.Upserts {
		t.Errorf("key: %v", d)
	}
	tbl.Options["sink.delivery-guarantee"] = "EXACTLY-ONCE"
	if d := Sink.Delivery(tbl); d != connector.Commits {
		t.Errorf("exactly-once: %v", d)
	}
}

// TestMalformedBatches: rows that do not match the sink's schema fail with an error,
// never a panic.
func TestMalformedBatches(t *testing.T) {
	f := newFixture(t)
	f.exec("CREATE TABLE target (k bigint PRIMARY KEY, v text)")
	for name, b := range map[string]func() exec.Batch{
		"types swapped": func() exec.Batch {
			return f.batch(planner.Schema{{Name: "k", Type: planner.TypeString}, {Name: "v", Type: planner.TypeBigInt}}, `[{"k":"a","v":1}]`)
		},
		"one column": func() exec.Batch {
			return f.batch(planner.Schema{{Name: "k", Type: planner.TypeBigInt}}, `[{"k":1}]`)
		},
		"kinds short": func() exec.Batch {
			return f.batch(kvSchema, `[{"k":1,"v":"a"},{"k":2,"v":"b"}]`, exec.Insert)
		},
	} {
		s := f.open(f.table("target", []string{"k"}), false, "")
		bt := b()
		err := s.Process(ctx, 0, bt)
		bt.Release()
		if err == nil || !strings.HasPrefix(err.Error(), "table pg_sink: ") {
			t.Errorf("%s: got %v", name, err)
		}
	}
	f.expect("SELECT k, v FROM target")
}

// others counts the sessions of the test's database but the fixture's own.
const others = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"

// TestCloseReleasesConnection: Close ends the sink's session.
func TestCloseReleasesConnection(t *testing.T) {
	f := newFixture(t)
	f.exec("CREATE TABLE target (k bigint PRIMARY KEY, v text)")
	s := f.open(f.table("target", []string{"k"}), false, "")
	f.expect(others, "1")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for f.rows(others)[0] != "0" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	f.expect(others, "0")
}

// TestReconnect: a write that loses its connection reconnects and tries again, up to
// 'sink.max-retries' times.
func TestReconnect(t *testing.T) {
	f := newFixture(t)
	f.exec("CREATE TABLE target (k bigint PRIMARY KEY, v text)")
	kill := func() { // ends the sink's session, and waits until it is gone
		f.rows("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
		for i := 0; i < 250 && f.rows(others)[0] != "0"; i++ {
			time.Sleep(20 * time.Millisecond)
		}
	}
	s := f.open(f.table("target", []string{"k"}), false, "")
	f.mustProcess(s, `[{"k":1,"v":"a"}]`)
	kill()
	if err := s.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	f.expect("SELECT k, v FROM target", "1|a")

	s = f.open(f.table("target", []string{"k"}, "sink.max-retries", "0"), false, "")
	f.mustProcess(s, `[{"k":2,"v":"b"}]`)
	kill()
	err := s.Finish(ctx)
	if err == nil || !strings.Contains(err.Error(), "table pg_sink: writing to PostgreSQL table target: ") {
		t.Errorf("without retries: got %v", err)
	}
}
