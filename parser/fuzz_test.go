package parser

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzParse checks that no input panics or yields a non-*Error error, and that whatever
// parses prints as SQL that parses to the same tree and the same text. Seeded with the
// round-trip corpus, statement by statement, and the inputs of the parse and error tests.
func FuzzParse(f *testing.F) {
	src, err := os.ReadFile("testdata/roundtrip.sql")
	if err != nil {
		f.Fatal(err)
	}
	// Seeds are single statements: the whole file is slow to minimise.
	script, err := Parse(string(src))
	if err != nil {
		f.Fatal(err)
	}
	for _, stmt := range script.Stmts {
		f.Add(stmt.String())
	}
	for _, tt := range parseTests {
		f.Add(tt.in)
	}
	for _, tt := range errorTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		Complete(sql)
		if script, err := Parse(sql); err != nil {
			checkError(t, sql, err)
		} else {
			printed := script.String()
			again, err := Parse(printed)
			if err != nil {
				t.Fatalf("printed form does not parse: %v\ninput:   %q\nprinted: %q", err, sql, printed)
			}
			if reprinted := again.String(); reprinted != printed {
				t.Fatalf("printing is not stable\ninput:     %q\nprinted:   %q\nreprinted: %q", sql, printed, reprinted)
			}
			if !equalTrees(script, again) {
				t.Fatalf("round trip changed the tree\ninput:   %q\nprinted: %q", sql, printed)
			}
		}
		if e, err := ParseExpr(sql); err != nil {
			checkError(t, sql, err)
		} else if again, err := ParseExpr(e.String()); err != nil || !equalTrees(e, again) {
			t.Fatalf("expression round trip failed (%v)\ninput:   %q\nprinted: %q", err, sql, e)
		}
	})
}

// checkError checks that err is a well-formed *Error for input src.
func checkError(t *testing.T, src string, err error) {
	t.Helper()
	var perr *Error
	if !errors.As(err, &perr) {
		t.Fatalf("error is %T, want *Error: %v", err, err)
	}
	if strings.Contains(perr.Msg, "internal parser error") {
		t.Fatalf("input %q: %v", src, err)
	}
	lines := strings.Count(src, "\n") + 1
	if perr.Pos.Line < 1 || perr.Pos.Line > lines || perr.Pos.Column < 1 {
		t.Fatalf("input %q: error position %d:%d out of range", src, perr.Pos.Line, perr.Pos.Column)
	}
}
