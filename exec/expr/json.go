package expr

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"unsafe"

	"github.com/streamsql/streamsql/planner"
)

// JSON functions decode each row's text (numbers kept as their text, objects in their
// order) and walk a parsed path; text that is not JSON takes the ON ERROR default (NULL,
// FALSE).

// jsonObject is a decoded JSON object, its members in the order of the text.
type jsonObject struct {
	keys []string
	vals []any
}

// get returns the member named key (the last, if it repeats).
func (o *jsonObject) get(key string) (any, bool) {
	for i := len(o.keys) - 1; i >= 0; i-- {
		if o.keys[i] == key {
			return o.vals[i], true
		}
	}
	return nil, false
}

func decodeJSON(s string) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(unsafe.Slice(unsafe.StringData(s), len(s))))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil || dec.More() {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF { // trailing text
		return nil, false
	}
	return v, true
}

// decodeValue reads one value: *jsonObject, []any, string, json.Number, bool or nil.
func decodeValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		o := &jsonObject{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			o.keys, o.vals = append(o.keys, k.(string)), append(o.vals, v)
		}
		_, err := dec.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token()
		return a, err
	}
	return t, nil
}

// appendJSON writes v compactly.
func appendJSON(dst []byte, v any) []byte {
	switch v := v.(type) {
	case *jsonObject:
		dst = append(dst, '{')
		for i, k := range v.keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			b, _ := json.Marshal(k)
			dst = append(append(dst, b...), ':')
			dst = appendJSON(dst, v.vals[i])
		}
		return append(dst, '}')
	case []any:
		dst = append(dst, '[')
		for i, x := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, x)
		}
		return append(dst, ']')
	case json.Number:
		return append(dst, v...)
	case nil:
		return append(dst, "null"...)
	}
	b, _ := json.Marshal(v)
	return append(dst, b...)
}

// walkJSON follows the path's steps from v; ok is false where a step is missing. A path
// with a wildcard leads to the array of everything it matches (ok when it matches some).
func walkJSON(v any, p planner.JSONPath) (any, bool) {
	if !p.Wildcard() {
		return step(v, p.Steps)
	}
	var all []any
	collectJSON(v, p.Steps, &all)
	return all, len(all) > 0
}

func step(v any, steps []planner.JSONStep) (any, bool) {
	for _, st := range steps {
		switch x := v.(type) {
		case *jsonObject:
			if st.Element {
				return nil, false
			}
			next, ok := x.get(st.Key)
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

// collectJSON appends to all what steps match from v.
func collectJSON(v any, steps []planner.JSONStep, all *[]any) {
	if len(steps) == 0 {
		*all = append(*all, v)
		return
	}
	st, rest := steps[0], steps[1:]
	switch x := v.(type) {
	case *jsonObject:
		switch {
		case st.Element:
		case st.Wildcard:
			for _, m := range x.vals {
				collectJSON(m, rest, all)
			}
		default:
			if m, ok := x.get(st.Key); ok {
				collectJSON(m, rest, all)
			}
		}
	case []any:
		switch {
		case !st.Element:
		case st.Wildcard:
			for _, m := range x {
				collectJSON(m, rest, all)
			}
		case st.Index < len(x):
			collectJSON(x[st.Index], rest, all)
		}
	}
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

// jsonValueKernel is JSON_VALUE(json, path [, returning, emptyKind, emptyDefault,
// errorKind, errorDefault]): the scalar at path as STRING (numbers as Java prints them,
// booleans as true/false). Without the clauses, NULL when it is missing, JSON null, an
// object or an array, or when the text is not JSON. With them, as Calcite does: what
// is missing or null (and, lax, what is not a scalar) takes the ON EMPTY clause; text
// that is not JSON, a strict path that leads nowhere or to no scalar, and a value that
// does not convert to the RETURNING type take the ON ERROR clause.
func jsonValueKernel() kernelFn {
	pc := pathCache{}
	return func(c *ctx, n int, args []datum) (datum, error) {
		s, p := strColOf(args[0]), strColOf(args[1])
		clauses := len(args) == 7
		var returning, emptyKind, emptyDef, errorKind, errorDef strCol
		if clauses {
			returning, emptyKind, emptyDef = strColOf(args[2]), strColOf(args[3]), strColOf(args[4])
			errorKind, errorDef = strColOf(args[5]), strColOf(args[6])
		}
		return strRows(c, n, args[:2], dataLen(args[0], n)/2, func(i int, dst []byte) ([]byte, bool, error) {
			behave := func(kind, def strCol, at int, what string) ([]byte, bool, error) {
				if !clauses {
					return dst, false, nil
				}
				switch kind.at(i) {
				case "ERROR":
					return dst, false, newError(ErrInvalidArgument, "JSON_VALUE: %s", what)
				case "DEFAULT":
					if defaults := args[at]; defaults.null || defaults.arr != nil && defaults.arr.IsNull(i) {
						return dst, false, nil
					}
					return append(dst, def.at(i)...), true, nil
				}
				return dst, false, nil
			}
			onEmpty := func(what string) ([]byte, bool, error) { return behave(emptyKind, emptyDef, 4, what) }
			onError := func(what string) ([]byte, bool, error) { return behave(errorKind, errorDef, 6, what) }
			jp := pc.get(p.at(i))
			doc, ok := decodeJSON(s.at(i))
			if jp == nil || !ok {
				return onError("the text is not JSON")
			}
			v, ok := walkJSON(doc, *jp)
			if !ok && jp.Strict {
				return onError("path " + p.at(i) + " leads nowhere")
			}
			var text []byte
			switch v := v.(type) {
			case string:
				text = append(dst, v...)
			case bool:
				text = strconv.AppendBool(dst, v)
			case json.Number:
				text = append(dst, v.String()...)
				if _, err := v.Int64(); err != nil {
					if f, err := v.Float64(); err == nil {
						text = appendDouble(dst, f) // 1.50 is 1.5, 1e3 is 1000.0
					}
				}
			case nil:
				return onEmpty("path " + p.at(i) + " leads to null")
			default:
				if jp.Strict {
					return onError("the value at path " + p.at(i) + " is not a scalar")
				}
				return onEmpty("the value at path " + p.at(i) + " is not a scalar")
			}
			if clauses && !converts(string(text[len(dst):]), returning.at(i)) {
				return onError("the value at path " + p.at(i) + " does not convert to " + returning.at(i))
			}
			return text, true, nil
		})
	}
}

// converts reports whether JSON_VALUE's text converts to its RETURNING type.
func converts(text, to string) bool {
	var err error
	switch to {
	case "BOOLEAN":
		if !strings.EqualFold(text, "true") && !strings.EqualFold(text, "false") {
			return false
		}
	case "INT":
		_, err = strconv.ParseInt(text, 10, 32)
	case "BIGINT":
		_, err = strconv.ParseInt(text, 10, 64)
	case "DOUBLE":
		_, err = strconv.ParseFloat(text, 64)
	}
	return err == nil
}

// jsonExistsKernel is JSON_EXISTS(json, path [onError ON ERROR]): whether path leads to
// a value (JSON null included). Text that is not JSON, a path that does not compile and
// a strict path that leads nowhere are errors, which give onError: TRUE, FALSE, NULL
// (UNKNOWN) or a failure (ERROR).
func jsonExistsKernel(onError string) kernelFn {
	pc := pathCache{}
	return func(c *ctx, n int, args []datum) (datum, error) {
		s, p := strColOf(args[0]), strColOf(args[1])
		fail := func(i int) (bool, bool, error) {
			switch onError {
			case "TRUE":
				return true, true, nil
			case "UNKNOWN":
				return false, false, nil
			case "ERROR":
				return false, false, newError(ErrInvalidArgument, "JSON_EXISTS: path %s does not apply to %s", quote(p.at(i)), quote(s.at(i)))
			}
			return false, true, nil
		}
		return boolRows(c, n, args[:2], func(i int) (bool, bool, error) {
			jp := pc.get(p.at(i))
			if jp == nil {
				return fail(i)
			}
			doc, ok := decodeJSON(s.at(i))
			if !ok {
				return fail(i)
			}
			if _, ok = walkJSON(doc, *jp); !ok && jp.Strict {
				return fail(i)
			}
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
				case *jsonObject:
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

// jsonQueryKernel is JSON_QUERY(json, path, wrapper, onEmpty, onError): the JSON text of
// the object or array at path, wrapped in an array as the wrapper says (a scalar must
// be); what is missing (lax) takes onEmpty, what fails (text that is not JSON, a step
// missing in strict mode, a scalar left unwrapped) takes onError.
func jsonQueryKernel() kernelFn {
	pc := pathCache{}
	return func(c *ctx, n int, args []datum) (datum, error) {
		s, p := strColOf(args[0]), strColOf(args[1])
		wrapper, onEmpty, onError := strColOf(args[2]), strColOf(args[3]), strColOf(args[4])
		return strRows(c, n, args, dataLen(args[0], n), func(i int, dst []byte) ([]byte, bool, error) {
			fallback := func(behaviour, what string) ([]byte, bool, error) {
				switch behaviour {
				case "EMPTY ARRAY":
					return append(dst, "[]"...), true, nil
				case "EMPTY OBJECT":
					return append(dst, "{}"...), true, nil
				case "ERROR":
					return dst, false, newError(ErrInvalidArgument, "JSON_QUERY: %s", what)
				}
				return dst, false, nil
			}
			jp := pc.get(p.at(i))
			doc, ok := decodeJSON(s.at(i))
			if jp == nil || !ok {
				return fallback(onError.at(i), "the text is not JSON")
			}
			v, ok := walkJSON(doc, *jp)
			if !ok {
				if jp.Strict {
					return fallback(onError.at(i), "path "+p.at(i)+" leads nowhere")
				}
				return fallback(onEmpty.at(i), "path "+p.at(i)+" leads nowhere")
			}
			_, isArray := v.([]any)
			_, isObject := v.(*jsonObject)
			switch w := wrapper.at(i); {
			case w == "UNCONDITIONAL" || w == "CONDITIONAL" && !isArray:
				v = []any{v}
			case w == "WITHOUT" && !isArray && !isObject:
				return fallback(onError.at(i), "the value at path "+p.at(i)+" is a scalar: wrap it WITH ARRAY WRAPPER")
			}
			return appendJSON(dst, v), true, nil
		})
	}
}
