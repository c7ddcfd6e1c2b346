package parser

import "testing"

func TestCompleteStatementSet(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"EXECUTE STATEMENT SET BEGIN", false},
		{"EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1;", false},
		{"EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT CASE WHEN b THEN 1 END;", false},
		{"EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; END;", true},
		{"execute statement set begin insert into a select 'END'; end ;", true},
		{"BEGIN STATEMENT SET;", true},
		{"END;", true},
		{"SELECT CASE WHEN a THEN 1 END;", true},
	} {
		if got := Complete(c.text); got != c.want {
			t.Errorf("Complete(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

func TestCreateOrReplaceOnlyTables(t *testing.T) {
	for _, sql := range []string{"CREATE OR REPLACE VIEW v AS SELECT 1", "CREATE OR REPLACE FUNCTION f AS 'x'"} {
		if _, err := Parse(sql); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", sql)
		}
	}
}
