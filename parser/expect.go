package parser

import (
	"strconv"
	"strings"
)

// productionWords says in user words what each production of the grammar starts with, by
// the name participle gives it in EBNF.
var productionWords = map[string][]string{
	"StmtRoot":        statementKeywords,
	"StmtG":           statementKeywords,
	"Expr":            {"expression"},
	"identG":          {"identifier"},
	"typeG":           {"type"},
	"<ident>":         {"identifier"},
	"<quotedident>":   {"identifier"},
	"<keyword>":       {"identifier"},
	"<string>":        {"string literal"},
	"<number>":        {"number"},
	"ListEnd":         {"')'", "','"},
	"ElementsEnd":     {"')' or ',' after column definition"},
	"OptionG":         {"option 'key' = 'value'"},
	"TableElementG":   {"column definition", "WATERMARK", "PRIMARY KEY"},
	"ColumnG":         {"column definition"},
	"WatermarkG":      {"WATERMARK"},
	"watermarkFor":    {"WATERMARK"},
	"PrimaryKeyG":     {"PRIMARY KEY"},
	"primaryKey":      {"PRIMARY KEY"},
	"PartitionedByG":  {"PARTITIONED BY"},
	"MetadataG":       {"METADATA"},
	"partitionedBy":   {"PARTITIONED BY"},
	"SelectItemG":     {"expression", "'*'"},
	"groupItemG":      {"expression", "GROUPING SETS", "ROLLUP", "CUBE"},
	"qualifiedStar":   {"'*'"},
	"FromG":           {"table name", "'('"},
	"JoinG":           {"JOIN"},
	"JoinItemG":       {"JOIN", "','"},
	"unsupportedJoin": {"JOIN"},
	"TableRefG":       {"table name", "'('"},
	"windowTableG":    {"TABLE"},
	"unnestG":         {"UNNEST"},
	"matchRecognizeG": {"MATCH_RECOGNIZE"},
	"windowClauseG":   {"WINDOW"},
	"tableAliasG":     {"identifier"},
	"QueryStmtG":      {"SELECT", "VALUES", "'('"},
	"QueryExprG":      {"SELECT", "VALUES", "'('"},
	"BodyG":           {"SELECT", "VALUES", "'('"},
	"TermG":           {"SELECT", "VALUES", "'('"},
	"ValuesG":         {"VALUES"},
	"SetOpG":          {"UNION", "INTERSECT", "EXCEPT"},
	"OrderItemG":      {"expression"},
	"WithG":           {"WITH"},
	"CteG":            {"common table expression"},
	"SelectG":         {"SELECT"},
	"InsertG":         {"INSERT"},
	"CreateG":         {"CREATE"},
	"CreateTableG":    {"TABLE"},
	"likeG":           {"table name"},
	"LikeG":           {"table name"},
	"likeOptionG":     {"INCLUDING", "EXCLUDING", "OVERWRITING"},
	"LikeOptionG":     {"INCLUDING", "EXCLUDING", "OVERWRITING"},
	"CreateViewG":     {"VIEW"},
	"DropG":           {"DROP"},
	"SetG":            {"SET"},
	"ExplainG":        {"EXPLAIN"},
	"ShowTablesG":     {"SHOW"},
	"DescribeG":       {"DESCRIBE"},
	"StopJobG":        {"STOP"},
	"UseG":            {"USE"},
	"ResetG":          {"RESET"},
	"ExecuteSetG":     {"EXECUTE"},
	"StmtSetBodyG":    {"BEGIN"},
	"BeginSetG":       {"BEGIN"},
	"EndG":            {"END"},
	"hintsG":          {"hint"},
	"ExplainSetG":     {"STATEMENT SET"},
	"notInSetG":       {"INSERT", "END"},
	"CreateFunctionG": {"function name"},
}

// firstOf returns, in user words, what can start the EBNF participle reports as expected,
// e.g. `"FROM" TableRefG ("WHERE" Expr)?` gives [FROM]; `("," OptionG)* ListEnd` gives
// [',' ')']. A leading run of keywords is kept together: `"NOT" "ENFORCED"` gives
// [NOT ENFORCED].
func firstOf(ebnf string) []string {
	r := &ebnfReader{s: ebnf}
	alts, _ := r.alternatives(true)
	var out []string
	seen := map[string]bool{}
	for _, a := range alts {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// ebnfReader computes first sets over participle's EBNF text:
//
//	alternatives = sequence { "|" sequence }
//	sequence     = { term }
//	term         = ( literal | <token> | Name | "(" alternatives ")" | "(?=" ... ")" |
//	                 "(?!" ... ")" ) [ "?" | "*" | "+" | "!" ]
type ebnfReader struct {
	s string
	i int
}

func (r *ebnfReader) skipSpace() {
	for r.i < len(r.s) && r.s[r.i] == ' ' {
		r.i++
	}
}

func (r *ebnfReader) peek() byte {
	r.skipSpace()
	if r.i < len(r.s) {
		return r.s[r.i]
	}
	return 0
}

// alternatives reads up to an unmatched ')' or the end, returning the first set and whether
// the alternatives can match nothing. top joins a leading run of keywords.
func (r *ebnfReader) alternatives(top bool) (first []string, nullable bool) {
	for {
		f, n := r.sequence(top)
		first = append(first, f...)
		nullable = nullable || n
		if r.peek() != '|' {
			return first, nullable
		}
		r.i++
	}
}

func (r *ebnfReader) sequence(top bool) (first []string, nullable bool) {
	nullable = true
	var run []string // the required keywords the sequence starts with
	extending := top
	for c := r.peek(); c != 0 && c != '|' && c != ')'; c = r.peek() {
		f, n, kw := r.term()
		switch {
		case nullable:
			first = append(first, f...)
			nullable = n
			extending = extending && !n && kw != ""
			if extending {
				run = []string{kw}
			}
		case extending && !n && kw != "":
			run = append(run, kw)
		default:
			extending = false
		}
	}
	if len(run) > 1 {
		return []string{strings.Join(run, " ")}, false
	}
	return first, nullable
}

// term reads one term; kw is its keyword if it is a single keyword literal.
func (r *ebnfReader) term() (first []string, nullable bool, kw string) {
	switch c := r.peek(); {
	case c == '"':
		lit, err := strconv.QuotedPrefix(r.s[r.i:])
		if err != nil {
			r.i = len(r.s)
			return nil, true, ""
		}
		r.i += len(lit)
		word, _ := strconv.Unquote(lit)
		if isKeywordText(strings.ToUpper(word)) {
			kw = strings.ToUpper(word)
			first = []string{kw}
		} else {
			first = []string{"'" + word + "'"}
		}
	case c == '(':
		r.i++
		lookahead := strings.HasPrefix(r.s[r.i:], "?=") || strings.HasPrefix(r.s[r.i:], "?!")
		if lookahead {
			r.i += 2
		}
		first, nullable = r.alternatives(false)
		if r.peek() == ')' {
			r.i++
		}
		if lookahead {
			first, nullable = nil, true
		}
	default:
		start := r.i
		for r.i < len(r.s) && !strings.ContainsRune(" |()?*+!", rune(r.s[r.i])) {
			r.i++
		}
		if r.i == start { // stray character: skip it
			r.i++
			return nil, true, ""
		}
		name := r.s[start:r.i]
		first = productionWords[name] // expect_test.go checks that every name is there
		if first == nil {
			first = []string{name}
		}
	}
	switch r.peek() {
	case '?', '*':
		r.i++
		nullable = true
		kw = ""
	case '+', '!':
		r.i++
	}
	return first, nullable, kw
}
