package planner

import (
	"errors"
	"fmt"

	"github.com/streamsql/streamsql/parser"
)

// Sentinel errors callers may test with errors.Is.
var (
	ErrExists   = errors.New("already exists")
	ErrNotFound = errors.New("not found")
)

// Error is a planning error at a position of the SQL text.
type Error struct {
	Pos parser.Pos
	Msg string
}

func (e *Error) Error() string {
	if e.Pos.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("%d:%d: %s", e.Pos.Line, e.Pos.Column, e.Msg)
}

// positioned is any AST node: it knows where it starts in the SQL text.
type positioned interface{ Position() parser.Pos }

func errorf(at positioned, format string, args ...any) error {
	return &Error{Pos: at.Position(), Msg: fmt.Sprintf(format, args...)}
}

// suggest returns ` (did you mean "x"?)` for the candidate closest to name, or "".
func suggest(name string, candidates []string) string {
	best, bestDist := "", 1<<30
	for _, c := range candidates {
		if d := editDistance(toLower(name), toLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	if best == "" || bestDist > max(2, len(name)/2) {
		if len(candidates) > 0 && len(candidates) <= 8 {
			return fmt.Sprintf(" (candidates: %s)", joinQuoted(candidates))
		}
		return ""
	}
	return fmt.Sprintf(" (did you mean `%s`?)", best)
}

func joinQuoted(names []string) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ", "
		}
		s += "`" + n + "`"
	}
	return s
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func toLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
