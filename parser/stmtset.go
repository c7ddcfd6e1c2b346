package parser

import (
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// StatementSetStmt is EXECUTE STATEMENT SET BEGIN insert; ... END: INSERTs that run as
// one job.
type StatementSetStmt struct {
	Pos     Pos
	Inserts []*InsertStmt
}

// BeginStatementSetStmt is BEGIN STATEMENT SET: the INSERTs up to the END that follows
// are collected, and run as one job at the END.
type BeginStatementSetStmt struct {
	Pos Pos
}

// EndStmt is END, which closes BEGIN STATEMENT SET.
type EndStmt struct {
	Pos Pos
}

func (*StatementSetStmt) stmt()                {}
func (*BeginStatementSetStmt) stmt()           {}
func (*EndStmt) stmt()                         {}
func (n *StatementSetStmt) Position() Pos      { return n.Pos }
func (n *BeginStatementSetStmt) Position() Pos { return n.Pos }
func (n *EndStmt) Position() Pos               { return n.Pos }

func (n *StatementSetStmt) String() string {
	var b strings.Builder
	b.WriteString("EXECUTE STATEMENT SET BEGIN ")
	for _, ins := range n.Inserts {
		b.WriteString(ins.String() + "; ")
	}
	b.WriteString("END")
	return b.String()
}

func (n *BeginStatementSetStmt) String() string { return "BEGIN STATEMENT SET" }
func (n *EndStmt) String() string               { return "END" }

// executeSetG is EXECUTE STATEMENT SET BEGIN ... END.
type executeSetG struct {
	Pos  Pos
	Body *stmtSetBodyG `parser:"'EXECUTE' 'STATEMENT' 'SET' @@"`
}

// explainSetG is the statement set EXPLAIN explains: [EXECUTE] STATEMENT SET BEGIN ...
// END.
type explainSetG struct {
	Execute bool          `parser:"( @'EXECUTE' 'STATEMENT' | 'STATEMENT' ) 'SET'"`
	Body    *stmtSetBodyG `parser:"@@"`
}

// stmtSetBodyG is BEGIN insert; ... END.
type stmtSetBodyG struct {
	Pos     Pos
	Inserts []*insertG `parser:"'BEGIN' ( @@ ';' )*"`
	Other   *notInSetG `parser:"@@? 'END'"`
}

// notInSetG matches nothing: it fails with a clear message at a statement other than
// INSERT in a statement set, which would otherwise be reported as a token where END was
// expected. It consumes the token it reports, or participle would take the error for no
// match.
type notInSetG struct{}

// Parse implements participle.Parseable.
func (*notInSetG) Parse(lex *lexer.PeekingLexer) error {
	t := lex.Peek()
	if t.EOF() || isKeyword(t, "END") || isWord(t, "INSERT") {
		return participle.NextMatch
	}
	lex.Next()
	return errorAt(t.Pos, "a statement set holds INSERT INTO statements only, each ending in ';', then END")
}

func (g *stmtSetBodyG) toAST() (*StatementSetStmt, error) {
	if len(g.Inserts) == 0 {
		return nil, errorAt(g.Pos, "a statement set needs at least one INSERT INTO")
	}
	set := &StatementSetStmt{Pos: g.Pos}
	for _, ins := range g.Inserts {
		s, err := ins.toAST()
		if err != nil {
			return nil, err
		}
		set.Inserts = append(set.Inserts, s.(*InsertStmt))
	}
	return set, nil
}

func (g *executeSetG) toAST() (Stmt, error) {
	set, err := g.Body.toAST()
	if err != nil {
		return nil, err
	}
	set.Pos = g.Pos
	return set, nil
}

// beginSetG is BEGIN STATEMENT SET.
type beginSetG struct {
	Pos   Pos
	Begin bool `parser:"@'BEGIN' 'STATEMENT' 'SET'"`
}

func (g *beginSetG) toAST() (Stmt, error) { return &BeginStatementSetStmt{Pos: g.Pos}, nil }

// endG is END.
type endG struct {
	Pos Pos
	End bool `parser:"@'END'"`
}

func (g *endG) toAST() (Stmt, error) { return &EndStmt{Pos: g.Pos}, nil }

// statementSetOpen reports whether the tokens of text leave an EXECUTE STATEMENT SET
// BEGIN without its END: its INSERTs end in ';' before the statement does. The END of a
// CASE is not the set's.
func statementSetOpen(toks []lexer.Token) bool {
	open, cases := false, 0
	word := func(i int, w string) bool {
		return i < len(toks) && (toks[i].Type == tokIdent || toks[i].Type == tokKeyword) && strings.EqualFold(toks[i].Value, w)
	}
	for i := range toks {
		switch {
		case !open && word(i, "EXECUTE") && word(i+1, "STATEMENT") && word(i+2, "SET") && word(i+3, "BEGIN"):
			open = true
		case open && word(i, "CASE"):
			cases++
		case open && word(i, "END") && cases > 0:
			cases--
		case open && word(i, "END"):
			open = false
		}
	}
	return open
}
