package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/streamsql/streamsql/exec"
)

// statements are the SQL a sink writes with. The bulk forms take one array per column
// and write a whole buffer in one statement; the row forms write one row, to find the
// row the database rejects.
type statements struct {
	upsert, delete       string // bulk; delete is "" without a key
	upsertRow, deleteRow string
}

// db is what statements run on: a connection or a transaction.
type db interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

func newStatements(table string, cols []column, keys []int) statements {
	var names, params, selects, rowParams []string
	p := 0 // row parameters: NULL columns take none
	for i, c := range cols {
		names = append(names, quoteIdent(c.name))
		params = append(params, fmt.Sprintf("$%d::%s[]", i+1, pgTypes[c.kind]))
		if c.kind == kNull {
			selects = append(selects, "NULL")
			rowParams = append(rowParams, "NULL")
		} else {
			selects = append(selects, fmt.Sprintf("u.c%d", i))
			p++
			rowParams = append(rowParams, fmt.Sprintf("$%d::%s", p, pgTypes[c.kind]))
		}
	}
	aliases := make([]string, len(cols))
	for i := range cols {
		aliases[i] = fmt.Sprintf("c%d", i)
	}
	var s statements
	conflict := ""
	if len(keys) > 0 {
		var keyNames, sets []string
		isKey := map[int]bool{}
		for _, k := range keys {
			keyNames = append(keyNames, names[k])
			isKey[k] = true
		}
		for i, n := range names {
			if !isKey[i] {
				sets = append(sets, n+" = EXCLUDED."+n)
			}
		}
		if len(sets) == 0 {
			conflict = " ON CONFLICT (" + strings.Join(keyNames, ", ") + ") DO NOTHING"
		} else {
			conflict = " ON CONFLICT (" + strings.Join(keyNames, ", ") + ") DO UPDATE SET " + strings.Join(sets, ", ")
		}
		var keyParams, match, rowMatch []string
		for j, k := range keys {
			keyParams = append(keyParams, fmt.Sprintf("$%d::%s[]", j+1, pgTypes[cols[k].kind]))
			match = append(match, fmt.Sprintf("t.%s = d.k%d", names[k], j))
			rowMatch = append(rowMatch, fmt.Sprintf("%s = $%d::%s", names[k], j+1, pgTypes[cols[k].kind]))
		}
		keyAliases := make([]string, len(keys))
		for j := range keys {
			keyAliases[j] = fmt.Sprintf("k%d", j)
		}
		s.delete = fmt.Sprintf("DELETE FROM %s AS t USING unnest(%s) AS d(%s) WHERE %s",
			table, strings.Join(keyParams, ", "), strings.Join(keyAliases, ", "), strings.Join(match, " AND "))
		s.deleteRow = fmt.Sprintf("DELETE FROM %s WHERE %s", table, strings.Join(rowMatch, " AND "))
	}
	s.upsert = fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM unnest(%s) AS u(%s)%s",
		table, strings.Join(names, ", "), strings.Join(selects, ", "), strings.Join(params, ", "), strings.Join(aliases, ", "), conflict)
	s.upsertRow = fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)%s", table, strings.Join(names, ", "), strings.Join(rowParams, ", "), conflict)
	return s
}

// columnArray is some rows of a column as a PostgreSQL array parameter.
type columnArray struct {
	c    *column
	rows []int32
}

var _ pgtype.ArrayGetter = columnArray{}

func (a columnArray) Dimensions() []pgtype.ArrayDimension {
	return []pgtype.ArrayDimension{{Length: int32(len(a.rows)), LowerBound: 1}}
}
func (a columnArray) Index(i int) any {
	if a.c.kind == kNull {
		return nil
	}
	return a.c.value(int(a.rows[i]))
}

func (a columnArray) IndexType() any { return a.c.zero() }

// writer applies buffers to the target table.
type writer struct {
	table string // the target, as 'table-name' gives it, for messages
	sink  string // the sink table's name in the script
	stmt  statements
	keys  []int

	upserts, deletes []int32
	args             []any
}

// write applies the buffer's rows in bulk: one DELETE of the deleted keys and one
// INSERT (an upsert, with a key) of the others. Keys are distinct after folding, so the
// two commute.
func (w *writer) write(ctx context.Context, d db, b *buffer) error {
	w.upserts, w.deletes = w.upserts[:0], w.deletes[:0]
	for i := 0; i < b.n; i++ {
		if b.kinds[i] == exec.Delete {
			w.deletes = append(w.deletes, int32(i))
		} else {
			w.upserts = append(w.upserts, int32(i))
		}
	}
	if len(w.deletes) > 0 {
		w.args = w.args[:0]
		for _, k := range w.keys {
			w.args = append(w.args, columnArray{&b.cols[k], w.deletes})
		}
		if _, err := d.Exec(ctx, w.stmt.delete, w.args...); err != nil {
			return err
		}
	}
	if len(w.upserts) > 0 {
		w.args = w.args[:0]
		for c := range b.cols {
			w.args = append(w.args, columnArray{&b.cols[c], w.upserts})
		}
		if _, err := d.Exec(ctx, w.stmt.upsert, w.args...); err != nil {
			return err
		}
	}
	return nil
}

// writeRows applies the buffer's rows one by one, in order, and says which row the
// database rejects. It runs in a transaction the caller rolls back on error.
func (w *writer) writeRows(ctx context.Context, tx pgx.Tx, b *buffer) error {
	for i := 0; i < b.n; i++ {
		w.args = w.args[:0]
		sql := w.stmt.upsertRow
		if b.kinds[i] == exec.Delete {
			sql = w.stmt.deleteRow
			for _, k := range w.keys {
				w.args = append(w.args, b.cols[k].value(i))
			}
		} else {
			for c := range b.cols {
				if b.cols[c].kind != kNull {
					w.args = append(w.args, b.cols[c].value(i))
				}
			}
		}
		if _, err := tx.Exec(ctx, sql, w.args...); err != nil {
			return &RowError{Sink: w.sink, Table: w.table, Row: b.rowText(i), Err: err}
		}
	}
	return nil
}

// RowError is a row the database rejected: the job fails with it.
type RowError struct {
	Sink  string // the sink table of the script
	Table string // the PostgreSQL table
	Row   string // the row's kind and values
	Err   error  // the database's error
}

func (e *RowError) Error() string {
	return fmt.Sprintf("table %s: PostgreSQL table %s rejected row %s: %s", e.Sink, e.Table, e.Row, dbMessage(e.Err))
}

func (e *RowError) Unwrap() error { return e.Err }

// dbMessage is the database's error with its detail, on one line.
func dbMessage(err error) string {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return err.Error()
	}
	if pe.Detail != "" {
		return fmt.Sprintf("%s (SQLSTATE %s, DETAIL: %s)", pe.Message, pe.Code, pe.Detail)
	}
	return fmt.Sprintf("%s (SQLSTATE %s)", pe.Message, pe.Code)
}
