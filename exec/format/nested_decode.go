package format

import (
	"bytes"
	"strconv"
	"time"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/planner"
)

// nestedCol reads JSON values into a ROW, ARRAY or MAP column: a ROW from an object
// (fields by name, case-sensitively; missing ones and unknown ones as for a record), an
// ARRAY from an array, a MAP from an object whose keys are read as the key type. A value
// is parsed into a tree first (nil for NULL, a *cell for a scalar, []any for a ROW's fields
// or an ARRAY's elements, []mapEntry for a MAP) and appended only once the whole record
// is good.
type nestedCol struct {
	t      planner.Type
	leaf   column       // a scalar type
	fields []*nestedCol // ROW
	index  map[string]int
	elem   *nestedCol // ARRAY's element, MAP's key
	value  *nestedCol // MAP's value
}

type mapEntry struct{ key, value any }

func newNestedCol(t planner.Type) *nestedCol {
	n := &nestedCol{t: t}
	switch t.Kind {
	case planner.Row:
		n.index = map[string]int{}
		for i, f := range t.Fields() {
			n.fields = append(n.fields, newNestedCol(f.Type))
			if _, dup := n.index[f.Name]; !dup {
				n.index[f.Name] = i
			}
		}
	case planner.Array:
		n.elem = newNestedCol(t.Elem())
	case planner.Map, planner.Multiset:
		n.elem, n.value = newNestedCol(t.Elem()), newNestedCol(t.Value())
	default:
		n.leaf = leafColumn("", t)
	}
	return n
}

// parse reads the JSON value at b[p] (not whitespace) and returns its tree and end, or a
// message.
func (n *nestedCol) parse(b []byte, p int, loc *time.Location, depth int) (any, int, string) {
	if p >= len(b) {
		return nil, p, offsetMsg("expected a value", p)
	}
	if hasLiteral(b, p, "null") {
		if n.t.NotNull {
			return nil, p, "NULL is not allowed in " + n.t.Nullable().String()
		}
		return nil, p + 4, ""
	}
	if depth >= maxJSONDepth {
		return nil, p, offsetMsg("nesting too deep", p)
	}
	switch n.t.Kind {
	case planner.Row:
		fields := make([]any, len(n.fields))
		end, msg := eachMember(b, p, func(key []byte, q int) (int, string) {
			i, ok := n.index[string(key)]
			if !ok {
				return skipValue(b, q, depth+1)
			}
			v, q, msg := n.fields[i].parse(b, q, loc, depth+1)
			fields[i] = v
			return q, msg
		})
		if msg == "" {
			for i, f := range n.fields {
				if fields[i] == nil && f.t.NotNull {
					return nil, end, "NULL is not allowed in field " + n.t.Fields()[i].Name
				}
			}
		}
		return fields, end, msg
	case planner.Map, planner.Multiset:
		var entries []mapEntry
		end, msg := eachMember(b, p, func(key []byte, q int) (int, string) {
			k := &cell{}
			keyCol := n.elem.leaf
			if n.elem.t.IsNested() {
				return q, "a MAP key must be a scalar type to read it from JSON"
			}
			if r := keyCol.parseText(k, bytes.Clone(key), loc); r != "" {
				return q, keyCol.valueError(key, r)
			}
			v, q, msg := n.value.parse(b, q, loc, depth+1)
			if c, ok := v.(*cell); ok && msg == "" && n.t.Kind == planner.Multiset && c.i <= 0 {
				return q, "a MULTISET count must be a positive INT, got " + strconv.FormatInt(c.i, 10)
			}
			entries = append(entries, mapEntry{key: k, value: v})
			return q, msg
		})
		return entries, end, msg
	case planner.Array:
		if b[p] != '[' {
			return nil, p, n.leaf.valueErrorFor(n.t, b, p)
		}
		var elems []any
		q := skipWS(b, p+1)
		if q < len(b) && b[q] == ']' {
			return []any{}, q + 1, ""
		}
		for {
			q = skipWS(b, q)
			v, nq, msg := n.elem.parse(b, q, loc, depth+1)
			if msg != "" {
				return nil, nq, msg
			}
			elems = append(elems, v)
			q = skipWS(b, nq)
			if q < len(b) && b[q] == ',' {
				q++
				continue
			}
			if q < len(b) && b[q] == ']' {
				return elems, q + 1, ""
			}
			return nil, q, offsetMsg("expected ',' or ']'", q)
		}
	}
	return n.parseLeaf(b, p, loc)
}

// parseLeaf reads a scalar as the record decoder reads a column.
func (n *nestedCol) parseLeaf(b []byte, p int, loc *time.Location) (any, int, string) {
	c := &n.leaf
	v := &cell{}
	var text []byte
	var np int
	switch ch := b[p]; {
	case ch == '"':
		var buf []byte
		var msg string
		if text, np, msg = scanString(b, p, &buf); msg != "" {
			return nil, np, msg
		}
	case ch == 't' || ch == 'f':
		lit := "true"
		if ch == 'f' {
			lit = "false"
		}
		if !hasLiteral(b, p, lit) {
			return nil, p, offsetMsg("invalid literal", p)
		}
		np = p + len(lit)
		text = b[p:np]
		if c.kind != planner.Boolean && c.kind != planner.String {
			return nil, np, c.valueError(text, reasonSyntax)
		}
	case ch == '-' || (ch >= '0' && ch <= '9'):
		var ok bool
		if np, ok = scanNumber(b, p); !ok {
			return nil, np, offsetMsg("invalid number", p)
		}
		text = b[p:np]
		if c.kind == planner.Boolean || c.kind == planner.Date || c.kind == planner.Time {
			return nil, np, c.valueError(text, reasonSyntax)
		}
	case ch == '{' || ch == '[':
		var msg string
		if np, msg = skipValue(b, p, 0); msg != "" {
			return nil, np, msg
		}
		text = b[p:np]
		if c.kind != planner.String {
			return nil, np, c.valueError(text, reasonSyntax)
		}
		text = compactText(text)
	default:
		return nil, p, offsetMsg("unexpected "+strconv.QuoteRune(rune(ch)), p)
	}
	if r := c.parseText(v, text, loc); r != "" {
		return nil, np, c.valueError(text, r)
	}
	return v, np, ""
}

// valueErrorFor is the message for a JSON value at b[p] that cannot be a t.
func (c *column) valueErrorFor(t planner.Type, b []byte, p int) string {
	end, msg := skipValue(b, p, 0)
	if msg != "" {
		return msg
	}
	return "cannot parse " + quoteClipped(string(b[p:end])) + " as " + t.Nullable().String()
}

// eachMember calls f for every member of the JSON object at b[p], with its unescaped key
// and the position of its value; f returns the value's end.
func eachMember(b []byte, p int, f func(key []byte, q int) (int, string)) (int, string) {
	if b[p] != '{' {
		end, msg := skipValue(b, p, 0)
		if msg != "" {
			return end, msg
		}
		return end, "cannot parse " + quoteClipped(string(b[p:end])) + " as an object"
	}
	q := skipWS(b, p+1)
	if q < len(b) && b[q] == '}' {
		return q + 1, ""
	}
	for {
		q = skipWS(b, q)
		if q >= len(b) || b[q] != '"' {
			return q, offsetMsg("expected a field name", q)
		}
		var buf []byte
		key, nq, msg := scanString(b, q, &buf)
		if msg != "" {
			return nq, msg
		}
		q = skipWS(b, nq)
		if q >= len(b) || b[q] != ':' {
			return q, offsetMsg("expected ':'", q)
		}
		if q, msg = f(key, skipWS(b, q+1)); msg != "" {
			return q, msg
		}
		q = skipWS(b, q)
		if q < len(b) && b[q] == ',' {
			q++
			continue
		}
		if q < len(b) && b[q] == '}' {
			return q + 1, ""
		}
		return q, offsetMsg("expected ',' or '}'", q)
	}
}

// append appends a parsed tree to b, a builder of n's type.
func (n *nestedCol) append(b array.Builder, v any) {
	if v == nil {
		b.AppendNull()
		return
	}
	switch v := v.(type) {
	case []any:
		if sb, ok := b.(*array.StructBuilder); ok {
			sb.Append(true)
			for i, f := range n.fields {
				f.append(sb.FieldBuilder(i), v[i])
			}
			return
		}
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		vb := lb.ValueBuilder()
		for _, e := range v {
			n.elem.append(vb, e)
		}
	case []mapEntry:
		mb := b.(*array.MapBuilder)
		mb.Append(true)
		kb, ib := mb.KeyBuilder(), mb.ItemBuilder()
		for _, e := range v {
			n.elem.append(kb, e.key)
			n.value.append(ib, e.value)
		}
	case *cell:
		appendLeaf(b, v)
	}
}
