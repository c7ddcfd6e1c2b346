package expr_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/planner"
)

// TestFunctionExamples runs every example of planner's function table through the
// evaluator: once as written (constants, folded), and again with its literals read from
// columns of a batch, one literal at a time and all at once, so that the array⊕scalar and
// array⊕array loops give the same value on every row. A variant whose kernel needs a
// constant argument (a LIKE escape, an EXTRACT unit) fails to compile and is skipped.
func TestFunctionExamples(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	env := &expr.Env{Location: time.UTC, Now: func() time.Time { return time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC) }}
	examples, variants := 0, 0
	for _, f := range planner.Functions() {
		if len(f.Examples) == 0 {
			t.Errorf("%s: the table gives no example", f.Fn)
		}
		for _, ex := range f.Examples {
			examples++
			ast, err := parser.ParseExpr(ex.SQL)
			if err != nil {
				t.Errorf("%s: %v", ex.SQL, err)
				continue
			}
			bound, err := planner.BindExpr(ast, nil)
			if err != nil {
				t.Errorf("%s: %v", ex.SQL, err)
				continue
			}
			if !calls(bound, f.Fn) {
				t.Errorf("%s: example of %s does not call it: %s", ex.SQL, f.Fn, bound)
			}
			if bound.Type().NotNull && ex.Want == format.NullText {
				t.Errorf("%s: typed %s, yet the example is NULL", ex.SQL, bound.Type())
			}
			got, err := evalConst(mem, env, bound)
			if err != nil {
				t.Errorf("%s: %v", ex.SQL, err)
				continue
			}
			if got != ex.Want {
				t.Errorf("%s = %s, want %s", ex.SQL, got, ex.Want)
				continue
			}
			lits := literals(bound)
			sets := [][]int{}
			for i := range lits {
				sets = append(sets, []int{i})
			}
			if len(lits) > 1 {
				all := make([]int, len(lits))
				for i := range all {
					all[i] = i
				}
				sets = append(sets, all)
			}
			for _, set := range sets {
				ok, err := evalColumns(t, mem, env, bound, lits, set, ex.Want)
				if err != nil {
					t.Errorf("%s with literals %v read from columns: %v", ex.SQL, set, err)
				}
				if ok {
					variants++
				}
			}
		}
	}
	t.Logf("%d functions, %d examples, %d column variants", len(planner.Functions()), examples, variants)
}

func calls(e planner.Expr, fn planner.Func) bool {
	switch e := e.(type) {
	case *planner.Call:
		if e.Fn == fn {
			return true
		}
		for _, a := range e.Args {
			if calls(a, fn) {
				return true
			}
		}
	case *planner.Cast:
		return calls(e.X, fn)
	case *planner.Case:
		for _, w := range e.Whens {
			if calls(w.Cond, fn) || calls(w.Result, fn) {
				return true
			}
		}
		return calls(e.Else, fn)
	}
	return false
}

// literals lists the typed, non-NULL literals of e in a fixed walk order.
func literals(e planner.Expr) []*planner.Literal {
	var out []*planner.Literal
	walkLiterals(e, func(l *planner.Literal) planner.Expr { out = append(out, l); return l })
	return out
}

// walkLiterals rebuilds e with every literal replaced by f's result.
func walkLiterals(e planner.Expr, f func(*planner.Literal) planner.Expr) planner.Expr {
	switch e := e.(type) {
	case *planner.Literal:
		if e.Value == nil || e.T.Kind == planner.Null {
			return e
		}
		return f(e)
	case *planner.Call:
		c := *e
		c.Args = make([]planner.Expr, len(e.Args))
		for i, a := range e.Args {
			c.Args[i] = walkLiterals(a, f)
		}
		return &c
	case *planner.Cast:
		c := *e
		c.X = walkLiterals(e.X, f)
		return &c
	case *planner.Case:
		c := *e
		c.Whens = make([]planner.When, len(e.Whens))
		for i, w := range e.Whens {
			c.Whens[i] = planner.When{Cond: walkLiterals(w.Cond, f), Result: walkLiterals(w.Result, f)}
		}
		c.Else = walkLiterals(e.Else, f)
		return &c
	}
	return e
}

func evalConst(mem memory.Allocator, env *expr.Env, e planner.Expr) (string, error) {
	ev, err := expr.Compile(e, mem, env)
	if err != nil {
		return "", err
	}
	rec := array.NewRecord(arrow.NewSchema(nil, nil), nil, 1)
	defer rec.Release()
	out, err := ev.Eval(rec)
	if err != nil {
		return "", err
	}
	defer out.Release()
	return format.FormatTypedValue(out, 0, e.Type(), time.UTC), nil
}

// evalColumns evaluates e with the literals of set read from columns, over rows 1 to 3 of a
// 4-row batch (a slice, so that offsets are exercised), and checks every row gives want.
// It reports false when the variant does not compile.
func evalColumns(t *testing.T, mem memory.Allocator, env *expr.Env, e planner.Expr, lits []*planner.Literal, set []int, want string) (bool, error) {
	const rows = 4
	index := map[*planner.Literal]int{}
	var schema planner.Schema
	var cols []arrow.Array
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	empty := array.NewRecord(arrow.NewSchema(nil, nil), nil, rows)
	defer empty.Release()
	for _, i := range set {
		l := lits[i]
		ev, err := expr.Compile(l, mem, env)
		if err != nil {
			return false, err
		}
		arr, err := ev.Eval(empty)
		if err != nil {
			return false, err
		}
		index[l] = len(schema)
		schema = append(schema, planner.Column{Name: fmt.Sprintf("c%d", i), Type: l.T})
		cols = append(cols, arr)
	}
	withCols := walkLiterals(e, func(l *planner.Literal) planner.Expr {
		if k, ok := index[l]; ok {
			return &planner.ColumnRef{Index: k, Name: schema[k].Name, T: schema[k].Type}
		}
		return l
	})
	ev, err := expr.Compile(withCols, mem, env)
	if errors.Is(err, expr.ErrUnsupported) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	rec := array.NewRecord(exec.ArrowSchema(schema), cols, rows)
	defer rec.Release()
	part := rec.NewSlice(1, rows)
	defer part.Release()
	out, err := ev.Eval(part)
	if err != nil {
		return true, err
	}
	defer out.Release()
	for i := 0; i < out.Len(); i++ {
		if got := format.FormatTypedValue(out, i, withCols.Type(), time.UTC); got != want {
			return true, fmt.Errorf("row %d = %s, want %s", i, got, want)
		}
	}
	return true, nil
}

// TestFunctionEdgesDoNotPanic feeds the functions extreme and degenerate arguments, as
// constants and from columns: a planning or evaluation error is fine, a panic is not.
func TestFunctionEdgesDoNotPanic(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, sql := range []string{
		"TIMESTAMPADD(YEAR, 9223372036854775807, TIMESTAMP '2024-01-01 00:00:00')",
		"TIMESTAMPADD(MILLISECOND, -9223372036854775807, DATE '2024-01-01')",
		"TIMESTAMPDIFF(MONTH, DATE '0001-01-01', DATE '9999-12-31')",
		"TIMESTAMPDIFF(SECOND, TIMESTAMP '0001-01-01 00:00:00', TIMESTAMP '9999-12-31 00:00:00')",
		"FROM_UNIXTIME(9223372036854775807)", "FROM_UNIXTIME(-9223372036854775807, '')",
		"UNIX_TIMESTAMP('', '')", "UNIX_TIMESTAMP('2024', 'yyyy''')", "TO_DATE('', '')", "TO_DATE('x', 'QQQ')",
		"DAYOFWEEK(DATE '0001-01-01')", "YEAR(TIMESTAMP '9999-12-31 23:59:59.999')",
		"LPAD('a', 2147483647, 'x')", "RPAD('a', 0, 'x')", "REPEAT('ab', 2147483647)", "REPEAT('', 2147483647)",
		"SPLIT_INDEX('a', '', 5)", "SPLIT_INDEX('', ',', 0)", "SPLIT_INDEX('a,b', ',', 2147483647)",
		"TRUNCATE(1.5e300, -400)", "TRUNCATE(1.5e0, 2147483647)", "TRUNCATE(12.345, -2147483648)", "TRUNCATE(-9223372036854775807, -19)",
		"REGEXP_EXTRACT('a', '(a)', 2147483647)", "REGEXP_EXTRACT('a', '(a)|(b)', 2)", "REGEXP_EXTRACT('', '')",
		"REGEXP_REPLACE('abc', 'b', '$')", "REGEXP_REPLACE('abc', '(b)', '${x}')", "REGEXP_REPLACE('abc', '', '-')",
		"REGEXP_REPLACE('abc', 'b', '\\\\')", "REGEXP('', '')",
		"CHR(-9223372036854775807)", "CHR(0)", "BIN(-9223372036854775807)", "HEX('')", "ASCII(CHR(200))",
		"RAND_INTEGER(-1)", "RAND_INTEGER(1, 0)", "LEFT('abc', 2147483647)", "RIGHT('abc', -2147483647)",
		"FROM_BASE64('====')", "FROM_BASE64('')", "INITCAP('')", "TRANSLATE('', '', '')", "TRANSLATE('abc', '', 'x')",
		"CONCAT_WS('', '')", "GREATEST(CAST(NULL AS DOUBLE), 0 / 0e0)", "LEAST(0 / 0e0, 1e0)", "LOG(0, 0)", "LOG(1, 1)",
		"SIGN(CAST(-0.0 AS DOUBLE))", "SIGN(99999999999999999999999999999999999999)", "SHA2('a', 0)",
		"IF(CAST(NULL AS BOOLEAN), CAST(NULL AS INT), NULL)", "IFNULL(NULL, NULL)", "GREATEST(NULL, NULL)",
		"NULL IS DISTINCT FROM NULL", "TYPEOF(NULL)", "CASE NULL WHEN NULL, 1 THEN 'x' END",
		"JSON_VALUE('', '$')", "JSON_VALUE('[[[[[[[[[[]]]]]]]]]]', '$[0][0][0][0][0][0][0][0][0][0][0]')",
		"JSON_VALUE('{\"a\": 1e999}', '$.a')", "JSON_EXISTS('1', '$[9223372036854775807]')", "'' IS JSON",
		"JSON_VALUE('{}', '$[')", "OVERLAY('' PLACING '' FROM -2147483648 FOR 2147483647)",
		"OVERLAY('abc' PLACING 'x' FROM 9223372036854775807)", "'' SIMILAR TO ''", "'a' SIMILAR TO '%%__%'",
		"FLOOR(TIMESTAMP '0001-01-01 00:00:00' TO YEAR)", "CEIL(DATE '9999-12-31' TO YEAR)", "LOCATE('', '', 1)",
		"ELT(-2147483648, 'a')", "PARSE_URL('http://[::1', 'HOST')", "CONVERT_TZ('2024-01-01 00:00:00', '', '')",
		"REGEXP_INSTR('', '')", "REGEXP_COUNT('aaa', '')",
		"TIME '23:59:59.999' + INTERVAL '999999999' DAY", "TIME '00:00:00' - INTERVAL '999999999 23:59:59.999' DAY TO SECOND",
		"CAST(TIMESTAMP '0001-01-01 00:00:00' AS TIME)", "CAST(TIMESTAMP '9999-12-31 23:59:59.999' AS TIME(9))",
		"CEIL(TIME '23:59:59.999' TO HOUR)", "FLOOR(TIME '00:00:00' TO MILLISECOND)", "TRY_CAST('' AS TIME)",
		"TRY_CAST('24:00:00' AS TIME)", "TRY_CAST('1:2:3.1234567890123' AS TIME(9))", "TYPEOF(NULL, TRUE)",
		"CAST(CAST('23:59:59.999' AS TIME(3)) AS TIMESTAMP_LTZ(3))",
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s panicked: %v", sql, r)
				}
			}()
			ast, err := parser.ParseExpr(sql)
			if err != nil {
				t.Errorf("%s: %v", sql, err)
				return
			}
			bound, err := planner.BindExpr(ast, nil)
			if err != nil {
				return // a planning error is an answer
			}
			if _, err := evalConst(mem, nil, bound); err != nil {
				return
			}
			lits := literals(bound)
			all := make([]int, len(lits))
			for i := range all {
				all[i] = i
			}
			_, _ = evalColumns(t, mem, nil, bound, lits, all, "")
		}()
	}
}
