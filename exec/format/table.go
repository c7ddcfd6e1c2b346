package format

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow/go/v15/arrow"
)

// TableNull is how a NULL cell shows in WriteTable, as in Flink's SQL client.
const TableNull = "<NULL>"

// TableCell returns the cell text of arr[i] for WriteTable: FormatValue's form, with
// NULL as <NULL>.
func TableCell(arr arrow.Array, i int, loc *time.Location) string {
	if arr.IsNull(i) {
		return TableNull
	}
	return FormatValue(arr, i, loc)
}

// WriteTable prints rows as Flink's SQL client does in tableau mode: a boxed table with
// right-aligned cells (widths counted in runes), then "1 row in set" or "N rows in set";
// with no rows it prints only "Empty set". Cells are printed as given: pass TableNull
// for NULL. Rows shorter than the header are padded with empty cells.
func WriteTable(w io.Writer, header []string, rows [][]string) error {
	bw := bufio.NewWriter(w)
	if len(rows) == 0 {
		bw.WriteString("Empty set\n")
		return bw.Flush()
	}
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range rows {
		for i := 0; i < len(r) && i < len(widths); i++ {
			if n := utf8.RuneCountInString(r[i]); n > widths[i] {
				widths[i] = n
			}
		}
	}
	var sep strings.Builder
	sep.WriteByte('+')
	for _, w := range widths {
		sep.WriteString(strings.Repeat("-", w+2))
		sep.WriteByte('+')
	}
	sep.WriteByte('\n')
	line := func(cells []string) {
		bw.WriteByte('|')
		for i, w := range widths {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			bw.WriteByte(' ')
			for pad := w - utf8.RuneCountInString(c); pad > 0; pad-- {
				bw.WriteByte(' ')
			}
			bw.WriteString(c)
			bw.WriteString(" |")
		}
		bw.WriteByte('\n')
	}
	bw.WriteString(sep.String())
	line(header)
	bw.WriteString(sep.String())
	for _, r := range rows {
		line(r)
	}
	bw.WriteString(sep.String())
	if len(rows) == 1 {
		bw.WriteString("1 row in set\n")
	} else {
		bw.WriteString(strconv.Itoa(len(rows)) + " rows in set\n")
	}
	return bw.Flush()
}
