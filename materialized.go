package streamsql

import (
	"encoding/binary"

	"github.com/streamsql/streamsql/exec"
)

// MaxResultBytes bounds the memory a materialized result keeps, whatever its row
// bound: past it the oldest rows go, as past the row bound.
const MaxResultBytes = 32 << 20

// rowOverhead is what a kept row costs besides its cells' bytes: its entries in rows,
// live and index, with the slack of their growth (measured: TestMaterializedMemory).
const rowOverhead = 200

// Materialized applies a changelog to the rows it describes, in the order they were
// inserted: an insert adds a row, a retraction (-U, -D) removes a live copy of the
// same row. It holds at most max rows and about MaxResultBytes: past either the oldest
// go, as in Flink's SQL client, and onDrop is called. Its memory follows its live
// rows, not the changes it saw.
type Materialized struct {
	max    int
	onDrop func()

	rows  []string // each row's cells, encoded by encodeRow
	live  []bool
	nLive int
	bytes int              // the live rows' estimated memory
	head  int              // rows before head are all dead
	index map[string][]int // encoded row → positions of its live copies, oldest first
	buf   []byte
}

// NewMaterialized returns an empty result that keeps at most max rows (max < 1: no
// bound but the bytes).
func NewMaterialized(max int, onDrop func()) *Materialized {
	if onDrop == nil {
		onDrop = func() {}
	}
	return &Materialized{max: max, onDrop: onDrop, index: map[string][]int{}}
}

// Len is the number of live rows.
func (m *Materialized) Len() int { return m.nLive }

// Apply folds one change into the result; it keeps a copy of row only when it
// inserts it.
func (m *Materialized) Apply(kind exec.RowKind, row []string) {
	m.buf = encodeRow(m.buf[:0], row)
	if kind.IsRetraction() {
		if pos := m.index[string(m.buf)]; len(pos) > 0 {
			m.kill(pos[len(pos)-1])
			if len(pos) == 1 {
				delete(m.index, string(m.buf))
			} else {
				m.index[string(m.buf)] = pos[:len(pos)-1]
			}
		}
		m.compact()
		return
	}
	key := string(m.buf)
	m.index[key] = append(m.index[key], len(m.rows))
	m.rows = append(m.rows, key)
	m.live = append(m.live, true)
	m.nLive++
	m.bytes += len(key) + rowOverhead
	for m.nLive > 1 && ((m.max > 0 && m.nLive > m.max) || m.bytes > MaxResultBytes) {
		m.dropOldest()
	}
}

// kill marks the row at i dead.
func (m *Materialized) kill(i int) {
	m.live[i] = false
	m.nLive--
	m.bytes -= len(m.rows[i]) + rowOverhead
}

// Rows returns the live rows, oldest first.
func (m *Materialized) Rows() [][]string { return m.First(0) }

// First returns the first n live rows (n < 1: all).
func (m *Materialized) First(n int) [][]string { return m.Window(0, n) }

// Window returns n live rows from the skip+1st on (n < 1: all of them).
func (m *Materialized) Window(skip, n int) [][]string {
	if n < 1 || n > m.nLive-skip {
		n = max(m.nLive-skip, 0)
	}
	rows := make([][]string, 0, n)
	for i := m.head; i < len(m.rows) && len(rows) < n; i++ {
		if !m.live[i] {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		rows = append(rows, decodeRow(m.rows[i]))
	}
	return rows
}

func (m *Materialized) dropOldest() {
	for m.head < len(m.rows) && !m.live[m.head] {
		m.head++
	}
	if m.head == len(m.rows) {
		return
	}
	key := m.rows[m.head]
	if pos := m.index[key]; len(pos) <= 1 {
		delete(m.index, key)
	} else {
		m.index[key] = pos[1:]
	}
	m.kill(m.head)
	m.onDrop()
	m.compact()
}

// compact drops the dead rows once they outnumber the live ones.
func (m *Materialized) compact() {
	if dead := len(m.rows) - m.nLive; dead < 1024 || dead < m.nLive {
		return
	}
	rows := make([]string, 0, m.nLive)
	clear(m.index)
	for i, row := range m.rows {
		if m.live[i] {
			m.index[row] = append(m.index[row], len(rows))
			rows = append(rows, row)
		}
	}
	m.rows, m.live, m.head = rows, make([]bool, len(rows)), 0
	for i := range m.live {
		m.live[i] = true
	}
}

// encodeRow appends row's cells to dst, each after its length: one string per row
// is a third of the memory of a slice of cells, and tells rows apart whatever bytes
// their cells hold.
func encodeRow(dst []byte, row []string) []byte {
	for _, c := range row {
		dst = binary.AppendUvarint(dst, uint64(len(c)))
		dst = append(dst, c...)
	}
	return dst
}

func decodeRow(s string) []string {
	var row []string
	for len(s) > 0 {
		n, k := binary.Uvarint([]byte(s[:min(len(s), binary.MaxVarintLen64)]))
		s = s[k:]
		row = append(row, s[:n])
		s = s[n:]
	}
	return row
}
