package tests

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatementSetCrash runs a statement set of two INSERTs as one job: a CUBE
// aggregate upserted into an embedded table, and the raw rows through the
// two-phase-commit filesystem sink. SIGKILLed 10 times and restarted from its latest
// checkpoint each time, every sink ends as in a failure-free run: the one checkpoint
// covers both sinks, the grouping sets' aggregate state and both sources' positions.
func TestStatementSetCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	run := func(kills int, r *rand.Rand) (table string, files []string) {
		dir := t.TempDir()
		db, out := filepath.Join(dir, "cube.db"), filepath.Join(dir, "out")
		createCube := fmt.Sprintf(`CREATE TABLE cube (a BIGINT, b BIGINT, g BIGINT, n BIGINT, s BIGINT, PRIMARY KEY (a, b, g) NOT ENFORCED)
  WITH ('connector' = 'embedded', 'path' = '%s')`, db)
		createOut := fmt.Sprintf(`CREATE TABLE out (id BIGINT, k BIGINT, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv')`, out)
		set := `EXECUTE STATEMENT SET BEGIN
  INSERT INTO cube SELECT COALESCE(k % 10, -1), COALESCE(v % 3, -1), GROUPING_ID(k % 10, v % 3), COUNT(*), SUM(v)
    FROM gen GROUP BY CUBE (k % 10, v % 3);
  INSERT INTO out SELECT id, k, v FROM gen;
END`
		runUntilDone(t, writeScript(t, sinkJob(createCube+";\n"+createOut, set)), t.TempDir(), kills, r)
		got, errOut, code := runCLI(t, "", "-e", createCube+"; SELECT * FROM cube;", "--format", "csv", "--state-dir", t.TempDir())
		if code != 0 {
			t.Fatalf("reading the table back: %s", errOut)
		}
		return got, committedRows(out)
	}
	wantTable, wantFiles := run(0, nil)
	if n := strings.Count(wantTable, "\n"); n != 45 {
		t.Fatalf("failure-free run wrote %d lines into the table, want a header and 44 groups:\n%.300s", n, wantTable)
	}
	if len(wantFiles) != 30000 {
		t.Fatalf("failure-free run wrote %d rows into the files", len(wantFiles))
	}
	gotTable, gotFiles := run(10, rand.New(rand.NewPCG(21, 3)))
	if gotTable != wantTable {
		t.Errorf("after crashes the table differs:\n%s", diffLines(wantTable, gotTable))
	}
	if strings.Join(gotFiles, "\n") != strings.Join(wantFiles, "\n") {
		t.Errorf("after crashes the files hold %d rows, want %d\n%s", len(gotFiles), len(wantFiles),
			diffLines(strings.Join(wantFiles, "\n"), strings.Join(gotFiles, "\n")))
	}
}
