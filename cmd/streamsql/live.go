package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/streamsql/streamsql"
)

// The shell's result modes, Flink's 'sql-client.execution.result-mode':
//   - table: the materialized result as a table redrawn in place as changes arrive,
//     with its row count and the time of the last change, cut to the screen;
//   - changelog: the latest changes (+I, -U, +U, -D), redrawn in place;
//   - tableau: every change printed as it arrives, in Flink's tableau layout.

// maxCellWidth cuts long cells, as Flink's 'sql-client.display.max-column-width'.
const maxCellWidth = 30

// redrawEvery bounds how often a live view redraws.
const redrawEvery = 100 * time.Millisecond

// liveViews makes the view of each query the shell runs, on the terminal out.
type liveViews struct {
	out  io.Writer
	size func() (width, height int)
	now  func() time.Time
	// keys is the terminal the shell reads, whose keys scroll the table mode; -1 when
	// there is none.
	keys int
}

func (v *liveViews) new(spec streamsql.LiveSpec) streamsql.LiveResult {
	if spec.Mode == "tableau" {
		return newTableau(v.out, spec.Columns, v.size)
	}
	l := &liveView{views: v, spec: spec, done: make(chan struct{})}
	if spec.Mode == "changelog" {
		l.changelog = true
	} else {
		l.table = streamsql.NewMaterialized(spec.MaxRows, func() { l.dropped = true })
		if v.keys >= 0 {
			ctx, stop := context.WithCancel(context.Background())
			l.stopKeys = stop
			l.wg.Go(func() { readKeys(ctx, v.keys, l.scroll) })
		}
	}
	l.wg.Go(l.loop)
	return l
}

// liveView is the table and changelog modes: a screen region redrawn in place.
type liveView struct {
	views     *liveViews
	spec      streamsql.LiveSpec
	changelog bool

	mu      sync.Mutex
	table   *streamsql.Materialized // table mode
	recent  []streamsql.Change      // changelog mode: the latest changes, oldest first
	changes int64
	last    time.Time
	dirty   bool
	drawn   int  // lines drawn last time
	top     int  // table mode: the live rows scrolled past
	dropped bool // table mode: the oldest rows went, past the result's bounds

	done     chan struct{}
	stopKeys func() // ends the key reader, if any
	wg       sync.WaitGroup
}

// scroll moves the table mode's view by a key.
func (l *liveView) scroll(k scrollKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	page := l.fit()
	switch k {
	case keyUp:
		l.top--
	case keyDown:
		l.top++
	case keyPageUp:
		l.top -= page
	case keyPageDown:
		l.top += page
	case keyHome:
		l.top = 0
	case keyEnd:
		l.top = l.table.Len()
	}
	l.clampTop()
	l.dirty = true
}

// fit is how many rows of the table the screen shows.
func (l *liveView) fit() int {
	_, height := l.views.size()
	return max(height-6, 1)
}

// clampTop keeps the view on the table: at most its last page scrolled past.
func (l *liveView) clampTop() {
	l.top = max(0, min(l.top, l.table.Len()-l.fit()))
}

func (l *liveView) Apply(changes []streamsql.Change) {
	if len(changes) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, height := l.views.size()
	keep := max(height-6, 1)
	for _, c := range changes {
		if l.changelog {
			l.recent = append(l.recent, streamsql.Change{Kind: c.Kind, Row: c.Row})
			if len(l.recent) > 2*keep {
				l.recent = append(l.recent[:0], l.recent[len(l.recent)-keep:]...)
			}
		} else {
			l.table.Apply(c.Kind, c.Row)
		}
	}
	l.changes += int64(len(changes))
	l.last = l.views.now()
	l.dirty = true
}

// loop redraws the view when it changed, at most every redrawEvery, until End.
func (l *liveView) loop() {
	tick := time.NewTicker(redrawEvery)
	defer tick.Stop()
	l.mu.Lock()
	l.draw(false)
	l.mu.Unlock()
	for {
		select {
		case <-l.done:
			return
		case <-tick.C:
			l.mu.Lock()
			if l.dirty {
				l.draw(false)
			}
			l.mu.Unlock()
		}
	}
}

func (l *liveView) End() {
	close(l.done)
	if l.stopKeys != nil {
		l.stopKeys()
	}
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.draw(true)
}

// draw redraws the region in place: up to its first line, erase to the end of the
// screen, then the new lines, each cut to the screen's width.
func (l *liveView) draw(final bool) {
	l.dirty = false
	width, height := l.views.size()
	var lines []string
	status := ""
	if l.changelog {
		keep := max(height-6, 1)
		recent := l.recent[max(len(l.recent)-keep, 0):]
		rows := make([][]string, len(recent))
		for i, c := range recent {
			rows[i] = append([]string{c.Kind.String()}, c.Row...)
		}
		lines = boxed(append([]string{"op"}, l.spec.Columns...), rows)
		status = fmt.Sprintf("%d changes", l.changes)
	} else {
		fit := l.fit()
		l.clampTop() // rows may have gone since the last scroll
		lines = boxed(l.spec.Columns, l.table.Window(l.top, fit))
		status = fmt.Sprintf("%d rows", l.table.Len())
		if n := l.table.Len(); n > fit {
			status += fmt.Sprintf(" (%d to %d shown; arrows, Page Up/Down, Home, End scroll)", l.top+1, min(l.top+fit, n))
		}
		if l.dropped {
			status += ", the oldest dropped"
		}
	}
	if !l.last.IsZero() {
		status += ", last change " + l.last.Format("15:04:05.000")
	}
	if final {
		status += "; the query ended."
	} else {
		status += "; Ctrl-C ends the query."
	}
	lines = append(lines, status)
	var b strings.Builder
	if l.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", l.drawn)
	}
	b.WriteString("\r\x1b[J")
	for _, line := range lines {
		b.WriteString(cut(line, width-1))
		b.WriteString("\r\n")
	}
	io.WriteString(l.views.out, b.String())
	l.drawn = len(lines)
}

// boxed lays rows out as a table with a box around it, cells cut to maxCellWidth.
func boxed(header []string, rows [][]string) []string {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range rows {
		for i := 0; i < len(r) && i < len(widths); i++ {
			widths[i] = max(widths[i], min(utf8.RuneCountInString(r[i]), maxCellWidth))
		}
	}
	sep := separator(widths)
	lines := []string{sep, rowLine(widths, header), sep}
	for _, r := range rows {
		lines = append(lines, rowLine(widths, r))
	}
	return append(lines, sep)
}

func separator(widths []int) string {
	var b strings.Builder
	b.WriteByte('+')
	for _, w := range widths {
		b.WriteString(strings.Repeat("-", w+2))
		b.WriteByte('+')
	}
	return b.String()
}

// rowLine is one row of a table, cells right-aligned as in Flink's SQL client.
func rowLine(widths []int, cells []string) string {
	var b strings.Builder
	b.WriteByte('|')
	for i, w := range widths {
		c := ""
		if i < len(cells) {
			c = cut(cells[i], w)
		}
		b.WriteByte(' ')
		b.WriteString(strings.Repeat(" ", w-utf8.RuneCountInString(c)))
		b.WriteString(c)
		b.WriteString(" |")
	}
	return b.String()
}

// cut shortens s to n runes, ending it with "..." when it was longer.
func cut(s string, n int) string {
	if n < 1 || utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	if n <= 3 {
		return string(r[:n])
	}
	return string(r[:n-3]) + "..."
}

// tableau is Flink's tableau mode: each change is printed as it arrives, under a
// header, with its row kind in the first column; the end prints the count.
type tableau struct {
	out    io.Writer
	widths []int
	mu     sync.Mutex
	rows   int64
}

func newTableau(out io.Writer, columns []string, size func() (int, int)) *tableau {
	t := &tableau{out: out, widths: []int{2}}
	for _, c := range columns {
		t.widths = append(t.widths, max(utf8.RuneCountInString(c), 12))
	}
	// Widen nothing past the screen: cells are cut instead.
	if width, _ := size(); width > 0 {
		for total := 0; ; {
			total = 1
			for _, w := range t.widths {
				total += w + 3
			}
			if total <= width || len(t.widths) < 2 {
				break
			}
			widest := 1
			for i, w := range t.widths {
				if w > t.widths[widest] && i > 0 {
					widest = i
				}
			}
			if t.widths[widest] <= 4 {
				break
			}
			t.widths[widest]--
		}
	}
	sep := separator(t.widths)
	fmt.Fprintf(out, "%s\r\n%s\r\n%s\r\n", sep, rowLine(t.widths, append([]string{"op"}, columns...)), sep)
	return t
}

func (t *tableau) Apply(changes []streamsql.Change) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	for _, c := range changes {
		b.WriteString(rowLine(t.widths, append([]string{c.Kind.String()}, c.Row...)))
		b.WriteString("\r\n")
	}
	t.rows += int64(len(changes))
	io.WriteString(t.out, b.String())
}

func (t *tableau) End() {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.out, "%s\r\nReceived a total of %d rows\r\n", separator(t.widths), t.rows)
}
