package nexmark

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/planner"
)

func col(name string, t planner.Type) planner.Column { return planner.Column{Name: name, Type: t} }

var (
	personRow = []planner.Column{col("id", planner.TypeBigInt), col("name", planner.TypeString),
		col("emailAddress", planner.TypeString), col("creditCard", planner.TypeString), col("city", planner.TypeString),
		col("state", planner.TypeString), col("dateTime", planner.TypeTS), col("extra", planner.TypeString)}
	auctionRow = []planner.Column{col("id", planner.TypeBigInt), col("itemName", planner.TypeString),
		col("description", planner.TypeString), col("initialBid", planner.TypeBigInt), col("reserve", planner.TypeBigInt),
		col("dateTime", planner.TypeTS), col("expires", planner.TypeTS), col("seller", planner.TypeBigInt),
		col("category", planner.TypeBigInt), col("extra", planner.TypeString)}
	bidRow = []planner.Column{col("auction", planner.TypeBigInt), col("bidder", planner.TypeBigInt),
		col("price", planner.TypeBigInt), col("channel", planner.TypeString), col("url", planner.TypeString),
		col("dateTime", planner.TypeTS), col("extra", planner.TypeString)}
	eventsSchema = []planner.Column{col("event_type", planner.TypeInt), col("person", planner.RowType(personRow)),
		col("auction", planner.RowType(auctionRow)), col("bid", planner.RowType(bidRow))}
)

func table(schema []planner.Column, opts map[string]string) *planner.Table {
	t := &planner.Table{Name: "datagen", Options: map[string]string{"connector": "nexmark"}}
	for k, v := range opts {
		t.Options[k] = v
	}
	for _, c := range schema {
		t.Columns = append(t.Columns, planner.TableColumn{Name: c.Name, Type: c.Type})
	}
	return t
}

func checkedMem(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

func openTask(t *testing.T, mem memory.Allocator, tbl *planner.Table, task, tasks, batch int) *Reader {
	t.Helper()
	r, err := Open(connector.SourceSpec{Table: tbl, Mem: mem, Task: task, Tasks: tasks, BatchSize: batch})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// read returns the rows of at most batches batches (all when batches < 0), one string
// each, and whether the reader reached its end.
func read(t *testing.T, r *Reader, batches int) (rows []string, eof bool) {
	t.Helper()
	for n := 0; batches < 0 || n < batches; n++ {
		b, err := r.Next(context.Background())
		if err == io.EOF {
			return rows, true
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.Rec == nil {
			continue
		}
		for i := 0; i < int(b.Rec.NumRows()); i++ {
			var sb strings.Builder
			for _, c := range b.Rec.Columns() {
				sb.WriteString(c.ValueStr(i))
				sb.WriteByte('|')
			}
			rows = append(rows, sb.String())
		}
		b.Rec.Release()
	}
	return rows, false
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// render prints an event's fields of its type (the others keep stale values).
func render(e *event) string {
	head := fmt.Sprintf("%d %d %d ", e.id, e.kind, e.time)
	switch e.kind {
	case Person:
		return head + fmt.Sprintf("%d %q %q %q %q %q %q", e.personID, e.name, e.email, e.card, e.city, e.state, e.extra)
	case Auction:
		return head + fmt.Sprintf("%d %q %q %d %d %d %d %d %q", e.auctionID, e.itemName, e.description,
			e.initialBid, e.reserve, e.expires, e.seller, e.category, e.extra)
	}
	return head + fmt.Sprintf("%d %d %d %q %q %q", e.auction, e.bidder, e.price, e.channel, e.url, e.extra)
}

func defaultConfig(t *testing.T) config {
	o, err := parseOptions(table(eventsSchema, nil))
	if err != nil {
		t.Fatal(err)
	}
	return o.cfg
}

// An event depends on its id only: not on the order of generation or what came before.
func TestEventIsAFunctionOfItsID(t *testing.T) {
	cfg := defaultConfig(t)
	a, b := newGenerator(cfg), newGenerator(cfg)
	var ea, eb event
	const n = 5000
	forward := make([]string, n)
	for id := 0; id < n; id++ {
		a.generate(int64(id), &ea)
		forward[id] = render(&ea)
	}
	for id := n - 1; id >= 0; id -= 7 { // backwards, skipping, another generator
		b.generate(int64(id), &eb)
		if got := render(&eb); got != forward[id] {
			t.Fatalf("event %d:\n%s\n%s", id, got, forward[id])
		}
	}
	// A few fixed events pin the generator down across runs and versions.
	b.generate(0, &eb)
	if eb.kind != Person || eb.personID != 1000 || eb.time != defaultBaseTime.UnixMilli() {
		t.Errorf("event 0: %s", render(&eb))
	}
	b.generate(51, &eb)
	if eb.kind != Auction || eb.auctionID != 1003 {
		t.Errorf("event 51: %s", render(&eb))
	}
}

// The same events whatever the batch size, the number of tasks and the task.
func TestTasksReadDisjointEventsInOrder(t *testing.T) {
	mem := checkedMem(t)
	tbl := table(eventsSchema, map[string]string{"events.num": "3001"})
	one := openTask(t, mem, tbl, 0, 1, 1024)
	all, eof := read(t, one, -1)
	one.Close()
	if !eof || len(all) != 3001 {
		t.Fatalf("%d rows, eof %v", len(all), eof)
	}
	small := openTask(t, mem, tbl, 0, 1, 7)
	again, _ := read(t, small, -1)
	small.Close()
	if !slices.Equal(all, again) {
		t.Fatal("another batch size gave other rows")
	}
	var union []string
	for task := 0; task < 3; task++ {
		r := openTask(t, mem, tbl, task, 3, 100)
		rows, _ := read(t, r, -1)
		r.Close()
		// Task k has the events k, k+3, ...: the single task's rows at those places.
		for i, row := range rows {
			if row != all[task+3*i] {
				t.Fatalf("task %d row %d:\n%s\n%s", task, i, row, all[task+3*i])
			}
		}
		union = append(union, rows...)
	}
	if !slices.Equal(sorted(union), sorted(all)) {
		t.Fatal("three tasks did not read the events of one")
	}
}

// A plain table has the rows of one type, the same values as the events table's.
func TestPlainTables(t *testing.T) {
	mem := checkedMem(t)
	bids := openTask(t, mem, table(bidRow, map[string]string{"events.num": "1000", "table": "bid"}), 0, 1, 64)
	rows, _ := read(t, bids, -1)
	bids.Close()
	if len(rows) != 20*46 {
		t.Fatalf("%d bids in 1000 events, want %d", len(rows), 20*46)
	}
	g := newGenerator(defaultConfig(t))
	var e event
	g.generate(4, &e) // the first bid
	if want := fmt.Sprintf("%d|%d|%d|%s|%s|", e.auction, e.bidder, e.price, e.channel, e.url); !strings.HasPrefix(rows[0], want) {
		t.Errorf("first bid %s, want %s...", rows[0], want)
	}
	// A subset of the fields, in another order, of another type.
	p := openTask(t, mem, table([]planner.Column{col("state", planner.TypeString), col("id", planner.TypeBigInt)},
		map[string]string{"events.num": "500", "table": "person"}), 0, 1, 1024)
	rows, _ = read(t, p, -1)
	p.Close()
	if len(rows) != 10 || rows[3] != fmt.Sprintf("%s|1003|", mustPerson(g, 150).state) {
		t.Errorf("persons: %q", rows)
	}
}

func mustPerson(g *generator, id int64) event {
	var e event
	g.generate(id, &e)
	return e
}

// A restored reader produces exactly the rows that followed its snapshot, and a
// snapshot of other options or another task is refused.
func TestSnapshotRestoreReplays(t *testing.T) {
	mem := checkedMem(t)
	tbl := table(eventsSchema, map[string]string{"events.num": "5000", "first-event.rate": "1000"})
	for _, tasks := range []int{1, 2} {
		for task := 0; task < tasks; task++ {
			r := openTask(t, mem, tbl, task, tasks, 128)
			read(t, r, 5)
			snap, err := r.Snapshot(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			rest, _ := read(t, r, -1)
			r.Close()
			restored := openTask(t, mem, tbl, task, tasks, 100) // other batches, same rows
			if err := restored.Restore(snap); err != nil {
				t.Fatal(err)
			}
			replay, eof := read(t, restored, -1)
			restored.Close()
			if !eof || !slices.Equal(rest, replay) || len(rest) != 5000/tasks-5*128 {
				t.Fatalf("task %d of %d: %d rows after the snapshot, %d replayed", task, tasks, len(rest), len(replay))
			}
			other := openTask(t, mem, table(eventsSchema, map[string]string{"events.num": "5000"}), task, tasks, 128)
			if err := other.Restore(snap); !errors.Is(err, connector.ErrInvalidState) || !strings.Contains(err.Error(), "other generator options") {
				t.Errorf("restored into another rate: %v", err)
			}
			other.Close()
			wrong := openTask(t, mem, tbl, (task+1)%tasks, tasks, 128)
			if err := wrong.Restore(snap); tasks > 1 && !errors.Is(err, connector.ErrInvalidState) {
				t.Errorf("restored into another task: %v", err)
			}
			wrong.Close()
		}
	}
	r := openTask(t, mem, tbl, 0, 1, 128)
	defer r.Close()
	for _, bad := range []string{"", "{", `{"version":1,"connector":"nexmark","table":"datagen","task":0,"tasks":1,"options":"5000/1000/1:3:46/1436918400000","lanes":[{"next":0,"step":0,"end":5000}]}`} {
		if err := r.Restore([]byte(bad)); !errors.Is(err, connector.ErrInvalidState) {
			t.Errorf("restore %q: %v", bad, err)
		}
	}
}

// Positions move to another number of tasks: every event is still read once, and each
// task reads its events in event-time order.
func TestRescale(t *testing.T) {
	mem := checkedMem(t)
	tbl := table(eventsSchema, map[string]string{"events.num": "4000"})
	full, _ := read(t, openAndClose(t, mem, tbl), -1)
	for _, to := range []int{1, 3, 5} {
		var seen []string
		var states [][]byte
		for task := 0; task < 2; task++ {
			r := openTask(t, mem, tbl, task, 2, 100)
			rows, _ := read(t, r, 3+task)
			seen = append(seen, rows...)
			s, err := r.Snapshot(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			states = append(states, s)
			r.Close()
		}
		moved, err := rescale(tbl, states, to)
		if err != nil {
			t.Fatal(err)
		}
		for task, s := range moved {
			r := openTask(t, mem, tbl, task, to, 64)
			if err := r.Restore(s); err != nil {
				t.Fatal(err)
			}
			rows, _ := read(t, r, -1)
			r.Close()
			if !slices.IsSortedFunc(rows, func(a, b string) int { return strings.Compare(dateTime(a), dateTime(b)) }) {
				t.Errorf("to %d: task %d is out of event-time order", to, task)
			}
			seen = append(seen, rows...)
		}
		if !slices.Equal(sorted(seen), sorted(full)) {
			t.Errorf("to %d tasks: %d rows, want the %d of one run", to, len(seen), len(full))
		}
	}
}

// openAndClose returns a single-task reader whose Close is left to the test's end.
func openAndClose(t *testing.T, mem memory.Allocator, tbl *planner.Table) *Reader {
	r := openTask(t, mem, tbl, 0, 1, 1024)
	t.Cleanup(func() { r.Close() })
	return r
}

var timeRE = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?`)

// dateTime is the first timestamp of a rendered events row: the event's dateTime.
func dateTime(row string) string { return timeRE.FindString(row) }

// The proportions, id ranges and hot keys of NEXMARK.md.
func TestDistributions(t *testing.T) {
	n := int64(1_000_000)
	if testing.Short() {
		n = 100_000
	}
	cfg := defaultConfig(t)
	g := newGenerator(cfg)
	var e event
	var kinds [3]int64
	var hotSeller, hotAuction, hotBidder, hotChannel, withID, other int64
	var sizes [3]int64
	categories := map[int64]int64{}
	lastTime := int64(math.MinInt64)
	cardRE := regexp.MustCompile(`^\d{4} \d{4} \d{4} \d{4}$`)
	for id := int64(0); id < n; id++ {
		g.generate(id, &e)
		kinds[e.kind]++
		if e.time < lastTime || e.time != defaultBaseTime.UnixMilli()+id*100/1000 {
			t.Fatalf("event %d at %d", id, e.time)
		}
		lastTime = e.time
		lastP := cfg.lastPerson(id)
		switch e.kind {
		case Person:
			if e.personID != 1000+id/50 {
				t.Fatalf("person %d has id %d", id, e.personID)
			}
			if len(e.state) != 2 || e.state[0] < 'A' || e.state[0] > 'Z' || !cardRE.Match(e.card) || !strings.Contains(string(e.name), " ") {
				t.Fatalf("person %s", render(&e))
			}
			sizes[Person] += int64(8 + len(e.name) + len(e.email) + len(e.card) + len(e.city) + len(e.state) + len(e.extra))
		case Auction:
			if want := 1000 + id/50*3 + id%50 - 1; e.auctionID != want {
				t.Fatalf("auction %d has id %d, want %d", id, e.auctionID, want)
			}
			if e.seller == 1000+lastP/100*100 {
				hotSeller++
			}
			if e.seller < 1000+max(lastP+1-1000, 0) || e.seller > 1000+lastP+10 {
				t.Fatalf("auction %d: seller %d, last person %d", id, e.seller, lastP)
			}
			categories[e.category]++
			if e.expires <= e.time || e.reserve < e.initialBid || e.initialBid < 100 || e.initialBid > 1e8 {
				t.Fatalf("auction %s", render(&e))
			}
			sizes[Auction] += int64(8 + len(e.itemName) + len(e.description) + 40 + len(e.extra))
		case Bid:
			lastA := cfg.lastAuction(id)
			if e.auction == 1000+lastA/100*100 {
				hotAuction++
			}
			if e.auction < 1000+max(lastA-100, 0) || e.auction > 1000+lastA+10 {
				t.Fatalf("bid %d: auction %d, last auction %d", id, e.auction, lastA)
			}
			if e.bidder == 1000+lastP/100*100+1 {
				hotBidder++
			}
			if e.bidder < 1000+max(lastP+1-1000, 0) || e.bidder > 1000+lastP+10 {
				t.Fatalf("bid %d: bidder %d, last person %d", id, e.bidder, lastP)
			}
			if e.price < 100 || e.price > 1e8 {
				t.Fatalf("bid price %d", e.price)
			}
			if slices.ContainsFunc(hotChannels, func(c []byte) bool { return string(c) == string(e.channel) }) {
				hotChannel++
			} else {
				other++
				if strings.Contains(string(e.url), "&channel_id=") {
					withID++
				}
			}
			sizes[Bid] += int64(32 + len(e.extra))
		}
	}
	if kinds[Person]*50 != n || kinds[Auction]*50 != 3*n || kinds[Bid]*50 != 46*n {
		t.Errorf("kinds %v in %d events, want 1:3:46", kinds, n)
	}
	near := func(what string, got, of int64, want, tol float64) {
		if f := float64(got) / float64(of); math.Abs(f-want) > tol {
			t.Errorf("%s: %.4f, want %.4f ± %.4f", what, f, want, tol)
		}
	}
	// A non-hot draw may hit the hot key too, so hot shares sit a little above.
	near("hot sellers", hotSeller, kinds[Auction], 0.75, 0.01)
	near("hot auctions", hotAuction, kinds[Bid], 0.50, 0.01)
	near("hot bidders", hotBidder, kinds[Bid], 0.75, 0.01)
	near("hot channels", hotChannel, kinds[Bid], 0.50, 0.01)
	near("channel ids in URLs", withID, other, 0.90, 0.01)
	for c := int64(10); c < 15; c++ {
		near(fmt.Sprintf("category %d", c), categories[c], kinds[Auction], 0.2, 0.01)
	}
	if len(categories) != 5 {
		t.Errorf("categories %v", categories)
	}
	near("person size", sizes[Person]/kinds[Person], 200, 1, 0.05)
	near("auction size", sizes[Auction]/kinds[Auction], 500, 1, 0.05)
	near("bid size", sizes[Bid]/kinds[Bid], 100, 1, 0.05)
}

// Prices are log-uniform from 100 to 10^8 cents: each decade holds a sixth.
func TestPriceIsLogUniform(t *testing.T) {
	var decades [7]int
	const n = 60000
	for i := uint64(0); i < n; i++ {
		r := newRNG(i)
		p := price(&r)
		decades[min(int(math.Log10(float64(p)))-2, 6)]++
	}
	for d := 0; d < 6; d++ {
		if f := float64(decades[d]) / n; math.Abs(f-1.0/6) > 0.01 {
			t.Errorf("decade %d: %.3f", d, f)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	cases := []struct {
		schema []planner.Column
		opts   map[string]string
		want   string
	}{
		{eventsSchema, map[string]string{"events.num": "-1"}, "option 'events.num' must be an integer"},
		{eventsSchema, map[string]string{"events.nm": "1"}, "unsupported option 'events.nm' for connector 'nexmark' (did you mean 'events.num'?)"},
		{eventsSchema, map[string]string{"first-event.rate": "0"}, "option 'first-event.rate' must be an integer from 1"},
		{eventsSchema, map[string]string{"next-event.rate": "5"}, "option 'next-event.rate' (5) must equal 'first-event.rate' (10000)"},
		{eventsSchema, map[string]string{"person.proportion": "0"}, "option 'person.proportion' must be at least 1"},
		{eventsSchema, map[string]string{"auction.proportion": "0"}, "option 'auction.proportion' must be at least 1"},
		{eventsSchema, map[string]string{"base-time": "yesterday"}, "option 'base-time' must be a time"},
		{eventsSchema, map[string]string{"table": "bids"}, "option 'table' must be 'events', 'person', 'auction' or 'bid', got \"bids\""},
		{personRow, nil, "nexmark events table has no column id"},
		{[]planner.Column{col("event_type", planner.TypeString)}, nil, "nexmark column event_type must be of type INT"},
		{[]planner.Column{col("bid", planner.RowType([]planner.Column{col("price", planner.TypeString)}))}, nil, "nexmark bid field price must be of type BIGINT, not STRING"},
		{[]planner.Column{col("bid", planner.RowType([]planner.Column{col("cost", planner.TypeBigInt)}))}, nil, "a nexmark bid has no field cost"},
		{personRow, map[string]string{"table": "bid"}, "a nexmark bid has no field id"},
	}
	for _, c := range cases {
		_, err := Open(connector.SourceSpec{Table: table(c.schema, c.opts)})
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, connector.ErrInvalidOption) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: got %v, want %q", c.opts, err, c.want)
		}
	}
	for _, ok := range []string{"2015-07-15 00:00:00", "2015-07-15 00:00:00.000", "1436918400000", "2015-07-15"} {
		o, err := parseOptions(table(eventsSchema, map[string]string{"base-time": ok}))
		if err != nil || o.cfg.baseTime != 1436918400000 {
			t.Errorf("base-time %q: %v %d", ok, err, o.cfg.baseTime)
		}
	}
}

// The rows of an events table carry the event_type and exactly one non-null ROW.
func TestEventsRows(t *testing.T) {
	mem := checkedMem(t)
	r := openTask(t, mem, table(eventsSchema, map[string]string{"events.num": "100"}), 0, 1, 1024)
	defer r.Close()
	b, err := r.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Rec.Release()
	types := b.Rec.Column(0).(*array.Int32).Int32Values()
	for i, ty := range types {
		for k := 0; k < 3; k++ {
			if null := b.Rec.Column(1 + k).IsNull(i); null == (int(ty) == k) {
				t.Fatalf("row %d of type %d: %s null %v", i, ty, typeNames[k], null)
			}
		}
	}
	if got := b.Rec.Schema().Field(3).Type.(*arrow.StructType).Field(5).Type; got.ID() != arrow.TIMESTAMP {
		t.Errorf("bid.dateTime is %s", got)
	}
	if _, err := r.Next(context.Background()); err != io.EOF {
		t.Errorf("after 100 events: %v", err)
	}
}

// BenchmarkReader measures the generator alone: events into Arrow batches of the
// events table, released at once.
func BenchmarkReader(b *testing.B) {
	exec.Unpoisoned(b)
	for _, shape := range []string{"events", "bid"} {
		b.Run(shape, func(b *testing.B) {
			schema := eventsSchema
			if shape == "bid" {
				schema = bidRow
			}
			r, err := Open(connector.SourceSpec{Table: table(schema, map[string]string{"table": shape}), BatchSize: 1024})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			b.ReportAllocs()
			b.ResetTimer()
			events := int64(0)
			for events < int64(b.N) {
				before := r.lanes[0].Next
				batch, err := r.Next(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				if batch.Rec != nil {
					batch.Rec.Release()
				}
				events += r.lanes[0].Next - before
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// pow10 is math.Pow(10, y) bit for bit over the exponents price draws, and the edges.
func TestPow10IsMathPow(t *testing.T) {
	n := uint64(3_000_000)
	if testing.Short() {
		n = 300_000
	}
	check := func(y float64) {
		if got, want := pow10(y), math.Pow(10, y); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("pow10(%v) = %v, math.Pow gives %v", y, got, want)
		}
	}
	for _, y := range []float64{0, 0.5, 1, 1.5, 2, 2.5, 3, 5.5, 5.999999999, math.Nextafter(6, 0), 6,
		math.Nextafter(0.5, 1), math.Nextafter(0.5, 0), math.Nextafter(1, 0), 4.9e-324} {
		check(y)
	}
	for i := uint64(0); i < n; i++ {
		r := newRNG(i)
		check(r.float() * 6)
	}
}

// priceAt is exactPrice for every draw and next to every half cent, where rounding
// turns on the last bits.
func TestPriceAtIsExact(t *testing.T) {
	n := uint64(5_000_000)
	if testing.Short() {
		n = 500_000
	}
	check := func(y float64) {
		if got, want := priceAt(y), exactPrice(y); got != want {
			t.Fatalf("priceAt(%v) = %d, exactPrice gives %d", y, got, want)
		}
	}
	for _, y := range []float64{0, 0.5, 1, 2, 3, 5.5, math.Nextafter(6, 0), 4.9e-324} {
		check(y)
	}
	for i := uint64(0); i < n; i++ {
		r := newRNG(i)
		check(r.float() * 6)
	}
	// The powers of ten just below, at and above the half cents c + 0.5.
	for i := uint64(0); i < n/10; i++ {
		r := newRNG(saltExtra + i)
		c := 100 + float64(r.intn(1e8-100))
		y := math.Log10((c + 0.5) / 100)
		for k, z := 0, y; k < 4; k, z = k+1, math.Nextafter(z, 0) {
			check(z)
		}
		for k, z := 0, y; k < 4; k, z = k+1, math.Nextafter(z, 6) {
			check(z)
		}
	}
}

// Each row's origin names its event: evenly spaced ids (one lane) and skipped ones (a
// plain table of one type).
func TestOriginNamesEachEvent(t *testing.T) {
	mem := checkedMem(t)
	check := func(r *Reader, want func(i int) int64) {
		t.Helper()
		defer r.Close()
		b, err := r.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer b.Rec.Release()
		for i := 0; i < int(b.Rec.NumRows()); i++ {
			if got, w := b.Origin.Row(i), fmt.Sprintf("table datagen, event %d", want(i)); got != w {
				t.Fatalf("row %d: %q, want %q", i, got, w)
			}
		}
	}
	check(openTask(t, mem, table(eventsSchema, map[string]string{"events.num": "5000"}), 1, 2, 500),
		func(i int) int64 { return int64(1 + 2*i) })
	var bids []int64
	for id := int64(0); len(bids) < 500; id++ {
		if id%50 >= 4 {
			bids = append(bids, id)
		}
	}
	check(openTask(t, mem, table(bidRow, map[string]string{"table": "bid", "events.num": "5000"}), 0, 1, 500),
		func(i int) int64 { return bids[i] })
	var persons []int64
	for id := int64(0); len(persons) < 50; id += 50 {
		persons = append(persons, id)
	}
	check(openTask(t, mem, table(personRow, map[string]string{"table": "person", "events.num": "2500"}), 0, 1, 50),
		func(i int) int64 { return persons[i] })
}

// BenchmarkBatch measures one batch of 1024 events of the events table a op, so that
// allocs/op are the allocations of a batch: its Arrow buffers, arrays and record, a
// few dozen, and none per event.
func BenchmarkBatch(b *testing.B) {
	exec.Unpoisoned(b)
	r, err := Open(connector.SourceSpec{Table: table(eventsSchema, nil), BatchSize: 1024})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.ReportAllocs()
	for b.Loop() {
		batch, err := r.Next(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		batch.Rec.Release()
	}
	b.ReportMetric(float64(b.N)*1024/b.Elapsed().Seconds(), "events/s")
}
