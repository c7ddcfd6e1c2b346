// Package streamsql is the engine API shared by the command line and the tests: a
// session that executes SQL statements (SET, CREATE, DROP, SELECT, INSERT INTO, EXPLAIN,
// SHOW TABLES, DESCRIBE) against its catalog, plans queries, builds their operator
// pipelines and runs them, printing query results in the chosen format.
package streamsql
