package planner

import "fmt"

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
	Timestamp                     // TIMESTAMP(3): a wall-clock time without zone, millisecond precision
	TimestampLTZ                  // TIMESTAMP_LTZ(3): an instant, shown in the session time zone
	Date                          // DATE: days since the epoch
	IntervalDayTime               // INTERVAL ... DAY TO SECOND: milliseconds
	IntervalYearMonth             // INTERVAL ... YEAR TO MONTH: months
)

// Type is a SQL type. Types are values: compare them with ==.
type Type struct {
	Kind      Kind
	Precision int // DECIMAL precision; TIMESTAMP fractional digits
	Scale     int // DECIMAL scale
	Length    int // VARCHAR(n) length; 0 means unbounded (STRING)
	NotNull   bool
}

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

// DecimalType returns DECIMAL(p, s).
func DecimalType(p, s int) Type { return Type{Kind: Decimal, Precision: p, Scale: s} }

// Nullable returns t without its NOT NULL constraint.
func (t Type) Nullable() Type { t.NotNull = false; return t }

// IsNumeric reports whether t is INT, BIGINT, DOUBLE or DECIMAL.
func (t Type) IsNumeric() bool {
	switch t.Kind {
	case Int, BigInt, Double, Decimal:
		return true
	}
	return false
}

// IsTemporal reports whether t is a TIMESTAMP, TIMESTAMP_LTZ or DATE.
func (t Type) IsTemporal() bool {
	return t.Kind == Timestamp || t.Kind == TimestampLTZ || t.Kind == Date
}

// String prints t as SQL, as DESCRIBE and EXPLAIN show it.
func (t Type) String() string {
	var s string
	switch t.Kind {
	case Null:
		s = "NULL"
	case Boolean:
		s = "BOOLEAN"
	case Int:
		s = "INT"
	case BigInt:
		s = "BIGINT"
	case Double:
		s = "DOUBLE"
	case Decimal:
		s = fmt.Sprintf("DECIMAL(%d, %d)", t.Precision, t.Scale)
	case String:
		if t.Length > 0 {
			s = fmt.Sprintf("VARCHAR(%d)", t.Length)
		} else {
			s = "STRING"
		}
	case Timestamp:
		s = fmt.Sprintf("TIMESTAMP(%d)", t.Precision)
	case TimestampLTZ:
		s = fmt.Sprintf("TIMESTAMP_LTZ(%d)", t.Precision)
	case Date:
		s = "DATE"
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
