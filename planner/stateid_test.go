package planner

import (
	"strings"
	"testing"
)

// TestStateMeaningKeepsLayoutNames checks that types which gained a name of their own
// still describe state as they did before, so that savepoints taken then restore: a
// MULTISET is named as the MAP of element to count it is held as, a TIMESTAMP(p) as the
// TIMESTAMP(3) every precision was.
func TestStateMeaningKeepsLayoutNames(t *testing.T) {
	_, n, err := planOver(t, `CREATE TABLE t (a INT, b STRING, m MULTISET<STRING>, ts TIMESTAMP, r ROW<t TIMESTAMP(0)>) WITH ('connector' = 'datagen');`,
		`SELECT a, COLLECT(b) AS c FROM t GROUP BY a`)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	Walk(n, func(n Node) {
		if m, ok := MeaningOf(n); ok {
			lines = append(lines, m.Lines...)
		}
	})
	text := strings.Join(lines, "\n")
	for _, want := range []string{"MAP<STRING, INT NOT NULL>", "m MAP<STRING, INT NOT NULL>", "ts TIMESTAMP(3)", "r ROW<`t` TIMESTAMP(3)>"} {
		if !strings.Contains(text, want) {
			t.Errorf("state meaning does not name %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "MULTISET") || strings.Contains(text, "TIMESTAMP(6)") || strings.Contains(text, "TIMESTAMP(0)") {
		t.Errorf("state meaning names MULTISET:\n%s", text)
	}
}
