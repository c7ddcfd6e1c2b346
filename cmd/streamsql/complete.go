package main

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/streamsql/streamsql"
)

// keywords are the SQL words the shell completes, besides names.
var keywords = strings.Fields(`SELECT FROM WHERE GROUP BY HAVING ORDER LIMIT AS DISTINCT ALL UNION INTERSECT EXCEPT
JOIN LEFT RIGHT FULL INNER OUTER CROSS ON USING AND OR NOT NULL IS IN BETWEEN LIKE CASE WHEN THEN ELSE END CAST
TRUE FALSE CREATE TEMPORARY TABLE VIEW IF EXISTS DROP INSERT INTO VALUES WITH WATERMARK FOR PRIMARY KEY ENFORCED
INTERVAL SECOND MINUTE HOUR DAY MONTH YEAR TUMBLE HOP SESSION CUMULATE DESCRIPTOR PARTITION OVER ROWS RANGE
SET RESET SHOW TABLES VIEWS FUNCTIONS JOBS JOB CHECKPOINTS CATALOGS DATABASES CURRENT DESCRIBE EXPLAIN STOP SAVEPOINT
DRAIN USE CATALOG DATABASE BOOLEAN INT INTEGER BIGINT TINYINT SMALLINT DOUBLE FLOAT DECIMAL STRING VARCHAR CHAR
TIMESTAMP TIMESTAMP_LTZ DATE TIME ROW ARRAY MAP ASC DESC GROUPING SETS ROLLUP CUBE GROUPING_ID EXECUTE STATEMENT BEGIN
REPLACE LIKE INCLUDING EXCLUDING OVERWRITING OPTIONS CONSTRAINTS GENERATED WATERMARKS PLAN CHANGELOG_MODE ESTIMATED_COST`)

// completer completes the word before the cursor in the shell: SET keys inside the
// quotes after SET or RESET, otherwise keywords, table and view names, the columns of
// the tables and views the statement names (of every table while it names none), and
// functions.
type completer struct {
	vocabulary func() streamsql.Vocabulary
	pending    func() string // the lines of the statement typed so far
}

// quotedKey matches a SET or RESET whose key is being typed.
var quotedKey = regexp.MustCompile(`(?i)\b(SET|RESET)\s+'([^']*)$`)

func (c *completer) Do(line []rune, pos int) ([][]rune, int) {
	before := string(line[:pos])
	v := c.vocabulary()
	if m := quotedKey.FindStringSubmatch(before); m != nil {
		return suffixes(m[2], v.Keys, false, "' = '"), len([]rune(m[2]))
	}
	start := pos
	for start > 0 && (unicode.IsLetter(line[start-1]) || unicode.IsDigit(line[start-1]) || line[start-1] == '_') {
		start--
	}
	word := string(line[start:pos])
	// After "name." only the columns of that table or view.
	if start > 0 && line[start-1] == '.' {
		q := start - 1
		for q > 0 && (unicode.IsLetter(line[q-1]) || unicode.IsDigit(line[q-1]) || line[q-1] == '_') {
			q--
		}
		if cols, ok := v.Columns[strings.ToLower(string(line[q:start-1]))]; ok {
			return suffixes(word, cols, false, ""), len([]rune(word))
		}
	}
	statement := c.pending() + before
	var names []string
	for _, t := range v.Tables {
		if regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(t) + `\b`).MatchString(statement) {
			names = append(names, v.Columns[strings.ToLower(t)]...)
		}
	}
	if names == nil { // the statement names no table yet: the columns of them all
		for _, t := range v.Tables {
			names = append(names, v.Columns[strings.ToLower(t)]...)
		}
	}
	names = append(names, v.Tables...)
	out := suffixes(word, names, false, "")
	out = append(out, suffixes(word, v.Functions, true, "(")...)
	out = append(out, suffixes(word, keywords, true, "")...)
	return dedupe(out), len([]rune(word))
}

// suffixes returns what completes word to each candidate starting with it (case
// insensitively), then tail. Upper-case words (keywords, functions) follow the case of
// what was typed.
func suffixes(word string, candidates []string, upper bool, tail string) [][]rune {
	var out [][]rune
	lower := word != "" && strings.ToLower(word) == word
	for _, cand := range candidates {
		if len(cand) < len(word) || !strings.EqualFold(cand[:len(word)], word) {
			continue
		}
		rest := cand[len(word):]
		if upper && lower {
			rest = strings.ToLower(rest)
		}
		out = append(out, []rune(rest+tail))
	}
	return out
}

func dedupe(in [][]rune) [][]rune {
	seen := map[string]bool{}
	var out [][]rune
	for _, r := range in {
		if !seen[string(r)] {
			seen[string(r)] = true
			out = append(out, r)
		}
	}
	return out
}
