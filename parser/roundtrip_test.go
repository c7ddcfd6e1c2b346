package parser

import (
	"os"
	"reflect"
	"testing"
)

func TestRoundTripCorpus(t *testing.T) {
	src, err := os.ReadFile("testdata/roundtrip.sql")
	if err != nil {
		t.Fatal(err)
	}
	script, err := Parse(string(src))
	if err != nil {
		t.Fatalf("corpus does not parse:\n%v", err)
	}
	if n := len(script.Stmts); n < 60 {
		t.Errorf("corpus has %d statements, want at least 60", n)
	}
	for _, stmt := range script.Stmts {
		checkRoundTrip(t, stmt)
	}
	again, err := Parse(script.String())
	if err != nil {
		t.Fatalf("printed corpus does not parse:\n%v", err)
	}
	if !equalTrees(script, again) {
		t.Errorf("printed corpus parses to a different tree")
	}
}

// checkRoundTrip checks that stmt prints as SQL that parses back to the same tree, and that
// printing is stable.
func checkRoundTrip(t *testing.T, stmt Stmt) {
	t.Helper()
	printed := stmt.String()
	script, err := Parse(printed)
	if err != nil {
		t.Errorf("printed statement does not parse: %v\nprinted: %s", err, printed)
		return
	}
	if len(script.Stmts) != 1 {
		t.Errorf("printed statement parses to %d statements: %s", len(script.Stmts), printed)
		return
	}
	if !equalTrees(stmt, script.Stmts[0]) {
		t.Errorf("round trip changed the tree\nprinted:  %s\nreprinted: %s", printed, script.Stmts[0])
	}
	if again := script.Stmts[0].String(); again != printed {
		t.Errorf("printing is not stable\nfirst:  %s\nsecond: %s", printed, again)
	}
}

// equalTrees compares two ASTs ignoring positions.
func equalTrees(a, b any) bool {
	return reflect.DeepEqual(withoutPos(a), withoutPos(b))
}

// withoutPos returns a deep copy of the AST v with every Pos zeroed.
func withoutPos(v any) any {
	src := reflect.ValueOf(v)
	dst := reflect.New(src.Type()).Elem()
	copyWithoutPos(dst, src)
	return dst.Interface()
}

var posType = reflect.TypeOf(Pos{})

func copyWithoutPos(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		dst.Set(reflect.New(src.Type().Elem()))
		copyWithoutPos(dst.Elem(), src.Elem())
	case reflect.Interface:
		if src.IsNil() {
			return
		}
		inner := reflect.New(src.Elem().Type()).Elem()
		copyWithoutPos(inner, src.Elem())
		dst.Set(inner)
	case reflect.Struct:
		if src.Type() == posType {
			return
		}
		for i := range src.NumField() {
			copyWithoutPos(dst.Field(i), src.Field(i))
		}
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		dst.Set(reflect.MakeSlice(src.Type(), src.Len(), src.Len()))
		for i := range src.Len() {
			copyWithoutPos(dst.Index(i), src.Index(i))
		}
	default:
		dst.Set(src)
	}
}
