package expr

import (
	"encoding/binary"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"strings"

	"github.com/apache/arrow/go/v15/arrow/array"
	"unicode/utf8"

	"github.com/streamsql/streamsql/planner"
)

// likeKind is the shape of a LIKE pattern; the simple ones avoid the general matcher, as
// Flink's LikeCallGen does.
type likeKind uint8

const (
	likeExact    likeKind = iota // abc
	likePrefix                   // abc%
	likeSuffix                   // %abc
	likeContains                 // %abc%
	likeAny                      // % (any non-NULL string)
	likeGeneral
)

type likeTok struct {
	kind byte // 'l' literal, '_' one character, '%' any characters
	lit  string
}

// likeMatcher is a compiled LIKE pattern.
type likeMatcher struct {
	kind likeKind
	lit  string
	toks []likeTok
}

// compileLike parses pattern with an optional escape character (escape "" means none).
func compileLike(pattern, escape string) (*likeMatcher, error) {
	var esc rune = -1
	if escape != "" {
		r, w := utf8.DecodeRuneInString(escape)
		if w != len(escape) {
			return nil, newError(ErrInvalidArgument, "invalid LIKE escape character '%s'", escape)
		}
		esc = r
	}
	var toks []likeTok
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			toks = append(toks, likeTok{kind: 'l', lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(pattern); {
		r, w := utf8.DecodeRuneInString(pattern[i:])
		i += w
		switch {
		case r == esc:
			if i >= len(pattern) {
				return nil, newError(ErrInvalidArgument, "invalid escape sequence in LIKE pattern '%s'", pattern)
			}
			next, w2 := utf8.DecodeRuneInString(pattern[i:])
			if next != '%' && next != '_' && next != esc {
				return nil, newError(ErrInvalidArgument, "invalid escape sequence in LIKE pattern '%s'", pattern)
			}
			i += w2
			lit.WriteRune(next)
		case r == '%':
			flush()
			if len(toks) == 0 || toks[len(toks)-1].kind != '%' {
				toks = append(toks, likeTok{kind: '%'})
			}
		case r == '_':
			flush()
			toks = append(toks, likeTok{kind: '_'})
		default:
			lit.WriteRune(r)
		}
	}
	flush()
	m := &likeMatcher{kind: likeGeneral, toks: toks}
	switch {
	case len(toks) == 0:
		m.kind, m.lit = likeExact, ""
	case len(toks) == 1 && toks[0].kind == 'l':
		m.kind, m.lit = likeExact, toks[0].lit
	case len(toks) == 1 && toks[0].kind == '%':
		m.kind = likeAny
	case len(toks) == 2 && toks[0].kind == 'l' && toks[1].kind == '%':
		m.kind, m.lit = likePrefix, toks[0].lit
	case len(toks) == 2 && toks[0].kind == '%' && toks[1].kind == 'l':
		m.kind, m.lit = likeSuffix, toks[1].lit
	case len(toks) == 3 && toks[0].kind == '%' && toks[1].kind == 'l' && toks[2].kind == '%':
		m.kind, m.lit = likeContains, toks[1].lit
	}
	return m, nil
}

func (m *likeMatcher) match(s string) bool {
	switch m.kind {
	case likeExact:
		return s == m.lit
	case likePrefix:
		return len(s) >= len(m.lit) && s[:len(m.lit)] == m.lit
	case likeSuffix:
		return len(s) >= len(m.lit) && s[len(s)-len(m.lit):] == m.lit
	case likeContains:
		return strings.Contains(s, m.lit)
	case likeAny:
		return true
	}
	return matchTokens(m.toks, s)
}

// matchTokens matches s against tokens, backtracking only to the last '%' (linear for
// patterns without '%', and in practice for the rest).
func matchTokens(toks []likeTok, s string) bool {
	ti, si := 0, 0
	starT, starS := -1, 0
	for {
		if ti < len(toks) {
			t := toks[ti]
			switch t.kind {
			case '%':
				starT, starS = ti, si
				ti++
				continue
			case 'l':
				if strings.HasPrefix(s[si:], t.lit) {
					si += len(t.lit)
					ti++
					continue
				}
			case '_':
				if si < len(s) {
					_, w := utf8.DecodeRuneInString(s[si:])
					si += w
					ti++
					continue
				}
			}
		} else if si == len(s) {
			return true
		}
		if starT < 0 || starS >= len(s) {
			return false
		}
		_, w := utf8.DecodeRuneInString(s[starS:])
		starS += w
		ti, si = starT+1, starS
	}
}

// likeKernel compiles a literal pattern once; a pattern column is compiled per distinct
// consecutive value.
func likeKernel(args []node, argT []planner.Type) (kernelFn, error) {
	for i, t := range argT {
		if t.Kind != planner.String && t.Kind != planner.Null {
			return nil, newError(ErrUnsupported, "LIKE argument %d is %s, want STRING", i+1, t)
		}
	}
	escNode := node(&constNode{d: datum{s: ""}})
	if len(args) == 3 {
		escNode = args[2]
	}
	escD, escConst := isConst(escNode)
	patD, patConst := isConst(args[1])
	if patConst && escConst && !patD.null && !escD.null {
		m, err := compileLike(patD.s, escD.s)
		if err != nil {
			return nil, err
		}
		return func(c *ctx, n int, a []datum) (datum, error) { return likeConst(c, n, a[:1], m) }, nil
	}
	var last *likeMatcher
	var lastPat, lastEsc string
	return func(c *ctx, n int, a []datum) (datum, error) {
		s, p := strColOf(a[0]), strColOf(a[1])
		e := strCol{s: "", scalar: true}
		if len(a) == 3 {
			e = strColOf(a[2])
		}
		return boolRows(c, n, a, func(i int) (bool, bool, error) {
			pat, esc := p.at(i), e.at(i)
			if last == nil || pat != lastPat || esc != lastEsc {
				m, err := compileLike(pat, esc)
				if err != nil {
					return false, false, err
				}
				last, lastPat, lastEsc = m, strings.Clone(pat), strings.Clone(esc)
			}
			return last.match(s.at(i)), true, nil
		})
	}, nil
}

// likeConst matches a column against a compiled pattern, eight rows a byte.
func likeConst(c *ctx, n int, args []datum, m *likeMatcher) (datum, error) {
	vbuf := andValidity(c.mem, n, args)
	buf, out := arrowbuf.AllocBits(c.mem, n)
	s := strColOf(args[0])
	switch {
	case m.kind == likePrefix && len(m.lit) <= 8 && n > 0:
		prefix8(s, n, m.lit, out)
	case m.kind == likePrefix:
		lit := m.lit
		for i := 0; i < n; i++ {
			v := s.at(i)
			out[i>>3] |= b2u8(len(v) >= len(lit) && v[:len(lit)] == lit) << (i & 7)
		}
	default:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u8(m.match(s.at(i))) << (i & 7)
		}
	}
	return arrDatum(arrowbuf.NewArray(boolType, n, vbuf, buf, array.UnknownNullCount), true), nil
}

// prefix8 packs whether each value starts with lit (at most 8 bytes) into out, comparing one
// masked 8-byte load per row where the value buffer has 8 bytes to read.
func prefix8(s strCol, n int, lit string, out []byte) {
	var litBuf [8]byte
	copy(litBuf[:], lit)
	want := binary.LittleEndian.Uint64(litBuf[:])
	mask := uint64(1)<<(8*len(lit)) - 1
	if len(lit) == 8 {
		mask = ^uint64(0)
	}
	offs, data := s.offs[:n+1], s.data
	l := int32(len(lit))
	for i := 0; i < n; i++ {
		o0, o1 := offs[i], offs[i+1]
		var ok bool
		if int(o0)+8 <= len(data) {
			ok = o1-o0 >= l && binary.LittleEndian.Uint64(data[o0:])&mask == want
		} else {
			ok = o1-o0 >= l && string(data[o0:o0+l]) == lit
		}
		out[i>>3] |= b2u8(ok) << (i & 7)
	}
}
