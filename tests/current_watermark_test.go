package tests

import (
	"strings"
	"testing"
)

// TestCurrentWatermark: CURRENT_WATERMARK(ts) is NULL until a watermark passed the
// operator, then never decreases and stays behind the rows still to come (here ts is
// increasing and the watermark is ts itself); the filter Flink's docs give for late
// rows keeps every row of an in-order stream.
func TestCurrentWatermark(t *testing.T) {
	out, stderr, code := runCLI(t, "", "--format", "csv", "-e", `
CREATE TABLE g (id BIGINT, ts AS TO_TIMESTAMP_LTZ(id, 3), WATERMARK FOR ts AS ts) WITH (
  'connector' = 'datagen', 'number-of-rows' = '400', 'rows-per-second' = '2000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '400');
SELECT id, ts, CURRENT_WATERMARK(ts) AS wm FROM g WHERE CURRENT_WATERMARK(ts) IS NULL OR ts > CURRENT_WATERMARK(ts);`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")[1:]
	if len(lines) != 400 {
		t.Fatalf("%d rows kept, want all 400:\n%s", len(lines), out)
	}
	nulls, last := 0, ""
	for _, line := range lines {
		f := strings.Split(line, ",") // id, ts, wm: times print in one width, so they compare as text
		if f[2] == "" {
			if last != "" {
				t.Fatalf("the watermark went back to NULL: %s", line)
			}
			nulls++
			continue
		}
		if f[2] < last {
			t.Fatalf("the watermark went back from %s: %s", last, line)
		}
		if last = f[2]; f[2] >= f[1] {
			t.Fatalf("a row at or behind its watermark: %s", line)
		}
	}
	if nulls == 0 || nulls == len(lines) {
		t.Errorf("%d of %d rows saw no watermark: it never passed, or passed before any row", nulls, len(lines))
	}
}
