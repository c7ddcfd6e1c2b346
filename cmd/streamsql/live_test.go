package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql"
	"github.com/streamsql/streamsql/exec"
)

func TestParseKeys(t *testing.T) {
	var got []scrollKey
	rest := parseKeys([]byte("\x1b[A\x1b[Bjk\x1b[5~\x1b[6~ b\x1bOH\x1b[F\x1b[1~\x1b[4~gGx\x1b[1;5A\x1b["), func(k scrollKey) { got = append(got, k) })
	want := []scrollKey{keyUp, keyDown, keyDown, keyUp, keyPageUp, keyPageDown, keyPageDown, keyPageUp,
		keyHome, keyEnd, keyHome, keyEnd, keyHome, keyEnd}
	if !slices.Equal(got, want) {
		t.Errorf("keys %v, want %v", got, want)
	}
	if string(rest) != "\x1b[" {
		t.Errorf("left %q, want the escape sequence cut short", rest)
	}
	// The rest of a cut sequence completes it.
	got = nil
	parseKeys(append(rest, "6~"...), func(k scrollKey) { got = append(got, k) })
	if !slices.Equal(got, []scrollKey{keyPageDown}) {
		t.Errorf("completed sequence gives %v", got)
	}
}

// lastFrame is what the latest redraw of a live view drew into out.
func lastFrame(out *logWriter) string {
	out.mu.Lock()
	defer out.mu.Unlock()
	s := out.w.(*bytes.Buffer).String()
	return s[strings.LastIndex(s, "\r\x1b[J"):]
}

// The table mode shows a screenful of rows, and the keys move it over the table,
// never past its ends.
func TestTableModeScrolls(t *testing.T) {
	out := &logWriter{w: &bytes.Buffer{}}
	views := &liveViews{out: out, now: time.Now, keys: -1, size: func() (int, int) { return 80, 16 }} // 10 rows
	v := views.new(streamsql.LiveSpec{Mode: "table", Columns: []string{"id"}}).(*liveView)
	var changes []streamsql.Change
	for i := 1; i <= 25; i++ {
		changes = append(changes, streamsql.Change{Kind: exec.Insert, Row: []string{fmt.Sprint(i)}})
	}
	v.Apply(changes)
	shows := func(first, last int) {
		t.Helper()
		v.mu.Lock()
		v.draw(false)
		v.mu.Unlock()
		frame := lastFrame(out)
		for i := 1; i <= 25; i++ {
			row := fmt.Sprintf("| %2d |", i)
			if in := strings.Contains(frame, row); in != (i >= first && i <= last) {
				t.Fatalf("rows %d to %d wanted, row %d shown: %v\n%s", first, last, i, in, frame)
			}
		}
		if status := fmt.Sprintf("25 rows (%d to %d shown;", first, last); !strings.Contains(frame, status) {
			t.Fatalf("status lacks %q:\n%s", status, frame)
		}
	}
	shows(1, 10)
	v.scroll(keyDown)
	shows(2, 11)
	v.scroll(keyPageDown)
	shows(12, 21)
	v.scroll(keyPageDown)
	shows(16, 25)
	v.scroll(keyUp)
	shows(15, 24)
	v.scroll(keyHome)
	v.scroll(keyUp)
	shows(1, 10)
	v.scroll(keyEnd)
	shows(16, 25)
	// Rows that go take the view back onto the table.
	var gone []streamsql.Change
	for i := 11; i <= 25; i++ {
		gone = append(gone, streamsql.Change{Kind: exec.Delete, Row: []string{fmt.Sprint(i)}})
	}
	v.Apply(gone)
	v.Apply([]streamsql.Change{{Kind: exec.Insert, Row: []string{"26"}}})
	v.mu.Lock()
	v.draw(false)
	v.mu.Unlock()
	if frame := lastFrame(out); !strings.Contains(frame, "| 26 |") || !strings.Contains(frame, "|  2 |") || strings.Contains(frame, "|  1 |") {
		t.Errorf("after deletes the view shows:\n%s", frame)
	}
	v.End()
}
