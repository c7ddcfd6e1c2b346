package parser

import (
	"reflect"
	"regexp"
	"testing"
)

// TestProductionWords checks that every production and token the grammar can name in an
// error has words for users.
func TestProductionWords(t *testing.T) {
	ebnf := regexp.MustCompile(`"(?:[^"\\]|\\.)*"`).ReplaceAllString(stmtParser.String(), "")
	for _, name := range regexp.MustCompile(`<\w+>|\w+`).FindAllString(ebnf, -1) {
		if productionWords[name] == nil {
			t.Errorf("productionWords has no entry for %s", name)
		}
	}
}

func TestFirstOf(t *testing.T) {
	tests := []struct {
		ebnf string
		want []string
	}{
		{`"FROM" TableRefG ("WHERE" Expr)?`, []string{"FROM"}},
		{`("," OptionG)* ListEnd`, []string{"','", "')'"}},
		{`"NOT" "ENFORCED"`, []string{"NOT ENFORCED"}},
		{`"NOT" "ENFORCED" ("COMMENT" <string>)?`, []string{"NOT ENFORCED"}},
		{`"KEY" "(" identG`, []string{"KEY"}},
		{`("TABLE" CreateTableG | "VIEW" CreateViewG)`, []string{"TABLE", "VIEW"}},
		{`((?= "IF" "NOT") "IF" "NOT" "EXISTS")? identG "("`, []string{"IF", "identifier"}},
		{`(<string> | (<ident> | <keyword> | <number>))`, []string{"string literal", "identifier", "number"}},
		{`"SELECT" ("DISTINCT" | "ALL")? SelectItemG`, []string{"SELECT"}},
	}
	for _, tt := range tests {
		if got := firstOf(tt.ebnf); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("firstOf(%s) = %q, want %q", tt.ebnf, got, tt.want)
		}
	}
}
