package tests

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// mrEvent is one row of the differential MATCH_RECOGNIZE test: a key, a label and a
// value at a time (ms).
type mrEvent struct {
	k, e      string
	v, ts, id int64
}

// mrElem is one element of a random pattern: a variable with a quantifier.
type mrElem struct {
	min, max  int // max -1: no bound
	reluctant bool
	cond      int    // which condition of mrConds the variable has
	label     string // the label conditions 0 and 1 compare with
}

// mrConds are the DEFINE conditions of the random patterns, as SQL for variable X (with
// the first variable A) and as the oracle computes them. Each also refuses the label
// z of the rows that end every key's data, so that no partial match outlives the input.
var mrConds = []string{
	"X.e = 'LBL'",
	"X.e <> 'LBL'",
	"(LAST(X.v, 1) IS NULL OR X.v > LAST(X.v, 1))",
	"SUM(X.v) < 25",
	"X.v >= A.v",
	"X.v > PREV(X.v)",
	"COUNT(X.v) <= 2 AND X.e <> 'LBL'",
}

// mrMatcher is the oracle: a backtracking search, written for this test, over the label
// assignments of each start row of a partition, by Flink's rules as the Pattern
// Recognition page states them: a greedy quantifier that accepts the next row takes it
// (the pattern goes on after it only at a row it refuses), a reluctant one tries to stop
// first; each start row's match is the one that ends first (the most preferred among
// those that end at the same row); starts are tried in time order, and after a match
// the next start is where AFTER MATCH says.
type mrMatcher struct {
	elems  []mrElem
	skip   string // PAST, NEXT, FIRST or LAST
	skipTo int    // the element of FIRST and LAST
	within int64  // ms, 0 for none
	// ties: rows share times, and the query orders those by id (descending with desc)
	// and measures the first and last row's id.
	ties, desc bool
}

// mrMatch is one match: its first row and the element of each of its rows.
type mrMatch struct {
	start  int
	labels []int
}

func (m *mrMatcher) holds(rows []mrEvent, start int, labels []int, r, x int) bool {
	el := m.elems[x]
	cur := rows[r]
	if cur.e == "z" {
		return false
	}
	// mine lists the values of x's rows in the match, the current one last.
	var mine []int64
	for i, l := range labels {
		if l == x {
			mine = append(mine, rows[start+i].v)
		}
	}
	mine = append(mine, cur.v)
	switch el.cond {
	case 0:
		return cur.e == el.label
	case 1:
		return cur.e != el.label
	case 2:
		return len(mine) < 2 || cur.v > mine[len(mine)-2]
	case 3:
		var s int64
		for _, v := range mine {
			s += v
		}
		return s < 25
	case 4:
		if x == 0 {
			return true // A.v is the current row's own value
		}
		for i := len(labels) - 1; i >= 0; i-- {
			if labels[i] == 0 {
				return cur.v >= rows[start+i].v
			}
		}
		return false // NULL: no row of A
	case 5:
		return len(labels) > 0 && cur.v > rows[start+len(labels)-1].v
	case 6:
		return len(mine) <= 2 && cur.e != el.label
	}
	panic("unknown condition")
}

// search explores, from row r in element x after c of its rows, every way the match
// that started at start may go on, calling found for each completed one, in order of
// preference.
func (m *mrMatcher) search(rows []mrEvent, start, r, x, c int, labels []int, found func([]int)) {
	if x == len(m.elems) {
		found(append([]int(nil), labels...))
		return
	}
	el := m.elems[x]
	canTake := r < len(rows) && (el.max < 0 || c < el.max) &&
		(m.within == 0 || rows[r].ts-rows[start].ts <= m.within) &&
		m.holds(rows, start, labels, r, x)
	take := func() {
		if canTake {
			m.search(rows, start, r+1, x, c+1, append(labels, x), found)
		}
	}
	canStop := c >= el.min
	if !canStop {
		take()
		return
	}
	switch {
	case el.max == c:
		m.search(rows, start, r, x+1, 0, labels, found)
	case el.reluctant:
		m.search(rows, start, r, x+1, 0, labels, found)
		take()
	case canTake:
		take() // greedy: a row the variable accepts is not left to what follows
	default:
		m.search(rows, start, r, x+1, 0, labels, found)
	}
}

// matches returns the matches of one partition's rows, in time order.
func (m *mrMatcher) matches(rows []mrEvent) []mrMatch {
	var out []mrMatch
	for s := 0; s < len(rows); {
		var best []int
		m.search(rows, s, s, 0, 0, nil, func(labels []int) {
			if best == nil || len(labels) < len(best) {
				best = labels
			}
		})
		if best == nil {
			s++
			continue
		}
		out = append(out, mrMatch{start: s, labels: best})
		switch m.skip {
		case "PAST":
			s += len(best)
		case "NEXT":
			s++
		default:
			at := -1
			for i, l := range best {
				if l == m.skipTo && (at < 0 || m.skip == "LAST") {
					at = i
				}
			}
			s += at
		}
	}
	return out
}

// sql is the query the matcher stands for.
func (m *mrMatcher) sql() string {
	names := "ABCD"
	var pat, def, meas []string
	for i, el := range m.elems {
		q := ""
		switch {
		case el.min == 1 && el.max == 1:
		case el.min == 0 && el.max == 1:
			q = "?"
		case el.min == 0 && el.max < 0:
			q = "*"
		case el.min == 1 && el.max < 0:
			q = "+"
		case el.max < 0:
			q = fmt.Sprintf("{%d,}", el.min)
		case el.min == el.max:
			q = fmt.Sprintf("{%d}", el.min)
		default:
			q = fmt.Sprintf("{%d,%d}", el.min, el.max)
		}
		if el.reluctant {
			q += "?"
		}
		v := names[i : i+1]
		pat = append(pat, v+q)
		c := strings.ReplaceAll(strings.ReplaceAll(mrConds[el.cond], "LBL", el.label), "X.", v+".")
		def = append(def, fmt.Sprintf("%s AS %s AND %s.e <> 'z'", v, c, v))
		meas = append(meas, fmt.Sprintf("COUNT(%s.v) AS c%d", v, i))
	}
	skip := map[string]string{"PAST": "SKIP PAST LAST ROW", "NEXT": "SKIP TO NEXT ROW"}[m.skip]
	if skip == "" {
		skip = fmt.Sprintf("SKIP TO %s %s", m.skip, names[m.skipTo:m.skipTo+1])
	}
	within := ""
	if m.within > 0 {
		within = fmt.Sprintf(" WITHIN INTERVAL '%d' SECOND", m.within/1000)
	}
	order := "ts"
	if m.ties {
		order = "ts, id"
		if m.desc {
			order += " DESC"
		}
		meas = append(meas, "FIRST(id) AS fi", "LAST(id) AS li")
	}
	return fmt.Sprintf("SELECT * FROM e MATCH_RECOGNIZE (PARTITION BY k ORDER BY %s "+
		"MEASURES FIRST(ts) AS s, LAST(ts) AS t, COUNT(*) AS n, SUM(v) AS sv, %s "+
		"AFTER MATCH %s PATTERN (%s)%s DEFINE %s)",
		order, strings.Join(meas, ", "), skip, strings.Join(pat, " "), within, strings.Join(def, ", "))
}

// randomMatcher makes a pattern of two to four elements whose first and last elements
// need a row (Flink refuses patterns that may match no row, and a greedy quantifier
// last), with a random skip strategy and, sometimes, WITHIN.
func randomMatcher(r *rand.Rand) *mrMatcher {
	quants := []mrElem{{min: 1, max: 1}, {min: 0, max: 1}, {min: 0, max: -1}, {min: 1, max: -1},
		{min: 2, max: 2}, {min: 1, max: 3}, {min: 2, max: -1}, {min: 0, max: -1, reluctant: true},
		{min: 1, max: -1, reluctant: true}, {min: 1, max: 3, reluctant: true}}
	last := []mrElem{{min: 1, max: 1}, {min: 2, max: 2}, {min: 1, max: -1, reluctant: true}, {min: 1, max: 2, reluctant: true}}
	n := 2 + r.IntN(3)
	m := &mrMatcher{}
	for i := range n {
		var el mrElem
		switch i {
		case 0:
			el = quants[[]int{0, 3, 5, 8}[r.IntN(4)]]
		case n - 1:
			el = last[r.IntN(len(last))]
		default:
			el = quants[r.IntN(len(quants))]
		}
		el.cond = r.IntN(len(mrConds))
		for i == 0 && el.cond == 5 {
			el.cond = r.IntN(len(mrConds)) // PREV has no row before the first
		}
		el.label = []string{"a", "b", "c"}[r.IntN(3)]
		m.elems = append(m.elems, el)
	}
	m.skip = []string{"PAST", "NEXT", "FIRST", "LAST"}[r.IntN(4)]
	if m.skip == "FIRST" || m.skip == "LAST" {
		var to []int
		for i, el := range m.elems {
			if i > 0 && el.min > 0 {
				to = append(to, i)
			}
		}
		m.skipTo = to[r.IntN(len(to))]
	}
	if r.IntN(3) == 0 {
		m.within = int64(5+r.IntN(25)) * 1000
	}
	return m
}

// TestDifferentialMatchRecognize runs random patterns (quantifiers greedy and reluctant,
// conditions on labels, running sums, logical and physical offsets, the skip
// strategies, WITHIN) over 4000 events of 20 keys shuffled within the watermark's delay,
// at parallelism 1 and 2, and compares the matches with mrMatcher's.
func TestDifferentialMatchRecognize(t *testing.T) {
	t.Parallel() // in-process and independent
	r := rand.New(rand.NewPCG(13, 31))
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	var events []mrEvent
	used := map[int64]bool{}
	for i := range 4000 {
		ts := base + int64(i)*250 - r.Int64N(1500)
		for used[ts] {
			ts++
		}
		used[ts] = true
		events = append(events, mrEvent{k: fmt.Sprint("k", r.IntN(20)), e: []string{"a", "b", "c"}[r.IntN(3)], v: r.Int64N(12), ts: ts, id: int64(i)})
	}
	differentialMatch(t, r, events, 20, false, 20)
}

// TestDifferentialMatchRecognizeTies is TestDifferentialMatchRecognize over times in
// whole seconds, so that a key's rows often share one: the queries order them by
// ORDER BY ts, id (or id DESC), and the oracle sorts them so. Rows arrive up to 900 ms
// out of order (within the watermark's delay), and ids are random but for their last
// digits, so neither the order of arrival nor the time orders them.
func TestDifferentialMatchRecognizeTies(t *testing.T) {
	t.Parallel() // in-process and independent
	r := rand.New(rand.NewPCG(17, 3))
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	var events []mrEvent
	for i := range 3000 {
		ts := base + int64(i)*250 - r.Int64N(900)
		events = append(events, mrEvent{k: fmt.Sprint("k", r.IntN(3)), e: []string{"a", "b", "c"}[r.IntN(3)], v: r.Int64N(12),
			ts: ts - ts%1000, id: int64(r.IntN(1_000_000))*10_000 + int64(i)})
	}
	ties := 0
	last := map[string]int64{}
	for _, e := range events {
		if t, ok := last[e.k]; ok && t == e.ts {
			ties++
		}
		last[e.k] = e.ts
	}
	if ties < 500 {
		t.Fatalf("only %d rows share their key's time with the one before", ties)
	}
	differentialMatch(t, r, events, 3, true, 12)
}

// differentialMatch adds a row labelled z at the end of each of keys keys, then runs
// queries random patterns over events and compares them with mrMatcher's matches.
func differentialMatch(t *testing.T, r *rand.Rand, events []mrEvent, keys int, ties bool, queries int) {
	var end int64
	for _, e := range events {
		end = max(end, e.ts)
	}
	end += 3_600_000
	for i := range keys {
		events = append(events, mrEvent{k: fmt.Sprint("k", i), e: "z", v: 0, ts: end + int64(i), id: -1})
	}
	var lines bytes.Buffer
	for _, e := range events {
		fmt.Fprintf(&lines, `{"k":%q,"e":%q,"v":%d,"ts":%q,"id":%d}`+"\n", e.k, e.e, e.v, time.UnixMilli(e.ts).UTC().Format("2006-01-02 15:04:05.000"), e.id)
	}
	path := filepath.Join(t.TempDir(), "events.json")
	if err := os.WriteFile(path, lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	parts := map[string][]mrEvent{}
	for _, e := range events {
		parts[e.k] = append(parts[e.k], e)
	}
	fmtTS := func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000") }
	total := 0
	for q := range queries {
		m := randomMatcher(r)
		m.ties, m.desc = ties, ties && q%2 == 1
		for _, rows := range parts {
			sort.SliceStable(rows, func(i, j int) bool {
				a, b := rows[i], rows[j]
				if a.ts != b.ts || !ties {
					return a.ts < b.ts
				}
				return a.id < b.id != m.desc
			})
		}
		var want result
		for k, rows := range parts {
			for _, mt := range m.matches(rows) {
				first, last := rows[mt.start], rows[mt.start+len(mt.labels)-1]
				row := map[string]any{"k": k, "s": fmtTS(first.ts), "t": fmtTS(last.ts), "n": float64(len(mt.labels))}
				if ties {
					row["fi"], row["li"] = float64(first.id), float64(last.id)
				}
				var sv int64
				counts := make([]float64, len(m.elems))
				for i, l := range mt.labels {
					sv += rows[mt.start+i].v
					counts[l]++
				}
				row["sv"] = float64(sv)
				for i, c := range counts {
					row[fmt.Sprintf("c%d", i)] = c
				}
				want = append(want, row)
			}
		}
		total += len(want)
		query := m.sql()
		t.Logf("pattern %d: %d matches: %s", q, len(want), query)
		for _, parallelism := range []int{1, 2} {
			t.Run(fmt.Sprintf("pattern %d, parallelism %d", q, parallelism), func(t *testing.T) {
				ddl := fmt.Sprintf(`SET 'parallelism.default' = '%d';
					CREATE TABLE e (k STRING, e STRING, v BIGINT, ts TIMESTAMP(3), id BIGINT, WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
					WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');`, parallelism, path)
				got := runOnTime(t, ddl, query)
				if len(got) != len(want) {
					t.Logf("query: %s", query)
				}
				compareRows(t, got, want)
			})
		}
	}
	if total < 10*queries {
		t.Errorf("the patterns matched %d times in all: too few to tell anything", total)
	}
}
