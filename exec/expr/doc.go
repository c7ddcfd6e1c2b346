// Package expr evaluates bound planner expressions over Arrow record batches, with Flink SQL
// semantics. Compile turns a planner.Expr once into a tree of typed kernels, each computing a
// whole column per batch (array⊕scalar, scalar⊕array and array⊕array variants, NULLs carried
// in validity bitmaps, literals never broadcast). kernels.go maps every planner.Func to its
// kernel; the function's signature, result type and NULL handling are its row in planner's
// function table, whose examples functions_test.go evaluates. CompilePredicate turns a
// BOOLEAN expression into a filter that writes the indices of the passing rows, without a
// boolean array for the common comparisons and their conjunctions (exec.Take gathers rows
// by index). Errors the SQL job must fail on (division by zero, a CAST that does not
// convert, DECIMAL overflow) are returned from Eval; branches of CASE, COALESCE, IF, AND and
// OR that could fail are evaluated only on the rows that reach them, as Flink does.
// Evaluators and predicates keep scratch space between calls and are not safe for
// concurrent use; the arrays they return belong to the caller.
package expr
