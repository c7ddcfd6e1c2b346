// Package planner turns parsed statements into plans: the catalog of tables and views,
// name resolution and type checking of expressions (inserting every implicit cast),
// the plan tree of scans, filters, projections, aggregates, joins, ranks (Top-N) and
// sinks, the rewrites applied to it, and the EXPLAIN text. Plans are immutable data; the
// runtime in package exec builds operators from them.
package planner
