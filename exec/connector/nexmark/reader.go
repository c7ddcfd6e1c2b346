package nexmark

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/planner"
)

// Reader is a task of the nexmark source: it generates the events of its lanes in id
// order (so in event-time order) into Arrow builders, a batch at a time.
type Reader struct {
	table  string
	opts   options
	task   int
	tasks  int
	gen    *generator
	ev     event
	schema *arrow.Schema
	cols   []column
	batch  int
	lanes  []lane
	mem    *exec.BufferPool // the batches' buffers, every byte of which it writes
	closed bool
}

var (
	_ exec.Reader      = (*Reader)(nil)
	_ exec.Snapshotter = (*Reader)(nil)
	_ exec.Restorer    = (*Reader)(nil)
)

var errClosed = errors.New("nexmark: reader is closed")

func open(_ context.Context, spec connector.SourceSpec) (exec.Reader, error) {
	return Open(spec)
}

// Open opens task spec.Task of spec.Tasks of the nexmark source of spec.Table.
func Open(spec connector.SourceSpec) (*Reader, error) {
	t := spec.Table
	opts, err := parseOptions(t)
	if err != nil {
		return nil, err
	}
	tasks := max(spec.Tasks, 1)
	if spec.Task < 0 || spec.Task >= tasks {
		return nil, connector.TableError(t, connector.ErrInvalidOption, "source task %d of %d does not exist", spec.Task, spec.Tasks)
	}
	schema := t.PhysicalSchema()
	r := &Reader{table: t.Name, opts: opts, task: spec.Task, tasks: tasks, gen: newGenerator(opts.cfg),
		batch: spec.BatchSize, lanes: []lane{{Next: int64(spec.Task), Step: int64(tasks), End: opts.events}}, mem: exec.NewBufferPool(spec.Mem, false)}
	if r.batch <= 0 {
		r.batch = connector.DefaultBatchSize
	}
	for _, c := range schema {
		col, err := newColumn(t, opts.shape, c)
		if err != nil {
			return nil, err
		}
		r.cols = append(r.cols, col)
	}
	r.schema = exec.ArrowSchema(schema)
	for i := range r.cols {
		r.cols[i].bind(r.schema.Field(i).Type)
	}
	for _, name := range spec.Unread {
		col, field, _ := strings.Cut(name, ".")
		for i, c := range schema {
			if strings.EqualFold(c.Name, col) {
				r.cols[i].leaveUnread(c.Type.Fields(), field)
			}
		}
	}
	return r, nil
}

// leaveUnread marks the column unread, or its field of that name (fields are its
// ROW's): the query never reads it, so its rows are placeholders, zeros and empty
// strings, not the events' values (q5 reads two of a bid's seven fields).
func (c *column) leaveUnread(fields []planner.Column, field string) {
	if field == "" {
		c.unread = true
		for k := range c.children {
			c.children[k].unread = true
		}
		return
	}
	for k, f := range fields {
		if k < len(c.children) && strings.EqualFold(f.Name, field) {
			c.children[k].unread = true
		}
	}
}

// maxScan bounds the ids one call to Next looks at, in batches, so that a plain table
// of a rare type still returns to its task now and then.
const maxScan = 64

// Next generates the next batch; see exec.Reader.
func (r *Reader) Next(ctx context.Context) (exec.Batch, error) {
	if r.closed {
		return exec.Batch{}, errClosed
	}
	if err := ctx.Err(); err != nil {
		return exec.Batch{}, err
	}
	for i := range r.cols {
		r.cols[i].reset(r.batch, r.mem)
	}
	rows, scanned := 0, 0
	o := &origin{table: r.table} // the batch's origin
	// One lane (all but a task restored at another parallelism) stays the next until
	// it is done; of several, the next is the one with the smallest id.
	for l := r.nextLane(); l != nil && rows < r.batch && scanned < maxScan*r.batch; {
		id := l.Next
		l.Next += l.Step
		scanned++
		if len(r.lanes) > 1 || l.done() {
			l = r.nextLane()
		}
		if r.opts.shape != shapeEvents && r.gen.cfg.kind(id) != r.opts.shape {
			continue
		}
		r.gen.generate(id, &r.ev)
		for i := range r.cols {
			r.cols[i].append(&r.ev, rows)
		}
		o.add(rows, id, r.batch)
		rows++
	}
	if rows == 0 {
		for i := range r.cols {
			r.cols[i].free(r.mem)
		}
		if r.nextLane() == nil {
			return exec.Batch{}, io.EOF
		}
		return exec.Batch{}, nil
	}
	arrays := make([]arrow.Array, len(r.cols))
	for i := range r.cols {
		data := r.cols[i].data(rows, r.mem)
		arrays[i] = array.MakeFromData(data)
		data.Release()
	}
	rec := array.NewRecord(r.schema, arrays, int64(rows))
	for _, a := range arrays {
		a.Release()
	}
	return exec.Batch{Rec: rec, Origin: o}, nil
}

// origin names each row of a batch by the sequence number of its event: row i is
// event first+i·step while the ids run evenly (one lane, no events skipped, so the
// batch needs no list), else ids[i].
type origin struct {
	table       string
	first, step int64
	ids         []int64
}

// add records id as the batch's row i.
func (o *origin) add(i int, id int64, capacity int) {
	switch {
	case i == 0:
		o.first = id
	case i == 1:
		o.step = id - o.first
	case o.ids == nil && id == o.first+int64(i)*o.step:
	default:
		if o.ids == nil {
			o.ids = make([]int64, i, max(capacity, i+1))
			for k := range o.ids {
				o.ids[k] = o.first + int64(k)*o.step
			}
		}
		o.ids = append(o.ids, id)
	}
}

func (o *origin) id(i int) int64 {
	if o.ids != nil {
		return o.ids[i]
	}
	return o.first + int64(i)*o.step
}

func (o *origin) Row(i int) string { return fmt.Sprintf("table %s, event %d", o.table, o.id(i)) }

// nextLane is the lane with the smallest next id, or nil when every lane is done.
func (r *Reader) nextLane() *lane {
	var best *lane
	for i := range r.lanes {
		l := &r.lanes[i]
		if l.done() {
			continue
		}
		if best == nil || l.Next < best.Next {
			best = l
		}
	}
	return best
}

// Close ends the reader; batches it returned stay valid.
func (r *Reader) Close() error {
	if !r.closed {
		r.mem.Close()
	}
	r.closed = true
	return nil
}

// Field identifiers of the generator, by event type.
type field int

const (
	fEventType field = iota
	fPersonRow
	fAuctionRow
	fBidRow
	fPersonID
	fName
	fEmail
	fCard
	fCity
	fState
	fAuctionID
	fItemName
	fDescription
	fInitialBid
	fReserve
	fExpires
	fSeller
	fCategory
	fBidAuction
	fBidder
	fPrice
	fChannel
	fURL
	fDateTime
	fExtra
)

// fieldsOf lists the fields of each event type by name, as the suite's DDL names them.
var fieldsOf = [3]map[string]field{
	Person: {"id": fPersonID, "name": fName, "emailaddress": fEmail, "creditcard": fCard, "city": fCity,
		"state": fState, "datetime": fDateTime, "extra": fExtra},
	Auction: {"id": fAuctionID, "itemname": fItemName, "description": fDescription, "initialbid": fInitialBid,
		"reserve": fReserve, "datetime": fDateTime, "expires": fExpires, "seller": fSeller, "category": fCategory,
		"extra": fExtra},
	Bid: {"auction": fBidAuction, "bidder": fBidder, "price": fPrice, "channel": fChannel, "url": fURL,
		"datetime": fDateTime, "extra": fExtra},
}

var typeNames = [3]string{"person", "auction", "bid"}

// fieldNames lists each type's fields for error messages, in the suite's order.
var fieldNames = [3]string{
	Person:  "id, name, emailAddress, creditCard, city, state, dateTime, extra",
	Auction: "id, itemName, description, initialBid, reserve, dateTime, expires, seller, category, extra",
	Bid:     "auction, bidder, price, channel, url, dateTime, extra",
}

func arrowTime(ms int64) arrow.Timestamp { return arrow.Timestamp(ms) }

// column writes one column of the table: a field of the event, or (the events table's)
// a ROW of one type's fields, null for events of other types. A batch's values go into
// slices that become the Arrow buffers as they are, without a builder's per-value
// bookkeeping; each batch gets new slices, since its record outlives the call, taken
// from the reader's pool (but for strings made per event, which persons and auctions
// have, few and short).
//
// A field cut from a fixed text (extra, channel, url) records where each value lies
// and copies the batch's values in one loop when the batch ends: the texts are too
// large for the cache, and copies that follow one another, with nothing between
// them, wait for their memory together rather than one at a time.
type column struct {
	f        field
	kind     int // for a ROW: the event type it holds
	children []column
	typ      arrow.DataType

	ints    []int64 // BIGINT and TIMESTAMP fields
	int32s  []int32 // an INT event_type
	offs    []int32 // STRING fields: value i is bytes[offs[i]:offs[i+1]]
	bytes   []byte
	text    []byte // a field cut from a fixed text: the text, and ...
	spans   []span // ... the batch's values in it, in order
	size    int32  // ... their bytes so far
	valid   []byte // a ROW's validity bitmap, which its fields share
	nulls   int
	pending int  // a ROW's null rows not yet written into its fields (see fill)
	hint    int  // the string bytes of the last batch, for the next one's capacity
	unread  bool // the query never reads it (see leaveUnread)
}

func newColumn(t *planner.Table, shape int, c planner.Column) (column, error) {
	name := strings.ToLower(c.Name)
	bad := func(want string) error {
		return connector.TableError(t, connector.ErrInvalidOption, "nexmark column %s must be of type %s, not %s", c.Name, want, c.Type.Nullable())
	}
	if shape != shapeEvents {
		return newField(t, shape, c)
	}
	switch name {
	case "event_type":
		if c.Type.Kind != planner.Int && c.Type.Kind != planner.BigInt {
			return column{}, bad("INT")
		}
		return column{f: fEventType}, nil
	case "person", "auction", "bid":
		kind := map[string]int{"person": Person, "auction": Auction, "bid": Bid}[name]
		if c.Type.Kind != planner.Row {
			return column{}, bad("ROW<...>")
		}
		col := column{f: fPersonRow + field(kind), kind: kind}
		for _, fc := range c.Type.Fields() {
			child, err := newField(t, kind, fc)
			if err != nil {
				return column{}, err
			}
			col.children = append(col.children, child)
		}
		return col, nil
	}
	return column{}, connector.TableError(t, connector.ErrInvalidOption,
		"nexmark events table has no column %s (columns: event_type, person, auction, bid; option 'table' chooses a plain person, auction or bid table)", c.Name)
}

// newField is a column (or ROW field) holding a field of events of type kind.
func newField(t *planner.Table, kind int, c planner.Column) (column, error) {
	f, ok := fieldsOf[kind][strings.ToLower(c.Name)]
	if !ok {
		return column{}, connector.TableError(t, connector.ErrInvalidOption, "a nexmark %s has no field %s (fields: %s)", typeNames[kind], c.Name, fieldNames[kind])
	}
	want, got := planner.BigInt, c.Type.Kind
	switch f {
	case fName, fEmail, fCard, fCity, fState, fItemName, fDescription, fChannel, fURL, fExtra:
		want = planner.String
	case fDateTime, fExpires:
		want = planner.Timestamp
		if got == planner.TimestampLTZ {
			got = planner.Timestamp // the same epoch millis
		}
	}
	if got != want {
		return column{}, connector.TableError(t, connector.ErrInvalidOption, "nexmark %s field %s must be of type %s, not %s",
			typeNames[kind], c.Name, planner.Type{Kind: want, Precision: 3}, c.Type.Nullable())
	}
	col := column{f: f, kind: kind}
	switch f {
	case fExtra:
		col.text = extraText()
	case fChannel, fURL:
		col.text = channelTable().bytes
	}
	return col, nil
}

// bind records the column's Arrow type, and its fields'.
func (c *column) bind(t arrow.DataType) {
	c.typ = t
	if st, ok := t.(*arrow.StructType); ok {
		for i := range c.children {
			c.children[i].bind(st.Field(i).Type)
		}
	}
}

// reset gives the column new slices for a batch of up to n rows.
func (c *column) reset(n int, mem *exec.BufferPool) {
	switch c.typ.ID() {
	case arrow.INT32:
		c.int32s = arrow.Int32Traits.CastFromBytes(mem.Allocate(n * 4))[:0]
	case arrow.STRING:
		c.offs = append(arrow.Int32Traits.CastFromBytes(mem.Allocate((n + 1) * 4))[:0], 0)
		if c.text != nil {
			c.spans, c.size = c.spans[:0], 0 // the spans stay with the column; the bytes come in data
			break
		}
		c.bytes = make([]byte, 0, c.hint+c.hint/8)
	case arrow.STRUCT:
		c.valid, c.nulls, c.pending = mem.Allocate((n+7)/8), 0, 0
		clear(c.valid)
		for i := range c.children {
			c.children[i].reset(n, mem)
		}
	default:
		c.ints = arrow.Int64Traits.CastFromBytes(mem.Allocate(n * 8))[:0]
	}
}

// free gives the column's slices back unused (a batch of no rows).
func (c *column) free(mem *exec.BufferPool) {
	switch c.typ.ID() {
	case arrow.INT32:
		mem.Free(arrow.Int32Traits.CastToBytes(c.int32s))
	case arrow.STRING:
		mem.Free(arrow.Int32Traits.CastToBytes(c.offs))
	case arrow.STRUCT:
		mem.Free(c.valid)
		for i := range c.children {
			c.children[i].free(mem)
		}
	default:
		mem.Free(arrow.Int64Traits.CastToBytes(c.ints))
	}
	c.int32s, c.offs, c.valid, c.ints = nil, nil, nil, nil
}

// append writes event e as row i.
func (c *column) append(e *event, i int) {
	if c.unread && c.children == nil {
		c.placeholder()
		return
	}
	switch c.f {
	case fEventType:
		if c.int32s != nil {
			c.int32s = append(c.int32s, int32(e.kind))
		} else {
			c.ints = append(c.ints, int64(e.kind))
		}
	case fPersonRow, fAuctionRow, fBidRow:
		if e.kind != c.kind {
			c.nulls++
			c.pending++
			return
		}
		c.fill()
		c.valid[i/8] |= 1 << (i % 8)
		for k := range c.children {
			c.children[k].append(e, i)
		}
	case fDateTime:
		c.ints = append(c.ints, int64(arrowTime(e.time)))
	case fExpires:
		c.ints = append(c.ints, int64(arrowTime(e.expires)))
	case fExtra, fChannel, fURL:
		s := e.span(c.f)
		c.spans = append(c.spans, s)
		c.size += s.n
		c.offs = append(c.offs, c.size)
	default:
		if c.offs != nil {
			c.bytes = append(c.bytes, e.bytes(c.f)...)
			c.offs = append(c.offs, int32(len(c.bytes)))
		} else {
			c.ints = append(c.ints, e.int(c.f))
		}
	}
}

// fill writes the placeholders of the ROW's pending null rows into its fields: the
// rows of the other event types are written as a run when the next row of the ROW's
// type comes (or the batch ends), not a field at a time for every row.
func (c *column) fill() {
	if c.pending == 0 {
		return
	}
	for k := range c.children {
		c.children[k].appendZeros(c.pending)
	}
	c.pending = 0
}

// placeholder writes a row of an unread column: zero, or an empty string.
func (c *column) placeholder() {
	switch {
	case c.offs != nil:
		c.offs = append(c.offs, c.offs[len(c.offs)-1])
	case c.int32s != nil:
		c.int32s = append(c.int32s, 0)
	default:
		c.ints = append(c.ints, 0)
	}
}

// appendZeros writes n placeholders of a ROW field whose rows are null.
func (c *column) appendZeros(n int) {
	if c.offs != nil {
		end := c.offs[len(c.offs)-1]
		for range n {
			c.offs = append(c.offs, end)
		}
	} else {
		c.ints = append(c.ints, make([]int64, n)...)
	}
}

// data is the column's n rows as Arrow array data, whose buffers go back to mem when
// it is released; the column lets go of its slices.
func (c *column) data(n int, mem *exec.BufferPool) arrow.ArrayData {
	return c.dataWith(n, mem, nil, 0)
}

// dataWith is data for a column that is a field of a ROW with validity bitmap valid
// (nil: none) and nulls null rows.
func (c *column) dataWith(n int, mem *exec.BufferPool, valid *memory.Buffer, nulls int) arrow.ArrayData {
	var bufs []*memory.Buffer
	switch c.typ.ID() {
	case arrow.INT32:
		bufs = []*memory.Buffer{valid, memory.NewBufferWithAllocator(arrow.Int32Traits.CastToBytes(c.int32s), mem)}
	case arrow.STRING:
		bytes := memory.NewBufferBytes(c.bytes)
		if c.text != nil {
			b := mem.Allocate(int(c.size))[:0]
			for _, s := range c.spans {
				b = append(b, c.text[s.off:s.off+s.n]...)
			}
			bytes = memory.NewBufferWithAllocator(b, mem)
		}
		c.hint = len(c.bytes)
		bufs = []*memory.Buffer{valid, memory.NewBufferWithAllocator(arrow.Int32Traits.CastToBytes(c.offs), mem), bytes}
	case arrow.STRUCT:
		c.fill()
		own := memory.NewBufferWithAllocator(c.valid, mem)
		children := make([]arrow.ArrayData, len(c.children))
		for i := range c.children {
			children[i] = c.children[i].dataWith(n, mem, own, c.nulls)
		}
		d := array.NewData(c.typ, n, []*memory.Buffer{own}, children, c.nulls, 0)
		own.Release()
		for _, ch := range children {
			ch.Release()
		}
		c.valid = nil
		return d
	default:
		bufs = []*memory.Buffer{valid, memory.NewBufferWithAllocator(arrow.Int64Traits.CastToBytes(c.ints), mem)}
	}
	d := array.NewData(c.typ, n, bufs, nil, nulls, 0)
	for _, b := range bufs[1:] { // valid is the ROW's, which releases it
		b.Release()
	}
	c.int32s, c.offs, c.bytes, c.ints = nil, nil, nil, nil
	return d
}

func (e *event) int(f field) int64 {
	switch f {
	case fPersonID:
		return e.personID
	case fAuctionID:
		return e.auctionID
	case fInitialBid:
		return e.initialBid
	case fReserve:
		return e.reserve
	case fSeller:
		return e.seller
	case fCategory:
		return e.category
	case fBidAuction:
		return e.auction
	case fBidder:
		return e.bidder
	case fPrice:
		return e.price
	}
	return 0
}

func (e *event) span(f field) span {
	switch f {
	case fExtra:
		return e.extraAt
	case fChannel:
		return e.channelAt
	}
	return e.urlAt
}

func (e *event) bytes(f field) []byte {
	switch f {
	case fName:
		return e.name
	case fEmail:
		return e.email
	case fCard:
		return e.card
	case fCity:
		return e.city
	case fState:
		return e.state
	case fItemName:
		return e.itemName
	case fDescription:
		return e.description
	case fChannel:
		return e.channel
	case fURL:
		return e.url
	case fExtra:
		return e.extra
	}
	return nil
}
