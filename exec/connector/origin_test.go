package connector

import (
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"slices"
	"testing"

	"github.com/streamsql/streamsql/exec"
)

// origins reads r to its end and returns the origin of every row.
func origins(t *testing.T, r exec.Reader) []string {
	t.Helper()
	var got []string
	for {
		b, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.Rec == nil {
			continue
		}
		if b.Origin == nil {
			t.Fatal("a batch without origin")
		}
		for i := range b.Len() {
			got = append(got, b.Origin.Row(i))
		}
		b.Release()
	}
}

// TestSourceOrigins: every row of a batch names where it was read; skipped records
// and quoted line breaks count their lines, and a batch may span the files of a
// directory.
func TestSourceOrigins(t *testing.T) {
	mem := checkedMem(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "1.csv"), "a,1,1\nb,x,1\n\"c\nc\",2,2\n")
	writeFile(t, filepath.Join(dir, "2.csv"), "d,3,3\n")
	r := openSource(t, mem, table("sensors", sensors, map[string]string{
		"connector": "filesystem", "path": dir, "format": "csv", "csv.ignore-parse-errors": "true",
	}), 1024)
	got := origins(t, r)
	r.Close()
	f1, f2 := "file "+filepath.Join(dir, "1.csv"), "file "+filepath.Join(dir, "2.csv")
	want := []string{"table sensors, " + f1 + ", line 1", "table sensors, " + f1 + ", line 3", "table sensors, " + f2 + ", line 1"}
	if !slices.Equal(got, want) {
		t.Errorf("file origins:\n got %q\nwant %q", got, want)
	}

	host, port := serve(t, func(c net.Conn) { c.Write([]byte("a,1,1\nb,oops,2\nc,3,3\n")) })
	r = openSource(t, mem, table("sensors", sensors, socketTable(host, port, "csv.ignore-parse-errors", "true")), 1024)
	got = origins(t, r)
	r.Close()
	sock := "table sensors, socket " + net.JoinHostPort(host, port)
	if want := []string{sock + ", line 1", sock + ", line 3"}; !slices.Equal(got, want) {
		t.Errorf("socket origins:\n got %q\nwant %q", got, want)
	}

	r = openSource(t, mem, table("g", sensors, map[string]string{"connector": "datagen", "number-of-rows": "3"}), 2)
	got = origins(t, r)
	r.Close()
	if want := []string{"table g, row 1", "table g, row 2", "table g, row 3"}; !slices.Equal(got, want) {
		t.Errorf("datagen origins:\n got %q\nwant %q", got, want)
	}
}
