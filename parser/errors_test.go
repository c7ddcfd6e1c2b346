package parser

import (
	"errors"
	"strings"
	"testing"
)

// errorTests are malformed inputs with the first line of their Error(): position and
// message. They also seed FuzzParse.
var errorTests = []struct{ in, want string }{
	// misspelt keywords
	{"SELECT a FORM t", `1:10: unexpected "FORM", expected FROM`},
	{"SELECT a, b\nFORM t", `2:1: unexpected "FORM", expected FROM`},
	{"SELECT a FROM t WHRE a > 1", `1:17: unexpected "WHRE", expected WHERE`},
	{"SELEC a FROM t", `1:1: unexpected "SELEC", expected SELECT`},
	{"CREAT TABLE t (a INT)", `1:1: unexpected "CREAT", expected CREATE`},
	{"SELECT INTERVAL '1' SECS", `1:21: unexpected "SECS", expected YEAR, MONTH, DAY, HOUR, MINUTE or SECOND`},

	// MATCH_RECOGNIZE
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts DEFINE A AS TRUE)", `1:46: unexpected "DEFINE", expected PATTERN`},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A B) )", `1:60: unexpected ")", expected DEFINE`},
	{"SELECT * FROM t MATCH_RECOGNIZE (\n  ORDER BY ts\n  PATTERN (A {2,1}) DEFINE A AS TRUE)", `3:14: quantifier {2,1} matches no rows`},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN () DEFINE A AS TRUE)", `1:55: unexpected ")", expected pattern variable or '('`},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A B) DEFINE A AS TRUE B AS TRUE)", `1:77: unexpected "B", expected ',' or ')'`},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts AFTER MATCH SKIP TO PATTERN (A) DEFINE A AS TRUE)", `1:74: unexpected "(", expected PATTERN`},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES A.x PATTERN (A) DEFINE A AS TRUE)", `1:59: unexpected "PATTERN", expected AS`},
	{"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) SUBSET U = (A) DEFINE A AS TRUE)", `1:58: SUBSET is not supported in MATCH_RECOGNIZE`},

	// CREATE TABLE
	{"CREATE TABLE t (a INT, b STRING", `1:32: unexpected end of input, expected ')' or ',' after column definition`},
	{"CREATE TABLE t (\n  a INT\n  b INT\n)", `3:3: unexpected "b", expected ')' or ',' after column definition`},
	{"CREATE TABLE t (a INT, )", `1:24: unexpected ")", expected column definition, WATERMARK or PRIMARY KEY`},
	{"CREATE TABLE t (a INT) PARTITIONED BY (a, A)", `1:43: PARTITIONED BY names column ` + "`A`" + ` twice`},
	{"CREATE TABLE t (a AS 1 METADATA)", `1:24: a computed column cannot be a METADATA column`},
	{"CREATE TABLE t (a INT METADATA FROM x)", `1:37: unexpected "x", expected string literal`},
	{"CREATE TABLE t (a INT) PARTITIONED BY a", `1:39: unexpected "a", expected '('`},
	{"CREATE TABLE t ()", `1:17: unexpected ")", expected column definition, WATERMARK or PRIMARY KEY`},
	{"CREATE TABLE t (a STRNG)", `1:19: unknown type "STRNG", expected BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL, STRING, VARCHAR, CHAR, BYTES, BINARY, VARBINARY, TIMESTAMP, TIMESTAMP_LTZ, DATE, TIME, ROW, ARRAY, MAP or MULTISET`},
	{"CREATE TABLE t (a)", `1:18: unexpected ")", expected AS or type`},
	{"CREATE TABLE t (a INT(3))", `1:22: type INT takes no parameters`},
	{"CREATE TABLE t (a DECIMAL(x))", `1:27: unexpected "x", expected integer`},
	{"CREATE TABLE t (a INT) WITH ()", `1:30: unexpected ")", expected option 'key' = 'value'`},
	{"CREATE TABLE t (a INT) WITH ('k' 'v')", `1:34: unexpected "'v'", expected '='`},
	{"CREATE TABLE t (a INT) WITH ('k' = 'v' 'x' = 'y')", `1:40: unexpected "'x'", expected ')' or ','`},
	{"CREATE TABLE t (a INT, PRIMARY KEY (a))", `1:39: unexpected ")", expected NOT ENFORCED`},
	{"CREATE TABLE t (ts INT, WATERMARK FOR ts ts)", `1:42: unexpected "ts", expected AS`},
	{"CREATE TABLE t (a INT, PRIMARY KEY (a) NOT ENFORCED, b INT PRIMARY KEY NOT ENFORCED)", `1:54: a table can have only one PRIMARY KEY`},
	{"CREATE FOO", `1:8: unexpected "FOO", expected TABLE, VIEW, SYSTEM or FUNCTION`},
	{"CREATE TABLE t (a ARRAY<INT)", `1:28: unexpected ")", expected '>'`},
	{"CREATE TABLE t (a ARRAY INT)", `1:25: unexpected "INT", expected '<'`},
	{"CREATE TABLE t (m MAP<INT>)", `1:26: unexpected ">", expected ','`},
	{"CREATE TABLE t (r ROW<a>)", `1:24: unexpected ">", expected type`},
	{"CREATE TABLE t (r ROW<a INT b INT>)", `1:29: unexpected "b", expected '>' or ','`},
	{"CREATE TABLE t (r ROW<1 INT>)", `1:23: unexpected "1", expected field name`},
	{"SELECT a[1 FROM t", `1:12: unexpected "FROM", expected ']'`},
	{"SELECT MAP['a'] FROM t", `1:8: MAP[...] takes keys and values in pairs`},
	{"SELECT ARRAY[1 2]", `1:16: unexpected "2", expected ']' or ','`},
	{"SELECT a[1].", `1:13: unexpected end of input, expected field name`},
	{"WITH a (SELECT 1) SELECT 1", `1:9: unexpected "SELECT", expected identifier`},
	{"WITH a AS SELECT 1", `1:11: unexpected "SELECT", expected '('`},
	{"WITH a AS (SELECT 1)", `1:21: unexpected end of input, expected SELECT, VALUES or '('`},

	// lexical errors
	{"SELECT 'abc", `1:8: unterminated string literal`},
	{"SELECT a /* never closed", `1:10: unterminated comment`},
	{"SELECT `abc", "1:8: unterminated quoted identifier"},
	{"SELECT a FROM t WHERE a = @", `1:27: unexpected character "@"`},
	{"SELECT \x00", `1:8: unexpected character "\x00"`},
	{"SELECT \xff\xfe", `1:8: unexpected character "\xff"`},
	{`SELECT "a" FROM t`, "1:8: unexpected character '\"': write strings as '...' and quoted identifiers as `...`"},

	// queries and expressions
	{"SELECT a, FROM t", `1:11: unexpected "FROM", expected expression or '*'`},
	{"SELECT FROM t", `1:8: unexpected "FROM", expected expression or '*'`},
	{"SELECT a FROM WHERE", `1:15: unexpected "WHERE", expected table name or '('`},
	{"SELECT a FROM t WHERE", `1:22: unexpected end of input, expected expression`},
	{"SELECT a FROM t GROUP a", `1:23: unexpected "a", expected BY`},
	{"SELECT (a + b FROM t", `1:15: unexpected "FROM", expected ')'`},
	{"SELECT f(a b) FROM t", `1:12: unexpected "b", expected ')' or ','`},
	{"SELECT CAST(a INT) FROM t", `1:15: unexpected "INT", expected AS`},
	{"SELECT CAST(a AS) FROM t", `1:17: unexpected ")", expected type`},
	{"SELECT CAST()", `1:13: unexpected ")", expected expression`},
	{"SELECT CASE WHEN a THEN b FROM t", `1:27: unexpected "FROM", expected WHEN, ELSE or END`},
	{"SELECT CASE END", `1:13: unexpected "END", expected expression`},
	{"SELECT a IN 1", `1:13: unexpected "1", expected '('`},
	{"SELECT a IS 1", `1:13: unexpected "1", expected NULL, NOT, TRUE, FALSE, UNKNOWN, DISTINCT or JSON`},
	{"SELECT a BETWEEN 1 OR 2", `1:20: unexpected "OR", expected AND`},
	{"SELECT EXTRACT(CENTURY FROM ts)", `1:16: unexpected "CENTURY", expected time unit (YEAR, QUARTER, MONTH, WEEK, DAY, DOY, DOW, HOUR, MINUTE, SECOND, MILLISECOND or EPOCH)`},
	{"SELECT INTERVAL '1' SECOND TO DAY", `1:31: invalid interval qualifier SECOND TO DAY`},
	{"SELECT a LIKE 'x' ESCAPE 'ab'", `1:26: ESCAPE must be a single character`},
	{"SELECT a NOT b", `1:10: unexpected "NOT", expected ';'`},
	{"SELECT 1 +\n\n", `1:11: unexpected end of input, expected expression`},

	// joins
	{"SELECT * FROM a JOIN b WHERE a.x = b.x", `1:24: unexpected "WHERE", expected ON`},
	{"SELECT * FROM a JOIN b AS c", `1:28: unexpected end of input, expected ON`},
	{"SELECT * FROM a LEFT JOIN b\nUSING (x)", `2:1: unexpected "USING", expected ON`},
	{"SELECT * FROM a JOIN b c d ON x", `1:26: unexpected "d", expected ON`},
	{"SELECT * FROM a JOIN WHERE x", `1:22: unexpected "WHERE", expected table name or '('`},
	{"SELECT * FROM a JOIN", `1:21: unexpected end of input, expected table name or '('`},
	{"SELECT * FROM a JOIN b ON", `1:26: unexpected end of input, expected expression`},
	{"SELECT * FROM a LEFT b ON x", `1:22: unexpected "b", expected JOIN`},
	{"SELECT * FROM a INNER OUTER JOIN b ON x", `1:23: unexpected "OUTER", expected JOIN`},
	{"SELECT * FROM a JION b ON x", `1:17: unexpected "JION", expected JOIN`},
	{"SELECT * FROM a NATURAL JOIN b", `1:17: NATURAL JOIN is not supported, use JOIN ... ON`},
	{"SELECT * FROM a natural join b", `1:17: NATURAL JOIN is not supported, use JOIN ... ON`},

	// set operations, VALUES, ORDER BY and LIMIT
	{"SELECT a FROM t UNION ALL", `1:26: unexpected end of input, expected SELECT, VALUES or '('`},
	{"SELECT a FROM t UNION ORDER BY a", `1:23: unexpected "ORDER", expected SELECT, VALUES or '('`},
	{"SELECT a FROM t ORDER a", `1:23: unexpected "a", expected BY`},
	{"SELECT a FROM t ORDER BY a LIMIT", `1:33: unexpected end of input, expected expression`},
	{"SELECT a FROM t ORDER BY a UNION SELECT b FROM u", `1:28: unexpected "UNION", expected ';'`},
	{"VALUES", `1:7: unexpected end of input, expected expression`},
	{"VALUES (1, 2), ", `1:15: unexpected end of input, expected expression`},
	{"SELECT * FROM t AS x (a, b)", `1:20: a column list after an alias renames the columns of a subquery or VALUES only`},
	{"SELECT * FROM (VALUES (1)) AS x (a", `1:35: unexpected end of input, expected ')' or ','`},

	// window table functions
	{"SELECT * FROM TABLE(TUMBLE(TABLE t, TIMECOL => DESCRIPTOR(ts), INTERVAL '1' MINUTE))", `1:37: window function arguments are either all named (SIZE => ...) or all positional`},
	{"SELECT * FROM TABLE(TUMBLE(DATA => TABLE t, SIZE => INTERVAL '1' MINUTE))", `1:15: window TUMBLE needs its TIMECOL => DESCRIPTOR(col) argument`},
	{"SELECT * FROM TABLE(TUMBLE(DATA => TABLE t, DATA => TABLE u))", `1:45: DATA is given twice`},
	{"SELECT * FROM TABLE(TUMBLE(TABLE t, INTERVAL '1' MINUTE))", `1:37: unexpected "INTERVAL", expected DESCRIPTOR`},
	{"SELECT * FROM TABLE(TUMBLE(t, DESCRIPTOR(ts)))", `1:28: unexpected "t", expected TABLE or '('`},
	{"SELECT * FROM TABLE(TUMBLE((SELECT FROM t), DESCRIPTOR(ts), INTERVAL '1' MINUTE))", `1:36: unexpected "FROM", expected expression or '*'`},

	// OVER windows
	{"SELECT ROW_NUMBER() OVER FROM t", `1:26: unexpected "FROM", expected '(' or window name`},
	{"SELECT ROW_NUMBER() OVER (ORDER) FROM t", `1:32: unexpected ")", expected BY`},
	{"SELECT ROW_NUMBER() OVER (PARTITION a) FROM t", `1:37: unexpected "a", expected BY`},
	{"SELECT ROW_NUMBER() OVER (PARTITION BY ORDER BY a) FROM t", `1:40: unexpected "ORDER", expected expression`},
	{"SELECT ROW_NUMBER() OVER (PARTITION BY a b) FROM t", `1:42: unexpected "b", expected ',', ORDER BY, ROWS, RANGE or ')'`},
	{"SELECT ROW_NUMBER() OVER (ORDER BY a NULLS FIRST) FROM t", `1:38: unexpected "NULLS", expected ASC, DESC, ',', ROWS, RANGE or ')'`},
	{"SELECT ROW_NUMBER() OVER (ORDER BY a DESC ROWS) FROM t", `1:47: unexpected ")", expected UNBOUNDED, CURRENT ROW or offset`},
	{"SELECT SUM(a) OVER (ORDER BY a ROWS 1) FROM t", `1:38: unexpected ")", expected PRECEDING or FOLLOWING`},
	{"SELECT SUM(a) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING CURRENT ROW) FROM t", `1:57: unexpected "CURRENT", expected AND`},
	{"SELECT SUM(a) OVER (ORDER BY a ROWS 1 PRECEDING ORDER BY b) FROM t", `1:49: unexpected "ORDER", expected ')'`},
	{"SELECT SUM(a) OVER w FROM t WINDOW w (ORDER BY a)", `1:36: unexpected "w", expected ';'`},
	{"SELECT SUM(a) OVER w FROM t WINDOW w AS ORDER BY a", `1:41: unexpected "ORDER", expected '('`},
	{"SELECT ROW_NUMBER() OVER (ORDER BY a, ) FROM t", `1:39: unexpected ")", expected expression`},
	{"SELECT ROW_NUMBER() OVER (a) FROM t", `1:27: unexpected "a", expected PARTITION BY, ORDER BY, ROWS, RANGE or ')'`},
	{"SELECT ROW_NUMBER() OVER (", `1:27: unexpected end of input, expected PARTITION BY, ORDER BY, ROWS, RANGE or ')'`},
	{"SELECT ROW_NUMBER() FROM t", `1:21: unexpected "FROM", expected OVER`},
	{"SELECT RANK(a) OVER (ORDER BY a) FROM t", `1:13: RANK takes no arguments`},
	{"SELECT ROW_NUMBER(", `1:19: unexpected end of input, expected ')'`},
	{"SELECT (a + 1) OVER (ORDER BY a) FROM t", `1:16: unexpected "OVER", expected ';'`},
	{"SELECT a OVER (ORDER BY a) FROM t", `1:10: unexpected "OVER", expected ';'`},

	// statements and scripts
	{"SELECT a FROM t; FOO", `1:18: unexpected "FOO", expected SELECT, INSERT, CREATE, DROP, SET, EXPLAIN, SHOW, DESCRIBE or '('`},
	{"SELECT 1;;", `1:10: unexpected ";", expected SELECT, INSERT, CREATE, DROP, SET, EXPLAIN, SHOW, DESCRIBE or '('`},
	{"SELECT 1 SELECT 2", `1:10: unexpected "SELECT", expected ';'`},
	{"INSERT t SELECT 1", `1:8: unexpected "t", expected INTO`},
	{"INSERT INTO t (a, b SELECT 1", `1:21: unexpected "SELECT", expected ')' or ','`},
	{"DROP t", `1:6: unexpected "t", expected TABLE or VIEW`},
	{"EXPLAIN DROP TABLE t", `1:9: unexpected "DROP", expected INSERT, SELECT, VALUES, '(' or STATEMENT SET`},
	{"SET 'a' = ", `1:10: unexpected end of input, expected string literal, identifier or number`},
	{"CREATE VIEW v SELECT 1", `1:15: unexpected "SELECT", expected AS`},
}

func TestErrors(t *testing.T) {
	for _, tt := range errorTests {
		_, err := Parse(tt.in)
		if err == nil {
			t.Errorf("Parse(%q) succeeded, want error %s", tt.in, tt.want)
			continue
		}
		var perr *Error
		if !errors.As(err, &perr) {
			t.Errorf("Parse(%q) error is %T, want *Error", tt.in, err)
			continue
		}
		if got, _, _ := strings.Cut(err.Error(), "\n"); got != tt.want {
			t.Errorf("Parse(%q)\n got: %s\nwant: %s", tt.in, got, tt.want)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	_, err := Parse("SELECT a,\n\tb FORM t")
	want := "2:4: unexpected \"FORM\", expected FROM\n\tb FORM t\n\t  ^"
	if err == nil || err.Error() != want {
		t.Errorf("got:\n%v\nwant:\n%s", err, want)
	}
	var perr *Error
	if !errors.As(err, &perr) || perr.Line != "\tb FORM t" || perr.Pos.Line != 2 || perr.Pos.Column != 4 {
		t.Errorf("error fields: %#v", perr)
	}
}

func TestParseExprErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "1:1: unexpected end of input, expected expression"},
		{"a b", `1:3: unexpected "b", expected end of input`},
		{"a +", "1:4: unexpected end of input, expected expression"},
		{"'x", "1:1: unterminated string literal"},
	}
	for _, tt := range tests {
		_, err := ParseExpr(tt.in)
		var perr *Error
		if !errors.As(err, &perr) {
			t.Errorf("ParseExpr(%q) error = %v, want *Error", tt.in, err)
			continue
		}
		if got, _, _ := strings.Cut(err.Error(), "\n"); got != tt.want {
			t.Errorf("ParseExpr(%q)\n got: %s\nwant: %s", tt.in, got, tt.want)
		}
	}
}

func TestComplete(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"", false},
		{"SELECT 1", false},
		{"SELECT 1;", true},
		{"SELECT 1;  \n", true},
		{"SELECT 1; -- done", true},
		{"SELECT 1; /* done */", true},
		{"SELECT 1;\nSELECT", false},
		{";", true},
		{"SELECT ';'", false},
		{"SELECT ';", false},
		{"SELECT 1 -- ;", false},
		{"SELECT 1 /* ; */", false},
		{"SELECT 1 /* ;", false},
		{"SELECT `a;`", false},
		{"SELECT `a;", false},
		{"SELECT 'it''s;'", false},
		{"SELECT 'it''s';", true},
		{"SELECT\n  a\nFROM t\n;", true},
	}
	for _, tt := range tests {
		if got := Complete(tt.text); got != tt.want {
			t.Errorf("Complete(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestDeepNesting(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SELECT " + strings.Repeat("(", 1001) + "1", "1:1008: parentheses nested too deeply"},
		{"SELECT " + strings.Repeat("- ", 1001) + "1", "1:2006: expression nested too deeply"},
		{"SELECT " + strings.Repeat("NOT ", 1001) + "a", "1:4008: expression nested too deeply"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		if err == nil {
			t.Errorf("Parse(%.20q...) succeeded", tt.in)
			continue
		}
		if got, _, _ := strings.Cut(err.Error(), "\n"); got != tt.want {
			t.Errorf("Parse(%.20q...) = %s, want %s", tt.in, got, tt.want)
		}
	}
	deep := strings.Repeat("(", 500) + "1" + strings.Repeat(")", 500)
	if _, err := ParseExpr(deep); err != nil {
		t.Errorf("500 nested parentheses: %v", err)
	}
}
