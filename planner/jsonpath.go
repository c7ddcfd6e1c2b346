package planner

import (
	"strconv"
	"strings"
)

// JSONPath is a parsed SQL/JSON path expression: a mode and member and element steps from
// the root, such as `lax $.a.b[0]` or `$['key with spaces']`.
type JSONPath struct {
	Strict bool
	Steps  []JSONStep
}

// JSONStep is a member (Key) or, with Element, an array element (Index, from 0); with
// Wildcard, every member (.*) or element ([*]).
type JSONStep struct {
	Key      string
	Index    int
	Element  bool
	Wildcard bool
}

// Wildcard reports whether the path has a wildcard step: it then leads to the array of
// all it matches.
func (p JSONPath) Wildcard() bool {
	for _, st := range p.Steps {
		if st.Wildcard {
			return true
		}
	}
	return false
}

// ParseJSONPath reads [lax|strict] $ followed by .name, ."name", ['name'], ["name"], [n],
// .* and [*] steps. Filters and functions are not supported.
func ParseJSONPath(p string) (JSONPath, error) {
	var jp JSONPath
	s := strings.TrimSpace(p)
	bad := func(why string) (JSONPath, error) {
		return JSONPath{}, &Error{Msg: "JSON path '" + p + "' " + why}
	}
	if mode, rest, ok := strings.Cut(s, " "); ok && (mode == "lax" || mode == "strict") {
		jp.Strict, s = mode == "strict", strings.TrimSpace(rest)
	}
	if !strings.HasPrefix(s, "$") {
		return bad("must start with $")
	}
	s = s[1:]
	quoted := func(q byte) (string, bool) {
		end := strings.IndexByte(s[1:], q)
		if end < 0 {
			return "", false
		}
		key := s[1 : end+1]
		s = s[end+2:]
		return key, true
	}
	for s != "" {
		switch s[0] {
		case '.':
			s = s[1:]
			if strings.HasPrefix(s, "[") { // $.["a.b"], as Flink's examples write it
				continue
			}
			if s != "" && (s[0] == '"' || s[0] == '\'') {
				key, ok := quoted(s[0])
				if !ok {
					return bad("has an unclosed quote")
				}
				jp.Steps = append(jp.Steps, JSONStep{Key: key})
				continue
			}
			end := strings.IndexAny(s, ".[")
			if end < 0 {
				end = len(s)
			}
			key := s[:end]
			if key == "*" {
				jp.Steps = append(jp.Steps, JSONStep{Wildcard: true})
				s = s[end:]
				continue
			}
			if key == "" || strings.ContainsAny(key, " ()?@") {
				return bad("has an unsupported step ." + key)
			}
			jp.Steps = append(jp.Steps, JSONStep{Key: key})
			s = s[end:]
		case '[':
			s = s[1:]
			if s != "" && (s[0] == '"' || s[0] == '\'') {
				key, ok := quoted(s[0])
				if !ok || !strings.HasPrefix(s, "]") {
					return bad("has an unclosed [")
				}
				s = s[1:]
				jp.Steps = append(jp.Steps, JSONStep{Key: key})
				continue
			}
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return bad("has an unclosed [")
			}
			if strings.TrimSpace(s[:end]) == "*" {
				jp.Steps = append(jp.Steps, JSONStep{Element: true, Wildcard: true})
				s = s[end+1:]
				continue
			}
			n, err := strconv.Atoi(strings.TrimSpace(s[:end]))
			if err != nil || n < 0 {
				return bad("has an unsupported subscript [" + s[:end] + "]")
			}
			jp.Steps = append(jp.Steps, JSONStep{Index: n, Element: true})
			s = s[end+1:]
		default:
			return bad("has an unexpected " + strconv.Quote(s[:1]))
		}
	}
	return jp, nil
}
