package parser

import (
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// Hint is one hint of a /*+ ... */ comment: a table hint after a table name (Flink's
// OPTIONS('k' = 'v', ...), dynamic table options) or a query hint after SELECT
// (BROADCAST(t), STATE_TTL('t' = '1d'), ...). Name is upper case; a hint's arguments are
// either key-value Options or plain Args (names or strings, unquoted).
type Hint struct {
	Pos     Pos
	Name    string
	Options []*Option
	Args    []string
}

func (n *Hint) Position() Pos { return n.Pos }

func (n *Hint) String() string {
	var args []string
	for _, o := range n.Options {
		args = append(args, o.String())
	}
	for _, a := range n.Args {
		args = append(args, quoteIdent(a))
	}
	if len(args) == 0 {
		return n.Name
	}
	return n.Name + "(" + strings.Join(args, ", ") + ")"
}

// hintsString prints hints as the comment they came in, with a leading space.
func hintsString(hints []*Hint) string {
	if len(hints) == 0 {
		return ""
	}
	parts := make([]string, len(hints))
	for i, h := range hints {
		parts[i] = h.String()
	}
	return " /*+ " + strings.Join(parts, ", ") + " */"
}

// hintsG reads the /*+ ... */ comments that come right where it stands: the lexer keeps
// them as Hint tokens that the grammar skips (elides), so a hint anywhere else is a
// comment as before. It matches nothing when no hint is there.
type hintsG struct {
	Hints []*Hint
	// Err is why a hint could not be read: reported by toAST, since participle takes an
	// error from a production that consumed no tokens for no match.
	Err error
}

// Parse implements participle.Parseable.
func (g *hintsG) Parse(lex *lexer.PeekingLexer) error {
	found := false
	for {
		t, raw := lex.PeekAny(func(t lexer.Token) bool { return t.Type == tokHint })
		if t.Type != tokHint {
			break
		}
		hints, err := parseHints(t)
		if err != nil && g.Err == nil {
			g.Err = err
		}
		g.Hints = append(g.Hints, hints...)
		found = true
		lex.FastForward(raw)
	}
	if !found {
		return participle.NextMatch
	}
	return nil
}

func hintList(g *hintsG) ([]*Hint, error) {
	if g == nil {
		return nil, nil
	}
	return g.Hints, g.Err
}

// parseHints reads the hints of one /*+ ... */ token: name [( args )], separated by ','.
func parseHints(t lexer.Token) ([]*Hint, error) {
	body := strings.TrimSuffix(strings.TrimPrefix(t.Value, "/*+"), "*/")
	start := t.Pos
	start.Column += 3
	start.Offset += 3
	toks := lexAll(body)
	for i := range toks { // positions in the whole text
		p := &toks[i].Pos
		if p.Line == 1 {
			p.Column += start.Column - 1
		}
		p.Line += start.Line - 1
	}
	var hints []*Hint
	i := 0
	next := func() *lexer.Token { t := &toks[i]; i = min(i+1, len(toks)-1); return t }
	peek := func() *lexer.Token { return &toks[i] }
	for {
		name := next()
		if name.Type != tokIdent && name.Type != tokKeyword {
			return nil, unexpected(name, "hint name")
		}
		h := &Hint{Pos: name.Pos, Name: strings.ToUpper(name.Value)}
		if isPunct(peek(), "(") {
			next()
			for !isPunct(peek(), ")") {
				arg := next()
				switch {
				case arg.Type == tokString && isPunct(peek(), "="):
					next()
					v := next()
					if v.Type != tokString {
						return nil, unexpected(v, "string literal")
					}
					h.Options = append(h.Options, &Option{Pos: arg.Pos, Key: unquoteString(arg.Value), Value: unquoteString(v.Value)})
				case arg.Type == tokString:
					h.Args = append(h.Args, unquoteString(arg.Value))
				case isName(arg) || arg.Type == tokKeyword:
					h.Args = append(h.Args, identText(arg))
				default:
					return nil, unexpected(arg, "hint argument")
				}
				if len(h.Options) > 0 && len(h.Args) > 0 {
					return nil, errorAt(arg.Pos, "a hint takes 'key' = 'value' options or names, not both")
				}
				if isPunct(peek(), ",") {
					next()
				} else if !isPunct(peek(), ")") {
					return nil, unexpected(peek(), "')'", "','")
				}
			}
			next()
		}
		hints = append(hints, h)
		switch t := next(); {
		case t.EOF():
			return hints, nil
		case !isPunct(t, ","):
			return nil, unexpected(t, "','", "end of hint")
		}
	}
}
