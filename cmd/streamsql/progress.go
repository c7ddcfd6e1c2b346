package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/streamsql/streamsql"
	"github.com/streamsql/streamsql/exec"
)

// terminal serializes what streamsql writes to a terminal, so that the progress line
// stays the last line: a write of results or logs first clears it, then draws it again
// below.
type terminal struct {
	mu     sync.Mutex
	err    io.Writer // where the status line is drawn
	status string
}

// clearLine returns to the start of the line and erases it.
const clearLine = "\r\x1b[2K"

// writer returns a writer to w (stdout or stderr on the same terminal) that keeps the
// status line below what it writes.
func (t *terminal) writer(w io.Writer) io.Writer { return termWriter{t, w} }

type termWriter struct {
	t *terminal
	w io.Writer
}

func (tw termWriter) Write(p []byte) (int, error) {
	tw.t.mu.Lock()
	defer tw.t.mu.Unlock()
	if tw.t.status != "" {
		io.WriteString(tw.t.err, clearLine)
	}
	n, err := tw.w.Write(p)
	if tw.t.status != "" {
		io.WriteString(tw.t.err, tw.t.status)
	}
	return n, err
}

// show draws line as the status line; "" removes it.
func (t *terminal) show(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if line == "" && t.status == "" {
		return
	}
	io.WriteString(t.err, clearLine+line)
	t.status = line
}

// runProgress redraws the status line of the session's jobs every interval until ctx
// ends, then removes it.
func runProgress(ctx context.Context, t *terminal, session *streamsql.Session, interval time.Duration) {
	start := time.Now()
	lastRows, lastAt := int64(0), start
	tick := time.NewTicker(interval)
	defer tick.Stop()
	defer t.show("")
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			var rows, checkpoints int64
			wm := int64(exec.MaxWatermark)
			seen := false
			for _, st := range session.Jobs() {
				rows += st.RowsIn
				checkpoints += st.LastCheckpoint
				if st.Watermark > exec.MinWatermark {
					wm, seen = min(wm, st.Watermark), true
				}
			}
			rate := float64(rows-lastRows) / now.Sub(lastAt).Seconds()
			lastRows, lastAt = rows, now
			t.show(statusLine(rows, rate, checkpoints, wm, seen, now.Sub(start)))
		}
	}
}

// statusLine is the progress line: rows read, rows/s, checkpoints completed, the
// watermark reaching the sinks, the time since the start.
func statusLine(rows int64, rate float64, checkpoints, wm int64, haveWM bool, elapsed time.Duration) string {
	watermark := "-"
	switch {
	case haveWM && wm == exec.MaxWatermark:
		watermark = "end"
	case haveWM:
		watermark = time.UnixMilli(wm).UTC().Format("2006-01-02 15:04:05.000")
	}
	return fmt.Sprintf("rows read %s | %s rows/s | checkpoints %d | watermark %s | elapsed %s",
		group(rows), group(int64(rate+0.5)), checkpoints, watermark, elapsed.Truncate(time.Second))
}

// group writes n with thousands separators.
func group(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
