package parser

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2/lexer"
)

// ruleTokens lexes src with sqlLexer's regular expressions, as lexAll did before scan:
// the reference scan is held to.
func ruleTokens(t testing.TB, src string) []lexer.Token {
	l, err := sqlLexer.LexString("", src)
	if err != nil {
		t.Fatal(err)
	}
	var toks []lexer.Token
	end := lexer.Position{Line: 1, Column: 1}
	for {
		tok, err := l.Next()
		if err != nil {
			t.Fatal(err)
		}
		if tok.EOF() {
			tok.Pos = end
			return append(toks, tok)
		}
		if tok.Type == tokIdent && isReserved(tok.Value) {
			tok.Type = tokKeyword
		}
		toks = append(toks, tok)
		end = tok.Pos
		end.Advance(tok.Value)
	}
}

func checkScan(t testing.TB, src string) {
	got := lexAll(src)
	want := ruleTokens(t, src)
	for i := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("token %d of %q: %#v, the rules give %#v", i, src, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%q: %d tokens, the rules give %d", src, len(got), len(want))
	}
}

// TestScanMatchesLexerRules: the hand-written scanner splits every script of the
// project's tests and examples, and the corner cases of each rule, into exactly the
// tokens, types and positions of sqlLexer's rules.
func TestScanMatchesLexerRules(t *testing.T) {
	for _, src := range []string{
		"", " ", "\t\n\r\f x", "a--c\nb", "--", "a /* x */ b", "/* a\n b */c", "/*/", "/* a", "/**/",
		"'it''s'", "'a\nb'", "''", "'''", "'x", "`a``b`", "`", "`x", "1", "1.", "1.5", ".5", ".",
		"1e5", "1E+5", "1e", "1e+", "1.e-3", "12abc", "a1$_", "$a", "_x", "été", "名前 ٣", "x٣",
		"<>!=<=>=||", "<= >", "!", "!a", "\"q\"", "#", "\xff", "a\xffb", "é\u0301", "-1", "a.b", "[1]",
		"SELECT select From", "x\n\n  y", "\r\nz",
	} {
		checkScan(t, src)
	}
	files, _ := filepath.Glob("testdata/*.sql")
	more, _ := filepath.Glob("../tests/testdata/*.txt")
	queries, _ := filepath.Glob("../queries/*.sql")
	files = append(append(files, more...), queries...)
	if len(files) < 10 {
		t.Fatalf("only %d scripts found", len(files))
	}
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		checkScan(t, string(src))
	}
}

// FuzzScan holds the scanner to the rules on any input.
func FuzzScan(f *testing.F) {
	for _, s := range []string{"SELECT a, 'b''c' FROM `t` -- x\n", "1.5e-3 + .5 /* c */", "été <> x٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if strings.Count(src, "\n") > 1000 {
			return
		}
		checkScan(t, src)
	})
}

// BenchmarkLex: 100,000 terms of an expression.
func BenchmarkLex(b *testing.B) {
	src := "SELECT " + strings.Repeat("a + 1 * 'x' ", 100_000) + ";"
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tokenize(src)
		}
	})
	b.Run("rules", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ruleTokens(b, src)
		}
	})
}

func TestEveryReservedWordIsReserved(t *testing.T) {
	for w := range reserved {
		if !isReserved(strings.ToLower(w)) || !isReserved(w) {
			t.Errorf("%s is not taken as reserved", w)
		}
	}
	if isReserved("selects") || isReserved("") {
		t.Error("a word that is not reserved is taken as one")
	}
}
