package tests

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql"
	"github.com/streamsql/streamsql/parser"
)

// TestGolden runs every testdata/*.txt file in a fresh session and temporary directory.
// Commands:
//
//	file NAME            writes the input to $DIR/NAME (an input table's data)
//	tree dir=NAME        lists the files a reader sees under $DIR/NAME (hidden ones
//	                     left out) with their lines; part files are shown as "part"
//	                     (their names hold random or job-derived ids), sorted
//	sql [format=F] [sort=true]
//	                     runs the statements (F: csv (default), table, json, changelog);
//	                     the output is what they print, then "error: ..." if one failed;
//	                     sort=true sorts the lines after the header, for results whose
//	                     order depends on how two sources interleave (joins)
//
// $DIR in SQL is the case's temporary directory. Every sql block is also printed and
// parsed again, which must give the same canonical text.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			runGoldenFile(t, path)
		})
	}
}

func runGoldenFile(t *testing.T, path string) {
	cases := readCases(t, path)
	dir := t.TempDir()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var out bytes.Buffer
	session, err := streamsql.NewSession(streamsql.Config{
		Out: &out, Err: &out, Format: "csv", Mem: mem, Location: time.UTC, StateDir: t.TempDir(),
		Now: func() time.Time { return time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC) },
	})
	if err != nil {
		t.Fatal(err)
	}
	actual := make([]string, len(cases))
	for i, c := range cases {
		out.Reset()
		switch c.cmd {
		case "file":
			name := filepath.Join(dir, c.args["name"])
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, []byte(c.input+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		case "tree":
			out.WriteString(listTree(t, filepath.Join(dir, c.args["dir"])))
		case "sql":
			sql := strings.ReplaceAll(c.input, "$DIR", dir)
			checkRoundTrip(t, c, sql)
			if err := session.SetFormat(orDefault(c.args["format"], "csv")); err != nil {
				t.Fatalf("%s: %v", c.pos, err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			err := session.Exec(ctx, sql)
			if err == nil {
				err = session.Wait()
			}
			cancel()
			if err != nil {
				out.WriteString("error: " + err.Error() + "\n")
			}
		default:
			t.Fatalf("%s: unknown command %q", c.pos, c.cmd)
		}
		actual[i] = strings.ReplaceAll(out.String(), dir, "$DIR")
		if c.args["sort"] == "true" {
			actual[i] = sortBody(actual[i])
		}
		if !*update && strings.TrimRight(actual[i], "\n") != c.expected {
			t.Errorf("%s: %s\n%s\n--- got:\n%s\n--- want:\n%s", c.pos, c.cmd, c.input, actual[i], c.expected)
		}
	}
	if *update {
		if err := writeCases(path, cases, actual); err != nil {
			t.Fatal(err)
		}
	}
}

// checkRoundTrip parses sql, prints it and parses the print again: both prints must match.
func checkRoundTrip(t *testing.T, c testCase, sql string) {
	script, err := parser.Parse(sql)
	if err != nil {
		return // the case tests a syntax error
	}
	printed := script.String()
	again, err := parser.Parse(printed)
	if err != nil {
		t.Errorf("%s: canonical SQL does not parse: %v\n%s", c.pos, err, printed)
		return
	}
	if again.String() != printed {
		t.Errorf("%s: round trip changed the SQL:\n%s\n---\n%s", c.pos, printed, again.String())
	}
}

// listTree lists the visible files under root, each as its path, a colon and its
// lines joined by '|'; part-* files are named "part". The list is sorted.
func listTree(t *testing.T, root string) string {
	var lines []string
	err := filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(e.Name(), ".") && p != root {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if e.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if strings.HasPrefix(e.Name(), "part-") {
			rel = filepath.Join(filepath.Dir(rel), "part")
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines = append(lines, filepath.ToSlash(rel)+": "+strings.ReplaceAll(strings.TrimSuffix(string(data), "\n"), "\n", "|"))
		return nil
	})
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}

// sortBody sorts the lines of out after its first.
func sortBody(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) > 1 {
		slices.Sort(lines[1:])
	}
	return strings.Join(lines, "\n") + "\n"
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
