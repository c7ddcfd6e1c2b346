package planner

import (
	"strings"

	"github.com/streamsql/streamsql/parser"
)

// likeFeatures are the features of a LIKE clause's base table that its options merge.
var likeFeatures = []string{"CONSTRAINTS", "PARTITIONS", "GENERATED", "OPTIONS", "WATERMARKS", "METADATA"}

// MergeLike merges CREATE TABLE st ... LIKE base (base as the statement that creates it)
// by st's like options, as Flink does: the base's physical columns come first, then st's;
// each feature is INCLUDING (the base's too; the same entry in both fails), EXCLUDING
// (st's only) or OVERWRITING (both; st's wins where they meet). Without options it is
// INCLUDING ALL OVERWRITING OPTIONS; ALL sets every feature, later options override it.
// The result has no LIKE clause.
func MergeLike(base, st *parser.CreateTableStmt) (*parser.CreateTableStmt, error) {
	mode := map[string]string{"OPTIONS": "OVERWRITING"}
	for _, f := range likeFeatures {
		if mode[f] == "" {
			mode[f] = "INCLUDING"
		}
	}
	for _, o := range st.Like.Options {
		if o.Mode == "OVERWRITING" && (o.Feature == "ALL" || o.Feature == "CONSTRAINTS" || o.Feature == "PARTITIONS") {
			return nil, errorf(o, "OVERWRITING does not apply to %s: use INCLUDING or EXCLUDING", o.Feature)
		}
		if o.Feature == "ALL" {
			for _, f := range likeFeatures {
				mode[f] = o.Mode
			}
			continue
		}
		mode[o.Feature] = o.Mode
	}
	out := *st
	out.Like, out.Columns, out.Options = nil, nil, nil
	declared := map[string]*parser.ColumnDef{}
	for _, c := range st.Columns {
		declared[strings.ToLower(c.Name)] = c
	}
	for _, c := range base.Columns {
		mine, both := declared[strings.ToLower(c.Name)]
		switch {
		case c.Metadata && mode["METADATA"] == "EXCLUDING":
		case c.Metadata && both && mode["METADATA"] == "INCLUDING":
			return nil, errorf(mine, "column `%s` is a metadata column of %s too: use OVERWRITING METADATA or EXCLUDING METADATA", c.Name, st.Like.Table)
		case c.Metadata && both: // OVERWRITING: the declared one takes its place
		case c.Metadata:
			out.Columns = append(out.Columns, c)
		case c.Computed == nil && both:
			return nil, errorf(mine, "column `%s` is already a physical column of %s, which LIKE includes", c.Name, st.Like.Table)
		case c.Computed == nil:
			out.Columns = append(out.Columns, c)
		case mode["GENERATED"] == "EXCLUDING":
		case both && mode["GENERATED"] == "INCLUDING":
			return nil, errorf(mine, "column `%s` is a computed column of %s too: use OVERWRITING GENERATED or EXCLUDING GENERATED", c.Name, st.Like.Table)
		case both: // OVERWRITING: the declared one takes its place
		default:
			out.Columns = append(out.Columns, c)
		}
	}
	out.Columns = append(out.Columns, st.Columns...)
	switch {
	case base.Watermark == nil || mode["WATERMARKS"] == "EXCLUDING":
	case st.Watermark == nil:
		out.Watermark = base.Watermark
	case mode["WATERMARKS"] == "INCLUDING":
		return nil, errorf(st.Watermark, "%s already has a WATERMARK: use OVERWRITING WATERMARKS or EXCLUDING WATERMARKS", st.Like.Table)
	}
	switch {
	case base.PrimaryKey == nil || mode["CONSTRAINTS"] == "EXCLUDING":
	case st.PrimaryKey == nil:
		out.PrimaryKey = base.PrimaryKey
	default:
		return nil, errorf(st, "%s already has a PRIMARY KEY: use EXCLUDING CONSTRAINTS to declare another", st.Like.Table)
	}
	switch {
	case base.PartitionedBy == nil || mode["PARTITIONS"] == "EXCLUDING":
	case st.PartitionedBy == nil:
		out.PartitionedBy = base.PartitionedBy
	default:
		return nil, errorf(st, "%s is already PARTITIONED BY: use EXCLUDING PARTITIONS to declare other partition columns", st.Like.Table)
	}
	mine := map[string]*parser.Option{}
	for _, o := range st.Options {
		mine[strings.ToLower(o.Key)] = o
	}
	if mode["OPTIONS"] != "EXCLUDING" {
		for _, o := range base.Options {
			m, both := mine[strings.ToLower(o.Key)]
			switch {
			case both && mode["OPTIONS"] == "INCLUDING":
				return nil, errorf(m, "option '%s' is set in %s too: use OVERWRITING OPTIONS or EXCLUDING OPTIONS", o.Key, st.Like.Table)
			case both: // OVERWRITING: the declared value, in the base's place
				out.Options = append(out.Options, m)
			default:
				out.Options = append(out.Options, o)
			}
		}
	}
	for _, o := range st.Options {
		if !containsOption(out.Options, o) {
			out.Options = append(out.Options, o)
		}
	}
	return &out, nil
}

func containsOption(opts []*parser.Option, o *parser.Option) bool {
	for _, x := range opts {
		if x == o {
			return true
		}
	}
	return false
}
