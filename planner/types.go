package planner

import (
	"fmt"
	"strings"
	"sync"
)

// Kind is a SQL type's family.
type Kind uint8

const (
	Null              Kind = iota // the type of an untyped NULL literal
	Boolean                       // BOOLEAN
	Int                           // INT, 32-bit
	BigInt                        // BIGINT, 64-bit
	Double                        // DOUBLE
	Decimal                       // DECIMAL(p, s), p <= 38
	String                        // STRING, VARCHAR(n)
	Timestamp                     // TIMESTAMP(p): a wall-clock time without zone; p 0 to 9, kept to milliseconds
	TimestampLTZ                  // TIMESTAMP_LTZ(p): an instant, shown in the session time zone
	Date                          // DATE: days since the epoch
	IntervalDayTime               // INTERVAL ... DAY TO SECOND: milliseconds
	IntervalYearMonth             // INTERVAL ... YEAR TO MONTH: months
	TinyInt                       // TINYINT, 8-bit
	SmallInt                      // SMALLINT, 16-bit
	Float                         // FLOAT (REAL), 32-bit
	Binary                        // BYTES, VARBINARY(n), BINARY(n) (Fixed)
	Row                           // ROW<f1 T1, ...>: Fields
	Array                         // ARRAY<T>: Elem
	Map                           // MAP<K, V>: Key and Value
	Time                          // TIME(p): a time of day without zone; Precision 0 to 9, kept to milliseconds
	Multiset                      // MULTISET<T>: Elem, each distinct element with how often it occurs
)

// Type is a SQL type. Types are values: compare them with ==. The element types of ROW,
// ARRAY and MAP are interned (see nest), so that two equal structured types share their
// pointer and == still compares them.
type Type struct {
	Kind      Kind
	Precision int  // DECIMAL precision; TIMESTAMP and TIME fractional digits
	Scale     int  // DECIMAL scale
	Length    int  // VARCHAR(n), CHAR(n), VARBINARY(n), BINARY(n) length; 0 means unbounded (STRING, BYTES)
	Fixed     bool // CHAR(n), BINARY(n): values are padded to Length
	NotNull   bool
	nested    *nested
}

// nested holds what a structured type is made of.
type nested struct {
	fields []Column // ROW
	elem   Type     // ARRAY's element, MAP's key
	value  Type     // MAP's value
}

// nestedTypes interns nested descriptions by their printed form, which says everything
// about them (field names, types and nullability).
var nestedTypes sync.Map // string -> *nested

func nest(kind Kind, n nested) Type {
	t := Type{Kind: kind, nested: &n}
	key := t.String()
	if v, ok := nestedTypes.Load(key); ok {
		t.nested = v.(*nested)
		return t
	}
	n.fields = append([]Column(nil), n.fields...)
	v, _ := nestedTypes.LoadOrStore(key, t.nested)
	t.nested = v.(*nested)
	return t
}

// RowType returns ROW<fields...>.
func RowType(fields []Column) Type { return nest(Row, nested{fields: fields}) }

// ArrayType returns ARRAY<elem>.
func ArrayType(elem Type) Type { return nest(Array, nested{elem: elem}) }

// MapType returns MAP<key, value>.
func MapType(key, value Type) Type { return nest(Map, nested{elem: key, value: value}) }

// MultisetType returns MULTISET<elem>. A multiset is held as Flink holds it: a map from
// each distinct element to its count, so its Value is INT NOT NULL.
func MultisetType(elem Type) Type {
	return nest(Multiset, nested{elem: elem, value: Type{Kind: Int, NotNull: true}})
}

// Fields returns the fields of a ROW (nil for other types); the slice must not be changed.
func (t Type) Fields() []Column {
	if t.nested == nil {
		return nil
	}
	return t.nested.fields
}

// Elem returns the element type of an ARRAY or MULTISET, the key type of a MAP.
func (t Type) Elem() Type {
	if t.nested == nil {
		return TypeNull
	}
	return t.nested.elem
}

// Value returns the value type of a MAP, INT NOT NULL (the count) for a MULTISET.
func (t Type) Value() Type {
	if t.nested == nil {
		return TypeNull
	}
	return t.nested.value
}

// IsNested reports whether t is a ROW, ARRAY, MAP or MULTISET.
func (t Type) IsNested() bool {
	return t.Kind == Row || t.Kind == Array || t.Kind == Map || t.Kind == Multiset
}

// IsMapLike reports whether t is held as a map: a MAP, or a MULTISET (element to count).
func (t Type) IsMapLike() bool { return t.Kind == Map || t.Kind == Multiset }

// Common types.
var (
	TypeNull     = Type{Kind: Null}
	TypeBoolean  = Type{Kind: Boolean}
	TypeInt      = Type{Kind: Int}
	TypeBigInt   = Type{Kind: BigInt}
	TypeDouble   = Type{Kind: Double}
	TypeString   = Type{Kind: String}
	TypeDate     = Type{Kind: Date}
	TypeTS       = Type{Kind: Timestamp, Precision: 3}
	TypeTSLTZ    = Type{Kind: TimestampLTZ, Precision: 3}
	TypeInterval = Type{Kind: IntervalDayTime}
	TypeMonths   = Type{Kind: IntervalYearMonth}
)

// TimeType returns TIME(p).
func TimeType(p int) Type { return Type{Kind: Time, Precision: p} }

// TimeUnitMillis is how many milliseconds one stored unit of a TIME(p) value is: a
// TIME(0) holds whole seconds of the day, a TIME(p > 0) milliseconds (Flink keeps TIME
// to milliseconds whatever p says). Literals and Arrow arrays of the type hold values in
// that unit.
func TimeUnitMillis(t Type) int64 {
	if t.Precision == 0 {
		return 1000
	}
	return 1
}

// TimestampDigits is how many fraction digits a TIMESTAMP(p) or TIMESTAMP_LTZ(p) value
// prints: p. Values are kept to the millisecond: a p below 3 drops the digits beyond p
// (CAST, literals and sources cut them), a p above 3 prints zeros past the third.
func TimestampDigits(t Type) int { return t.Precision }

// TruncateMillis cuts epoch milliseconds ms to p fraction digits (toward the past), as a
// TIMESTAMP(p) holds them; p of 3 or more keeps ms.
func TruncateMillis(ms int64, p int) int64 {
	var unit int64
	switch p {
	case 0:
		unit = 1000
	case 1:
		unit = 100
	case 2:
		unit = 10
	default:
		return ms
	}
	q := ms / unit
	if ms%unit < 0 {
		q--
	}
	return q * unit
}

// TimeDigits is how many fraction digits a TIME(p) value keeps and prints: p, at most 3.
func TimeDigits(t Type) int { return min(t.Precision, 3) }

// DecimalType returns DECIMAL(p, s).
func DecimalType(p, s int) Type { return Type{Kind: Decimal, Precision: p, Scale: s} }

// Nullable returns t without its NOT NULL constraint.
func (t Type) Nullable() Type { t.NotNull = false; return t }

// IsNumeric reports whether t is TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE or DECIMAL.
func (t Type) IsNumeric() bool {
	switch t.Kind {
	case TinyInt, SmallInt, Int, BigInt, Float, Double, Decimal:
		return true
	}
	return false
}

// IsTemporal reports whether t is a TIMESTAMP, TIMESTAMP_LTZ or DATE.
func (t Type) IsTemporal() bool {
	return t.Kind == Timestamp || t.Kind == TimestampLTZ || t.Kind == Date
}

// String prints t as SQL, as DESCRIBE and EXPLAIN show it: Flink's summary string.
func (t Type) String() string { return t.format(false) }

// SerializableString prints t as Flink's serializable string, the full form a catalog
// could store (TYPEOF(x, TRUE)): STRING is VARCHAR(2147483647), BYTES
// VARBINARY(2147483647), TIMESTAMP_LTZ(p) TIMESTAMP(p) WITH LOCAL TIME ZONE.
func (t Type) SerializableString() string { return t.format(true) }

// maxLength is the length of STRING and BYTES: VARCHAR and VARBINARY of Java's largest int.
const maxLength = 2147483647

func (t Type) format(full bool) string {
	var s string
	switch t.Kind {
	case Null:
		s = "NULL"
	case Boolean:
		s = "BOOLEAN"
	case TinyInt:
		s = "TINYINT"
	case SmallInt:
		s = "SMALLINT"
	case Int:
		s = "INT"
	case BigInt:
		s = "BIGINT"
	case Float:
		s = "FLOAT"
	case Double:
		s = "DOUBLE"
	case Decimal:
		s = fmt.Sprintf("DECIMAL(%d, %d)", t.Precision, t.Scale)
	case String:
		switch {
		case t.Fixed:
			s = fmt.Sprintf("CHAR(%d)", t.Length)
		case t.Length > 0:
			s = fmt.Sprintf("VARCHAR(%d)", t.Length)
		case full:
			s = fmt.Sprintf("VARCHAR(%d)", maxLength)
		default:
			s = "STRING"
		}
	case Binary:
		switch {
		case t.Fixed:
			s = fmt.Sprintf("BINARY(%d)", t.Length)
		case t.Length > 0:
			s = fmt.Sprintf("VARBINARY(%d)", t.Length)
		case full:
			s = fmt.Sprintf("VARBINARY(%d)", maxLength)
		default:
			s = "BYTES"
		}
	case Row:
		var b strings.Builder
		b.WriteString("ROW<")
		for i, f := range t.Fields() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quoteName(f.Name))
			b.WriteByte(' ')
			b.WriteString(f.Type.format(full))
		}
		b.WriteByte('>')
		s = b.String()
	case Array:
		s = "ARRAY<" + t.Elem().format(full) + ">"
	case Map:
		s = "MAP<" + t.Elem().format(full) + ", " + t.Value().format(full) + ">"
	case Multiset:
		s = "MULTISET<" + t.Elem().format(full) + ">"
	case Timestamp:
		s = fmt.Sprintf("TIMESTAMP(%d)", t.Precision)
	case TimestampLTZ:
		s = fmt.Sprintf("TIMESTAMP_LTZ(%d)", t.Precision)
		if full {
			s = fmt.Sprintf("TIMESTAMP(%d) WITH LOCAL TIME ZONE", t.Precision)
		}
	case Date:
		s = "DATE"
	case Time:
		s = fmt.Sprintf("TIME(%d)", t.Precision)
	case IntervalDayTime:
		s = "INTERVAL DAY TO SECOND"
	case IntervalYearMonth:
		s = "INTERVAL YEAR TO MONTH"
	default:
		s = fmt.Sprintf("Kind(%d)", t.Kind)
	}
	if t.NotNull {
		s += " NOT NULL"
	}
	return s
}

// quoteName writes a ROW field name as Flink prints it: in backticks.
func quoteName(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// Column is a named, typed field of a schema.
type Column struct {
	Name string
	Type Type
}

// Schema is the ordered list of columns a plan node produces.
type Schema []Column

// Index returns the position of the column named name (case-insensitive), or -1.
func (s Schema) Index(name string) int {
	for i, c := range s {
		if equalFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// String prints the schema as (name TYPE, ...).
func (s Schema) String() string {
	b := []byte{'('}
	for i, c := range s {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, c.Name...)
		b = append(b, ' ')
		b = append(b, c.Type.String()...)
	}
	return string(append(b, ')'))
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
