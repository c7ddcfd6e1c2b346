package planner

import (
	"slices"
	"sort"
	"strings"

	"github.com/streamsql/streamsql/parser"
)

// Function is one row of the function table: a built-in scalar function or operator, its
// SQL names, the kinds of its arguments, how its result type is derived, how it treats
// NULL, and examples from Flink's reference (docs/data/sql_functions.yml) that a test in
// exec/expr runs through the evaluator. Adding a function is a row in functions.go (with a
// Func id) and its kernel in exec/expr's kernels.go.
type Function struct {
	Fn Func
	// Names are the SQL names a call may use, canonical first. An operator with syntax of
	// its own (+, IS DISTINCT FROM, EXTRACT) has none: its binder builds the Call.
	Names []string
	// Args are the parameter kinds in order; the last repeats when Variadic. A call takes
	// Min to len(Args) arguments (Min 0 means len(Args), unless Niladic).
	Args     []Arg
	Min      int
	Variadic bool
	Niladic  bool // may be called with no arguments (then Min is 0)
	// Unit: the first argument is a time unit written as a word (TIMESTAMPDIFF(DAY, a, b)),
	// bound as a STRING literal of one of Units.
	Unit  bool
	Units []string
	// Result derives the result type from the coerced arguments; its NOT NULL flag is then
	// set from Nulls.
	Result func(args []Expr) Type
	Nulls  Nulls
	// Bind, when set, finishes binding after the arguments were checked and coerced: it
	// checks constant arguments or rewrites the call (MOD into %, LOCALTIMESTAMP into a CAST).
	Bind     func(c *CallSite) (Expr, error)
	Examples []Example
}

// Example is a SQL expression and the value it prints (as format.FormatValue, NULL as null).
type Example struct {
	SQL, Want string
}

// Arg is the kind of value a parameter takes, and how an argument is coerced to it.
type Arg uint8

const (
	ArgAny       Arg = iota // any type, unchanged
	ArgString               // STRING (a NULL literal becomes a STRING)
	ArgBoolean              // BOOLEAN
	ArgInt                  // any number, cast to INT
	ArgBigInt               // any number, cast to BIGINT
	ArgDouble               // any number, cast to DOUBLE
	ArgNumeric              // any number, unchanged (a NULL literal becomes DOUBLE)
	ArgTimestamp            // TIMESTAMP or TIMESTAMP_LTZ; DATE and STRING are cast to TIMESTAMP(3)
	ArgTemporal             // TIMESTAMP, TIMESTAMP_LTZ or DATE
	ArgClock                // TIMESTAMP, TIMESTAMP_LTZ, DATE or TIME: a value with a time of day
	ArgCommon               // every ArgCommon argument is cast to their common type
)

// Nulls is how a function treats NULL arguments.
type Nulls uint8

const (
	// NullStrict: NULL if any argument is NULL, else never NULL; what the kernel computes
	// on a NULL row is masked, and a NULL constant argument skips the kernel.
	NullStrict Nulls = iota
	// NullStrictNullable: NULL if any argument is NULL, and may be NULL otherwise (a string
	// that does not parse, an index past the end).
	NullStrictNullable
	// NullAware: the kernel sees NULL arguments and decides; Result gives the nullability.
	NullAware
)

// CallSite is a call being bound, for a Function's Bind.
type CallSite struct {
	Fn   *Function
	Call *parser.FuncCall // nil for an operator
	Args []Expr           // coerced
	T    Type             // the derived result type
	b    *exprBinder
	at   positioned
}

// Errorf returns an error at argument i (or at the call when i < 0).
func (c *CallSite) Errorf(i int, format string, args ...any) error {
	if i >= 0 && c.Call != nil && i < len(c.Call.Args) {
		return errorf(c.Call.Args[i], format, args...)
	}
	return errorf(c.at, format, args...)
}

// Default is the Call the generic binding builds.
func (c *CallSite) Default() Expr { return &Call{Fn: c.Fn.Fn, Args: c.Args, T: c.T} }

// Result types.
func returns(t Type) func([]Expr) Type { return func([]Expr) Type { return t } }

func sameAs(i int) func([]Expr) Type {
	return func(args []Expr) Type {
		if i < len(args) {
			return args[i].Type()
		}
		return TypeNull
	}
}

// Functions returns the table, in the order of the reference's sections.
func Functions() []Function { return funcTable }

// FunctionOf returns the row of fn.
func FunctionOf(fn Func) (*Function, bool) {
	f, ok := functionIndex().byFn[fn]
	return f, ok
}

// MaxArgs is the most arguments f takes (a large number when variadic).
func (f *Function) MaxArgs() int {
	if f.Variadic {
		return 1 << 20
	}
	return len(f.Args)
}

// MinArgs is the fewest arguments f takes.
func (f *Function) MinArgs() int {
	if f.Min > 0 || f.Niladic {
		return f.Min
	}
	return len(f.Args)
}

func (f *Function) name() string {
	if len(f.Names) > 0 {
		return f.Names[0]
	}
	return string(f.Fn)
}

func (f *Function) argKind(i int) Arg {
	if i >= len(f.Args) {
		return f.Args[len(f.Args)-1]
	}
	return f.Args[i]
}

type funcIndex struct {
	byName map[string]*Function
	byFn   map[Func]*Function
	names  []string
}

var (
	funcTable []Function
	funcIdx   *funcIndex
)

// init builds the table once. It cannot be a package-level initializer: the rows' Bind
// functions reach the binder, which reads the index.
func init() {
	funcTable = functionRows()
	funcIdx = &funcIndex{byName: map[string]*Function{}, byFn: map[Func]*Function{}}
	for i := range funcTable {
		f := &funcTable[i]
		if _, dup := funcIdx.byFn[f.Fn]; dup {
			panic("planner: function " + string(f.Fn) + " has two rows")
		}
		funcIdx.byFn[f.Fn] = f
		for _, n := range f.Names {
			funcIdx.byName[n] = f
			funcIdx.names = append(funcIdx.names, n)
		}
	}
	funcIdx.names = append(funcIdx.names, aggNames()...)
	sort.Strings(funcIdx.names)
}

func functionIndex() *funcIndex { return funcIdx }

// FunctionNames lists every callable name (scalar and aggregate), for SHOW FUNCTIONS and
// suggestions.
func FunctionNames() []string { return append([]string(nil), functionIndex().names...) }

// call binds a scalar function call by its row in the table.
func (b *exprBinder) call(e *parser.FuncCall) (Expr, error) {
	if e.Distinct || e.Star || e.Filter != nil {
		return nil, errorf(e, "%s is not an aggregate function", e.Name)
	}
	if e.TimeUnit != "" { // FLOOR(x TO unit), CEIL(x TO unit)
		fn := FnFloorTime
		if e.Name != "FLOOR" {
			fn = FnCeilTime
		}
		args, err := b.bindAll(e.Args)
		if err != nil {
			return nil, err
		}
		unit := &Literal{Value: e.TimeUnit, T: Type{Kind: String, NotNull: true}}
		return b.apply(functionIndex().byFn[fn], e, e, append([]Expr{unit}, args...))
	}
	f, ok := functionIndex().byName[e.Name]
	if !ok && (e.Name == "ROLLUP" || e.Name == "CUBE") {
		return nil, errorf(e, "%s is allowed only in GROUP BY", e.Name)
	}
	if !ok {
		return nil, errorf(e, "unknown function %s%s", e.Name, suggest(e.Name, functionIndex().names))
	}
	rest := e.Args
	var unit []Expr
	if f.Unit && len(e.Args) > 0 {
		id, ok := e.Args[0].(*parser.Ident)
		var word string
		if ok && len(id.Parts) == 1 {
			word = strings.ToUpper(id.Parts[0])
		}
		if !slices.Contains(f.Units, word) {
			return nil, errorf(e.Args[0], "%s takes a time unit first (%s), got %s", e.Name, strings.Join(f.Units, ", "), e.Args[0])
		}
		unit, rest = []Expr{&Literal{Value: word, T: Type{Kind: String, NotNull: true}}}, e.Args[1:]
	}
	args, err := b.bindAll(rest)
	if err != nil {
		return nil, err
	}
	return b.apply(f, e, e, append(unit, args...))
}

// operator binds a call of an operator row (one with syntax of its own) to bound arguments.
func (b *exprBinder) operator(at positioned, fn Func, args ...Expr) (Expr, error) {
	f, ok := FunctionOf(fn)
	if !ok {
		return nil, errorf(at, "unknown operator %s", fn)
	}
	return b.apply(f, nil, at, args)
}

// apply checks the arguments' count and kinds, coerces them, derives the result type and
// NULL-ness, and builds the Call (or lets the row's Bind build it).
func (b *exprBinder) apply(f *Function, e *parser.FuncCall, at positioned, args []Expr) (Expr, error) {
	name := f.name()
	if e != nil {
		name = e.Name
	}
	if lo, hi := f.MinArgs(), f.MaxArgs(); len(args) < lo || len(args) > hi {
		return nil, errorf(at, "%s takes %s, got %d", name, arityWords(lo, hi), len(args))
	}
	argAt := func(i int) positioned {
		if e != nil && i < len(e.Args) {
			return e.Args[i]
		}
		return at
	}
	common := TypeNull
	haveCommon := false
	for i, a := range args {
		t := a.Type()
		bad := func(want string) error {
			return errorf(argAt(i), "%s argument %d must be %s, got %s", name, i+1, want, t.Nullable())
		}
		switch f.argKind(i) {
		case ArgString:
			if t.Kind == Null {
				args[i] = castTo(a, TypeString)
			} else if t.Kind != String {
				return nil, bad("a STRING")
			}
		case ArgBoolean:
			if t.Kind == Null {
				args[i] = castTo(a, TypeBoolean)
			} else if t.Kind != Boolean {
				return nil, bad("a BOOLEAN")
			}
		case ArgInt, ArgBigInt, ArgDouble:
			if !t.IsNumeric() && t.Kind != Null {
				return nil, bad("a number")
			}
			args[i] = castTo(a, map[Arg]Type{ArgInt: TypeInt, ArgBigInt: TypeBigInt, ArgDouble: TypeDouble}[f.argKind(i)])
		case ArgNumeric:
			if t.Kind == Null {
				args[i] = castTo(a, TypeDouble)
			} else if !t.IsNumeric() {
				return nil, errorf(argAt(i), "%s needs a numeric argument, got %s", name, t.Nullable())
			} else {
				args[i] = castTo(a, widened(t))
			}
		case ArgTimestamp:
			switch t.Kind {
			case Timestamp, TimestampLTZ:
			case String, Date, Null:
				args[i] = castTo(a, TypeTS)
			default:
				return nil, errorf(argAt(i), "%s needs a TIMESTAMP, got %s", name, t.Nullable())
			}
		case ArgTemporal, ArgClock:
			switch t.Kind {
			case Timestamp, TimestampLTZ, Date:
			case Time:
				if f.argKind(i) != ArgClock {
					return nil, errorf(argAt(i), "%s needs a TIMESTAMP or DATE, got %s", name, t.Nullable())
				}
			case Null:
				args[i] = castTo(a, TypeTS)
			default:
				return nil, errorf(argAt(i), "%s needs a TIMESTAMP or DATE, got %s", name, t.Nullable())
			}
		case ArgCommon:
			c, ok := commonType(common, t)
			if !ok {
				return nil, errorf(argAt(i), "%s arguments have types %s and %s", name, common, t.Nullable())
			}
			common, haveCommon = c, true
		}
	}
	if haveCommon {
		if f.Fn != FnArray {
			common = widened(common)
		}
		for i := range args {
			if f.argKind(i) == ArgCommon {
				args[i] = castTo(args[i], common)
			}
		}
	}
	t := f.Result(args).Nullable()
	switch f.Nulls {
	case NullStrict:
		t.NotNull = t.Kind != Null
		for _, a := range args {
			t.NotNull = t.NotNull && a.Type().NotNull
		}
	case NullAware:
		t = f.Result(args)
	}
	c := &CallSite{Fn: f, Call: e, Args: args, T: t, b: b, at: at}
	if f.Bind != nil {
		return f.Bind(c)
	}
	return c.Default(), nil
}

func arityWords(lo, hi int) string {
	switch {
	case lo == 0 && hi == 0:
		return "no arguments"
	case hi >= 1<<20:
		return "at least " + plural(lo)
	case lo == hi:
		return plural(lo)
	}
	return itoa(lo) + " to " + itoa(hi) + " arguments"
}

func plural(n int) string {
	if n == 1 {
		return "1 argument"
	}
	return itoa(n) + " arguments"
}

func itoa(i int) string {
	if i < 0 {
		return "-" + itoa(-i)
	}
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// constInt returns argument i as a constant integer.
func (c *CallSite) constInt(i int) (int64, bool) {
	l, ok := c.Args[i].(*Literal)
	if !ok || l.Value == nil {
		return 0, false
	}
	switch v := l.Value.(type) {
	case int32:
		return int64(v), true
	case int64:
		return v, true
	}
	return 0, false
}

// constString returns argument i as a constant STRING.
func (c *CallSite) constString(i int) (string, bool) {
	l, ok := c.Args[i].(*Literal)
	if !ok || l.Value == nil {
		return "", false
	}
	s, ok := l.Value.(string)
	return s, ok && l.T.Kind == String
}
