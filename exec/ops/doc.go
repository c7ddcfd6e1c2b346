// Package ops holds the operators that run inside tasks: filter, project, expand (the
// copies of each row per grouping set), replicate, the updating group aggregate, window
// assignment and window aggregates, joins, event-time temporal joins, lookup joins
// (with their cache), Top-N and deduplication (rank), OVER aggregates (over), ORDER BY
// without LIMIT (sort) and MATCH_RECOGNIZE (match). Each is an exec.Operator built from
// a plan node's expressions; the task that runs it owns its channels.
package ops
