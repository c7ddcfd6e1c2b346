package expr

import (
	"bytes"
	"encoding/json"
	"unsafe"

	"github.com/streamsql/streamsql/planner"
)

// JSON functions decode each row's text with encoding/json (numbers kept as their text)
// and walk a parsed path; text that is not JSON takes the ON ERROR default (NULL, FALSE).

func decodeJSON(s string) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(unsafe.Slice(unsafe.StringData(s), len(s))))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if dec.More() { // trailing text
		return nil, false
	}
	return v, true
}

// walkJSON follows the path's steps from v; ok is false where a step is missing.
func walkJSON(v any, p planner.JSONPath) (any, bool) {
	for _, st := range p.Steps {
		switch x := v.(type) {
		case map[string]any:
			if st.Element {
				return nil, false
			}
			next, ok := x[st.Key]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			if !st.Element || st.Index >= len(x) {
				return nil, false
			}
			v = x[st.Index]
		default:
			return nil, false
		}
	}
	return v, true
}

// pathCache parses the paths of a column once each.
type pathCache map[string]*planner.JSONPath

func (pc pathCache) get(p string) *planner.JSONPath {
	if jp, ok := pc[p]; ok {
		return jp
	}
	if len(pc) > 256 {
		clear(pc)
	}
	var out *planner.JSONPath
	if jp, err := planner.ParseJSONPath(p); err == nil {
		out = &jp
	}
	pc[string([]byte(p))] = out
	return out
}

// jsonValueKernel is JSON_VALUE(json, path): the scalar at path as STRING (numbers as Java
// prints them, booleans as true/false); NULL when it is missing, JSON null, an object or
// an array, or when the text is not JSON.
func jsonValueKernel() kernelFn {
	pc := pathCache{}
	return func(c *ctx, n int, args []datum) (datum, error) {
		s, p := strColOf(args[0]), strColOf(args[1])
		return strRows(c, n, args, dataLen(args[0], n)/2, func(i int, dst []byte) ([]byte, bool, error) {
			jp := pc.get(p.at(i))
			if jp == nil {
				return dst, false, nil
			}
			doc, ok := decodeJSON(s.at(i))
			if !ok {
				return dst, false, nil
			}
			v, ok := walkJSON(doc, *jp)
			if !ok {
				return dst, false, nil
			}
			switch v := v.(type) {
			case string:
				return append(dst, v...), true, nil
			case bool:
				if v {
					return append(dst, "true"...), true, nil
				}
				return append(dst, "false"...), true, nil
			case json.Number:
				if _, err := v.Int64(); err != nil {
					if f, err := v.Float64(); err == nil {
						return appendDouble(dst, f), true, nil // 1.50 is 1.5, 1e3 is 1000.0
					}
				}
				return append(dst, v.String()...), true, nil
			}
			return dst, false, nil
		})
	}
}

// jsonExistsKernel is JSON_EXISTS(json, path): whether path leads to a value (JSON null
// included); FALSE when the text is not JSON.
func jsonExistsKernel() kernelFn {
	pc := pathCache{}
	return func(c *ctx, n int, args []datum) (datum, error) {
		s, p := strColOf(args[0]), strColOf(args[1])
		return boolRows(c, n, args, func(i int) (bool, bool, error) {
			jp := pc.get(p.at(i))
			if jp == nil {
				return false, true, nil
			}
			doc, ok := decodeJSON(s.at(i))
			if !ok {
				return false, true, nil
			}
			_, ok = walkJSON(doc, *jp)
			return ok, true, nil
		})
	}
}

// isJSONKernel is x IS [NOT] JSON [VALUE|SCALAR|ARRAY|OBJECT]: FALSE for NULL either way.
func isJSONKernel(kind string, not bool) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		return predicateRows(c, n, args[0], func(s string) bool {
			v, ok := decodeJSON(s)
			if ok {
				switch v.(type) {
				case map[string]any:
					ok = kind == "VALUE" || kind == "OBJECT"
				case []any:
					ok = kind == "VALUE" || kind == "ARRAY"
				default:
					ok = kind == "VALUE" || kind == "SCALAR"
				}
			}
			return ok != not
		})
	}
}

func isJSONKernelFor(e *planner.Call, args []node, not bool) (kernelFn, error) {
	d, ok := isConst(args[1])
	if !ok || d.null {
		return nil, newError(ErrUnsupported, "%s needs a literal kind", e.Fn)
	}
	switch d.s {
	case "VALUE", "SCALAR", "ARRAY", "OBJECT":
		return isJSONKernel(d.s, not), nil
	}
	return nil, newError(ErrUnsupported, "%s does not know the kind %s", e.Fn, d.s)
}
