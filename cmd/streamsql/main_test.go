package main

import "testing"

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT a\n  FROM t\nWHERE b = 1;\n":     "SELECT a FROM t WHERE b = 1;",
		"SELECT a -- the key\nFROM t;":           "SELECT a /* the key */ FROM t;",
		"SELECT '--not a comment' AS s\nFROM t;": "SELECT '--not a comment' AS s FROM t;",
		"SELECT 1 -- odd */ comment\n;":          "SELECT 1 /* odd * / comment */ ;",
		"SELECT 'it''s' -- c\n, 2;":              "SELECT 'it''s' /* c */ , 2;",
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
