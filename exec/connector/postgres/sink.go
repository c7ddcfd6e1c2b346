package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/planner"
)

// Sink is the connector 'postgres' (and 'jdbc').
var Sink = connector.SinkConnector{Open: open, Delivery: delivery}

// delivery: exactly-once commits on checkpoints; otherwise a key makes writes upserts,
// which a replay repeats harmlessly, and without one rows are appended.
func delivery(t *planner.Table) connector.Delivery {
	if g, err := guarantee(t); err == nil && g == guaranteeExactlyOnce {
		return connector.Commits
	}
	if len(t.PrimaryKey) > 0 {
		return connector.Upserts
	}
	return connector.Appends
}

// commitTable records, per exactly-once sink task, the last checkpoint whose rows it
// committed: an epoch's rows and its record commit in one transaction.
const (
	commitTable   = "streamsql_commits"
	createCommits = "CREATE TABLE IF NOT EXISTS " + commitTable + " (sink_id text PRIMARY KEY, checkpoint_id bigint NOT NULL, committed_at timestamptz NOT NULL DEFAULT now())"
	lockCommit    = "SELECT checkpoint_id FROM " + commitTable + " WHERE sink_id = $1 FOR UPDATE"
	recordCommit  = "UPDATE " + commitTable + " SET checkpoint_id = $2, committed_at = now() WHERE sink_id = $1"
	ensureCommit  = "INSERT INTO " + commitTable + " (sink_id, checkpoint_id) VALUES ($1, 0) ON CONFLICT (sink_id) DO NOTHING"
	resetCommit   = "INSERT INTO " + commitTable + " (sink_id, checkpoint_id) VALUES ($1, 0) ON CONFLICT (sink_id) DO UPDATE SET checkpoint_id = 0, committed_at = now()"
)

// spillRowsFloor is the fewest rows an exactly-once sink folds in memory before it
// appends them to the spool.
const spillRowsFloor = 1000

// sink writes a changelog to a PostgreSQL table.
//
// At-least-once (and 'none'): rows are folded by key in a buffer, written when it
// holds 'sink.buffer-flush.max-rows' rows, when 'sink.buffer-flush.interval' passed,
// on every barrier and at the end of input.
//
// Exactly-once with checkpoints: the rows of each epoch (between two barriers) are
// spooled to a file of the job's state directory; the barrier seals the file, and when
// the checkpoint completes the epoch is applied in one transaction that also records
// it in streamsql_commits, so it is applied once however often a crash makes the sink
// retry. Readers never see the rows of an uncommitted epoch.
type sink struct {
	name    string // the sink table of the script
	id      string // the sink task's stable id, its key in the commit table
	cfg     *config
	conn    *pgx.Conn
	buf     *buffer // rows received and not yet written or spooled
	replay  *buffer // an epoch's chunk being committed
	w       writer
	exactly bool // exactly-once with checkpoints

	spool   spool
	pending []int64 // sealed epochs not yet committed, oldest first
	chunk   []byte

	started   bool // the spool was cleaned up (fresh start) or restored
	failed    bool
	lastFlush time.Time
}

var (
	_ connector.Sink      = (*sink)(nil)
	_ exec.Flusher        = (*sink)(nil)
	_ exec.Snapshotter    = (*sink)(nil)
	_ exec.Restorer       = (*sink)(nil)
	_ exec.CommitListener = (*sink)(nil)
)

// sinkState is what a checkpoint holds of an exactly-once sink: its sealed epochs not
// yet committed.
type sinkState struct {
	Epochs []int64 `json:"epochs"`
}

func open(ctx context.Context, spec connector.SinkSpec) (connector.Sink, error) {
	t := spec.Table
	cfg, err := parseOptions(t)
	if err != nil {
		return nil, err
	}
	schema := spec.Schema
	names := make([]string, len(schema))
	types := make([]kind, len(schema))
	for i, c := range schema {
		names[i] = c.Name
		if types[i], err = kindOf(c.Type); err != nil {
			return nil, connector.TableError(t, connector.ErrInvalidOption, "column %s: %v", c.Name, err)
		}
	}
	phys := t.PhysicalSchema()
	if len(phys) == len(schema) {
		for i, c := range phys {
			names[i] = c.Name // the table's column names are the target's
		}
	}
	var keys []int
	for _, k := range t.PrimaryKey {
		i := planner.Schema(phys).Index(k)
		if i < 0 || i >= len(names) {
			return nil, connector.TableError(t, connector.ErrInvalidOption, "primary key column %s is not a column of the table", k)
		}
		keys = append(keys, i)
	}
	s := &sink{
		name:      t.Name,
		id:        spec.ID,
		cfg:       cfg,
		buf:       newBuffer(names, types, keys),
		replay:    newBuffer(names, types, nil),
		exactly:   cfg.guarantee == guaranteeExactlyOnce && spec.Checkpointed && spec.StateDir != "",
		lastFlush: time.Now(),
	}
	if s.id == "" {
		s.id = fmt.Sprintf("%s-%d", strings.ToLower(t.Name), spec.Task)
	}
	s.w = writer{table: cfg.tableName, sink: t.Name, stmt: newStatements(cfg.table, s.buf.cols, keys), keys: keys}
	if spec.StateDir != "" {
		s.spool.dir = filepath.Join(spec.StateDir, strings.NewReplacer("/", "_", `\`, "_").Replace(s.id))
	}
	if err := s.connect(ctx); err != nil {
		return nil, err
	}
	if err := s.check(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// connect opens the connection, bounded by 'connection.max-retry-timeout'.
func (s *sink) connect(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.connectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, s.cfg.conn)
	if err != nil {
		return fmt.Errorf("table %s: cannot connect to PostgreSQL at %s:%d: %s", s.name, s.cfg.conn.Host, s.cfg.conn.Port, oneLine(err))
	}
	s.conn = conn
	return nil
}

// oneLine joins the lines of pgx's error for each address it tried, without repeats.
func oneLine(err error) string {
	var parts []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(parts, l) {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

// check makes sure the target table exists and, for exactly-once, the commit table.
func (s *sink) check(ctx context.Context) error {
	var exists bool
	if err := s.conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", s.cfg.table).Scan(&exists); err != nil {
		return fmt.Errorf("table %s: looking up PostgreSQL table %s: %w", s.name, s.cfg.tableName, err)
	}
	if !exists {
		return fmt.Errorf("table %s: PostgreSQL table %s does not exist; create it before running the job", s.name, s.cfg.tableName)
	}
	// Planning the statements (EXPLAIN, with NULL arrays) checks the columns, their
	// types and, with a key, the unique constraint ON CONFLICT needs, before any row is
	// written.
	for _, st := range []struct {
		sql    string
		params int
	}{{s.w.stmt.upsert, len(s.buf.cols)}, {s.w.stmt.delete, len(s.buf.keys)}} {
		if st.sql == "" {
			continue
		}
		if _, err := s.conn.Exec(ctx, "EXPLAIN "+st.sql, make([]any, st.params)...); err != nil {
			return fmt.Errorf("table %s: PostgreSQL table %s does not fit the sink's rows: %s", s.name, s.cfg.tableName, dbMessage(err))
		}
	}
	if !s.exactly {
		return nil
	}
	_, err := s.conn.Exec(ctx, createCommits)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "42P07") {
		_, err = s.conn.Exec(ctx, createCommits) // a parallel task created it at the same time
	}
	if err != nil {
		return fmt.Errorf("table %s: creating PostgreSQL table %s: %w", s.name, commitTable, err)
	}
	return nil
}

// start prepares the first write of a fresh start (Open not followed by Restore): the
// spool files a failed earlier attempt left are removed, and the commit record starts
// over, as checkpoint ids do.
func (s *sink) start(ctx context.Context) error {
	if s.started {
		return nil
	}
	s.started = true
	if !s.exactly {
		return nil
	}
	if err := s.spool.clean(nil); err != nil {
		return s.fail(fmt.Errorf("table %s: removing old spool files: %w", s.name, err))
	}
	if err := s.retry(ctx, func(conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, resetCommit, s.id)
		return err
	}); err != nil {
		return s.fail(fmt.Errorf("table %s: resetting the commit record in PostgreSQL table %s: %s", s.name, commitTable, dbMessage(err)))
	}
	return nil
}

// Process buffers the rows of b, and writes (at-least-once) or spools (exactly-once)
// them when enough wait or, at-least-once, when the flush interval passed.
func (s *sink) Process(ctx context.Context, _ int, b exec.Batch) error {
	if s.failed {
		return fmt.Errorf("table %s: PostgreSQL sink has failed", s.name)
	}
	if err := s.start(ctx); err != nil {
		return err
	}
	if err := s.buf.add(b); err != nil {
		if errors.Is(err, errUpdateWithoutKey) {
			return s.fail(fmt.Errorf("table %s: PostgreSQL sink without a PRIMARY KEY only appends, but the query produces updates or deletes; declare a PRIMARY KEY: %w", s.name, connector.ErrNotAppendOnly))
		}
		return s.fail(fmt.Errorf("table %s: %w", s.name, err))
	}
	if s.exactly {
		if s.buf.n >= max(s.cfg.maxRows, spillRowsFloor) {
			return s.spill()
		}
		return nil
	}
	if s.cfg.maxRows > 0 && s.buf.n >= s.cfg.maxRows {
		return s.write(ctx)
	}
	return s.Flush(ctx)
}

// Flush writes the buffer when the flush interval passed (at-least-once).
func (s *sink) Flush(ctx context.Context) error {
	if s.exactly || s.failed || s.cfg.interval <= 0 || time.Since(s.lastFlush) < s.cfg.interval {
		return nil
	}
	return s.write(ctx)
}

// Snapshot, at-least-once, writes the buffer: the table then holds everything before
// the barrier, and the sink keeps no state. Exactly-once, it seals the epoch's spool
// and returns the epochs awaiting their commit.
func (s *sink) Snapshot(ctx context.Context, id int64) ([]byte, error) {
	if s.failed {
		return nil, fmt.Errorf("table %s: PostgreSQL sink has failed", s.name)
	}
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	if !s.exactly {
		return nil, s.write(ctx)
	}
	if err := s.spill(); err != nil {
		return nil, err
	}
	sealed, err := s.spool.seal(id)
	if err != nil {
		return nil, s.fail(fmt.Errorf("table %s: sealing the spool of checkpoint %d: %w", s.name, id, err))
	}
	if sealed {
		s.pending = append(s.pending, id)
	}
	return json.Marshal(sinkState{Epochs: append([]int64{}, s.pending...)})
}

// CheckpointComplete commits every sealed epoch up to checkpoint id.
func (s *sink) CheckpointComplete(ctx context.Context, id int64) error {
	if !s.exactly || s.failed {
		return nil
	}
	if err := s.start(ctx); err != nil {
		return err
	}
	for len(s.pending) > 0 && s.pending[0] <= id {
		if err := s.commitEpoch(ctx, s.pending[0]); err != nil {
			return s.fail(err)
		}
		s.pending = s.pending[1:]
	}
	return nil
}

// Restore commits the epochs of the restored checkpoint, which its completion notice
// may not have reached before a crash (the commit table tells those already
// committed), and removes the spool files of later epochs, which a failed attempt left.
func (s *sink) Restore(state []byte) error {
	if len(state) == 0 {
		return nil
	}
	var st sinkState
	if err := json.Unmarshal(state, &st); err != nil {
		return fmt.Errorf("table %s: restoring the PostgreSQL sink: %w", s.name, err)
	}
	if !s.exactly {
		return nil // the job was exactly-once before; at-least-once now, it replays instead
	}
	s.started = true
	ctx := context.Background()
	if err := s.retry(ctx, func(conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, ensureCommit, s.id)
		return err
	}); err != nil {
		return s.fail(fmt.Errorf("table %s: reading the commit record in PostgreSQL table %s: %s", s.name, commitTable, dbMessage(err)))
	}
	slices.Sort(st.Epochs)
	for _, e := range st.Epochs {
		if err := s.commitEpoch(ctx, e); err != nil {
			return s.fail(err)
		}
	}
	if err := s.spool.clean(nil); err != nil {
		return s.fail(fmt.Errorf("table %s: removing spool files of failed attempts: %w", s.name, err))
	}
	return nil
}

// Finish writes what is buffered, at-least-once. Exactly-once, it spools it: the job's
// final checkpoint seals and commits it.
func (s *sink) Finish(ctx context.Context) error {
	if s.failed {
		return fmt.Errorf("table %s: PostgreSQL sink has failed", s.name)
	}
	if err := s.start(ctx); err != nil {
		return err
	}
	if s.exactly {
		return s.spill()
	}
	return s.write(ctx)
}

// Close releases the connection and the spool file; it writes nothing.
func (s *sink) Close() error {
	err := s.spool.close()
	if s.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = errors.Join(err, s.conn.Close(ctx))
		s.conn = nil
	}
	return err
}

func (s *sink) fail(err error) error {
	s.failed = true
	return err
}

// write applies the buffer to the table (at-least-once): in bulk, and if the database
// rejects that, row by row in a transaction, to name the row it rejects.
func (s *sink) write(ctx context.Context) error {
	s.lastFlush = time.Now()
	if s.buf.n == 0 {
		return nil
	}
	err := s.retry(ctx, func(conn *pgx.Conn) error { return s.w.write(ctx, conn, s.buf) })
	if err != nil && s.isDataError(err) {
		err = pgx.BeginFunc(ctx, s.conn, func(tx pgx.Tx) error { return s.w.writeRows(ctx, tx, s.buf) })
	}
	if err != nil {
		var re *RowError
		if errors.As(err, &re) {
			return s.fail(err)
		}
		return s.fail(fmt.Errorf("table %s: writing to PostgreSQL table %s: %s", s.name, s.cfg.tableName, dbMessage(err)))
	}
	s.buf.reset()
	return nil
}

// spill appends the buffer to the current epoch's spool (exactly-once).
func (s *sink) spill() error {
	if s.buf.n == 0 {
		return nil
	}
	s.chunk = s.buf.encode(s.chunk[:0])
	if err := s.spool.append(s.chunk); err != nil {
		return s.fail(fmt.Errorf("table %s: writing the spool: %w", s.name, err))
	}
	s.buf.reset()
	return nil
}

// commitEpoch applies epoch id's rows and records it in one transaction, unless the
// commit table says it was committed already; then it removes the epoch's file.
func (s *sink) commitEpoch(ctx context.Context, id int64) error {
	err := s.retry(ctx, func(conn *pgx.Conn) error { return s.commitTx(ctx, conn, id, false) })
	if err != nil && s.isDataError(err) && !errors.Is(err, errSpoolMissing) && !errors.Is(err, errCorrupt) {
		err = s.retry(ctx, func(conn *pgx.Conn) error { return s.commitTx(ctx, conn, id, true) })
	}
	if err != nil {
		var re *RowError
		if errors.As(err, &re) {
			return err
		}
		return fmt.Errorf("table %s: committing checkpoint %d to PostgreSQL table %s: %s", s.name, id, s.cfg.tableName, dbMessage(err))
	}
	if err := s.spool.remove(id); err != nil {
		return fmt.Errorf("table %s: removing the spool of checkpoint %d: %w", s.name, id, err)
	}
	return nil
}

// errSpoolMissing: an epoch to commit has no spool file, and was not committed.
var errSpoolMissing = errors.New("its spool file is missing")

func (s *sink) commitTx(ctx context.Context, conn *pgx.Conn, id int64, rowByRow bool) error {
	defer s.replay.reset()
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		var last int64
		if err := tx.QueryRow(ctx, lockCommit, s.id).Scan(&last); err != nil {
			return err
		}
		if last >= id {
			return nil // committed before a crash lost the notice
		}
		if !s.spool.exists(id) {
			return errSpoolMissing
		}
		if err := s.spool.read(id, func(chunk []byte) error {
			if err := s.replay.decode(chunk); err != nil {
				return err
			}
			if rowByRow {
				return s.w.writeRows(ctx, tx, s.replay)
			}
			return s.w.write(ctx, tx, s.replay)
		}); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, recordCommit, s.id, id)
		return err
	})
}

// isDataError reports whether err is about what was written (the database rejected
// it, or it could not be encoded), not a lost connection, which a retry may mend.
func (s *sink) isDataError(err error) bool {
	var pe *pgconn.PgError
	switch {
	case s.conn == nil || s.conn.IsClosed(): // even after a FATAL error, such as the server's shutdown
		return false
	case errors.As(err, &pe):
		return true
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err):
		return false
	}
	return !pgconn.SafeToRetry(err)
}

// retry runs fn, reconnecting and trying again up to 'sink.max-retries' times when the
// connection (not the data) failed.
func (s *sink) retry(ctx context.Context, fn func(conn *pgx.Conn) error) error {
	var err error
	for attempt := 0; ; attempt++ {
		if s.conn == nil || s.conn.IsClosed() {
			if s.conn != nil {
				s.conn.Close(ctx)
				s.conn = nil
			}
			err = s.connect(ctx)
		} else {
			err = nil
		}
		if err == nil {
			if err = fn(s.conn); err == nil || s.isDataError(err) {
				return err
			}
		}
		if attempt >= s.cfg.maxRetries || ctx.Err() != nil {
			return err
		}
		select {
		case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
		case <-ctx.Done():
			return err
		}
	}
}
