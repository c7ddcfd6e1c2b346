package exec

import (
	"github.com/apache/arrow/go/v15/arrow"
	"github.com/streamsql/streamsql/planner"
)

// ArrowType returns the Arrow type that holds values of SQL type t.
// TIME(0) is time32[s], TIME(p > 0) time32[ms] (so that the array says how its values print).
// TIMESTAMP(p) and TIMESTAMP_LTZ(p) are both epoch milliseconds whatever p: a TIMESTAMP is
// its wall clock read as UTC, a TIMESTAMP_LTZ an instant (its Arrow type carries the zone
// "UTC"); p decides only how values are cut and printed (see planner.TimestampDigits). CHAR(n)
// is a string, BINARY(n) a binary array, both holding padded values. ROW, ARRAY and MAP
// (and MULTISET, element to INT count) are struct, list and map arrays whose fields are all nullable, so that the Arrow type
// depends only on names and shapes: NOT NULL inside them is the planner's to know.
func ArrowType(t planner.Type) arrow.DataType {
	switch t.Kind {
	case planner.Boolean:
		return arrow.FixedWidthTypes.Boolean
	case planner.TinyInt:
		return arrow.PrimitiveTypes.Int8
	case planner.SmallInt:
		return arrow.PrimitiveTypes.Int16
	case planner.Float:
		return arrow.PrimitiveTypes.Float32
	case planner.Binary:
		return arrow.BinaryTypes.Binary
	case planner.Row:
		fields := make([]arrow.Field, len(t.Fields()))
		for i, f := range t.Fields() {
			fields[i] = arrow.Field{Name: f.Name, Type: ArrowType(f.Type), Nullable: true}
		}
		return arrow.StructOf(fields...)
	case planner.Array:
		return arrow.ListOf(ArrowType(t.Elem()))
	case planner.Map, planner.Multiset: // a MULTISET maps each element to its count
		return arrow.MapOf(ArrowType(t.Elem()), ArrowType(t.Value()))
	case planner.Int:
		return arrow.PrimitiveTypes.Int32
	case planner.BigInt:
		return arrow.PrimitiveTypes.Int64
	case planner.Double:
		return arrow.PrimitiveTypes.Float64
	case planner.Decimal:
		return &arrow.Decimal128Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}
	case planner.String:
		return arrow.BinaryTypes.String
	case planner.Timestamp:
		return &arrow.TimestampType{Unit: arrow.Millisecond}
	case planner.TimestampLTZ:
		return &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
	case planner.Date:
		return arrow.FixedWidthTypes.Date32
	case planner.Time:
		if t.Precision == 0 {
			return arrow.FixedWidthTypes.Time32s
		}
		return arrow.FixedWidthTypes.Time32ms
	case planner.IntervalDayTime:
		return arrow.FixedWidthTypes.Duration_ms
	case planner.IntervalYearMonth:
		return arrow.FixedWidthTypes.MonthInterval
	default:
		return arrow.Null
	}
}

// ArrowSchema returns the Arrow schema of a planner schema; every field is nullable
// unless its type is NOT NULL.
func ArrowSchema(s planner.Schema) *arrow.Schema {
	fields := make([]arrow.Field, len(s))
	for i, c := range s {
		fields[i] = arrow.Field{Name: c.Name, Type: ArrowType(c.Type), Nullable: !c.Type.NotNull}
	}
	return arrow.NewSchema(fields, nil)
}
