// Package planner turns parsed statements into plans: the catalog of tables and views,
// name resolution and type checking of expressions (inserting every implicit cast),
// the plan tree of scans, filters, projections, expands (grouping sets), aggregates,
// joins, ranks (Top-N), OVER aggregates, sinks and statement sets of sinks, the rewrites applied to it, and the EXPLAIN text. Built-in scalar functions and
// operators are data: one row each in the function table (functions.go) gives the names,
// argument kinds, result type, NULL handling and examples; bindfunc.go binds by it. Plans are immutable data; the
// runtime in package exec builds operators from them.
package planner
