package streamsql

import (
	"strings"

	"github.com/streamsql/streamsql/exec"
)

// Materialized applies a changelog to the rows it describes, in the order they were
// inserted: an insert adds a row, a retraction (-U, -D) removes a live copy of the
// same row. It holds at most max rows: past that the oldest go, as in Flink's SQL
// client, and onDrop is called. Its memory follows its live rows, not the changes it
// saw.
type Materialized struct {
	max    int
	onDrop func()

	rows  [][]string
	live  []bool
	nLive int
	head  int              // rows before head are all dead
	index map[string][]int // row text → positions of its live copies, oldest first
}

// NewMaterialized returns an empty result that keeps at most max rows (max < 1: no
// bound).
func NewMaterialized(max int, onDrop func()) *Materialized {
	if onDrop == nil {
		onDrop = func() {}
	}
	return &Materialized{max: max, onDrop: onDrop, index: map[string][]int{}}
}

// Len is the number of live rows.
func (m *Materialized) Len() int { return m.nLive }

// Apply folds one change into the result; it keeps row only when it inserts it.
func (m *Materialized) Apply(kind exec.RowKind, row []string) {
	key := strings.Join(row, "\x00")
	if kind.IsRetraction() {
		if pos := m.index[key]; len(pos) > 0 {
			m.live[pos[len(pos)-1]] = false
			m.nLive--
			if len(pos) == 1 {
				delete(m.index, key)
			} else {
				m.index[key] = pos[:len(pos)-1]
			}
		}
		m.compact()
		return
	}
	if m.max > 0 && m.nLive >= m.max {
		m.dropOldest()
	}
	m.index[key] = append(m.index[key], len(m.rows))
	m.rows = append(m.rows, append([]string(nil), row...))
	m.live = append(m.live, true)
	m.nLive++
}

// Rows returns the live rows, oldest first.
func (m *Materialized) Rows() [][]string { return m.First(0) }

// First returns the first n live rows (n < 1: all).
func (m *Materialized) First(n int) [][]string {
	if n < 1 || n > m.nLive {
		n = m.nLive
	}
	rows := make([][]string, 0, n)
	for i := m.head; i < len(m.rows) && len(rows) < n; i++ {
		if m.live[i] {
			rows = append(rows, m.rows[i])
		}
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
	key := strings.Join(m.rows[m.head], "\x00")
	if pos := m.index[key]; len(pos) <= 1 {
		delete(m.index, key)
	} else {
		m.index[key] = pos[1:]
	}
	m.live[m.head] = false
	m.nLive--
	m.onDrop()
	m.compact()
}

// compact drops the dead rows once they outnumber the live ones.
func (m *Materialized) compact() {
	if dead := len(m.rows) - m.nLive; dead < 1024 || dead < m.nLive {
		return
	}
	rows := make([][]string, 0, m.nLive)
	clear(m.index)
	for i, row := range m.rows {
		if m.live[i] {
			key := strings.Join(row, "\x00")
			m.index[key] = append(m.index[key], len(rows))
			rows = append(rows, row)
		}
	}
	m.rows, m.live, m.head = rows, make([]bool, len(rows)), 0
	for i := range m.live {
		m.live[i] = true
	}
}
