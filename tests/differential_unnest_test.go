package tests

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// unnestQueries run on streamsql and SQLite over t(id, tags ARRAY<STRING>, m MAP<STRING,
// INT>); SQLite keeps the collections as JSON text and reads them with json_each, whose
// key is an array element's 0-based index or a map entry's key.
var unnestQueries = []struct{ name, sql, sqlite string }{
	{"cross join",
		"SELECT t.id AS id, u.x AS x FROM t CROSS JOIN UNNEST(t.tags) AS u (x)",
		"SELECT t.id AS id, j.value AS x FROM t, json_each(t.tags) j"},
	{"left join with ordinality",
		"SELECT t.id AS id, u.x AS x, u.pos AS pos FROM t LEFT JOIN UNNEST(t.tags) WITH ORDINALITY AS u (x, pos) ON TRUE",
		"SELECT t.id AS id, j.value AS x, j.key + 1 AS pos FROM t LEFT JOIN json_each(t.tags) j ON TRUE"},
	{"map entries",
		"SELECT id AS id, k AS k, v AS v FROM t CROSS JOIN UNNEST(m) AS e (k, v)",
		"SELECT t.id AS id, j.key AS k, j.value AS v FROM t, json_each(t.m) j"},
	{"grouped elements",
		"SELECT x AS x, COUNT(*) AS n, SUM(id) AS s FROM t, UNNEST(tags) AS u (x) WHERE x IS NOT NULL GROUP BY x",
		"SELECT j.value AS x, COUNT(*) AS n, SUM(t.id) AS s FROM t, json_each(t.tags) j WHERE j.value IS NOT NULL GROUP BY j.value"},
}

// TestDifferentialUnnest runs every UNNEST query at parallelism 1 and 2 over rows with
// empty, NULL and NULL-holding collections.
func TestDifferentialUnnest(t *testing.T) {
	t.Parallel() // in-process and independent
	r := rand.New(rand.NewPCG(2, 17))
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE TABLE t (id INTEGER, tags TEXT, m TEXT)"); err != nil {
		t.Fatal(err)
	}
	var lines bytes.Buffer
	tx, _ := db.Begin()
	for id := range 2000 {
		tags := []any{} // not nil: json_each reads a JSON null as one NULL element
		m := map[string]any{}
		for range r.IntN(5) {
			if r.IntN(10) == 0 {
				tags = append(tags, nil)
			} else {
				tags = append(tags, fmt.Sprint("t", r.IntN(20)))
			}
		}
		for k := range r.IntN(4) {
			if r.IntN(8) == 0 {
				m[fmt.Sprint("k", k)] = nil
			} else {
				m[fmt.Sprint("k", k)] = r.IntN(100)
			}
		}
		row := map[string]any{"id": id, "tags": tags, "m": m}
		if r.IntN(10) == 0 {
			row["tags"], row["m"] = nil, nil
		}
		line, _ := json.Marshal(row)
		lines.Write(append(line, '\n'))
		tagsJSON, _ := json.Marshal(row["tags"])
		mJSON, _ := json.Marshal(row["m"])
		var tagsArg, mArg any = string(tagsJSON), string(mJSON)
		if row["tags"] == nil {
			tagsArg, mArg = nil, nil
		}
		if _, err := tx.Exec("INSERT INTO t VALUES (?, ?, ?)", id, tagsArg, mArg); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "t.json")
	if err := os.WriteFile(path, lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ddl := fmt.Sprintf(`CREATE TABLE t (id BIGINT, tags ARRAY<STRING>, m MAP<STRING, INT>)
		WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');`, path)
	for _, q := range unnestQueries {
		for _, parallelism := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s, parallelism %d", q.name, parallelism), func(t *testing.T) {
				differentialRun(t, db, fmt.Sprintf("SET 'parallelism.default' = '%d';", parallelism)+ddl, q.sql, q.sqlite)
			})
		}
	}
}
