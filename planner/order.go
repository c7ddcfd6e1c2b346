package planner

import "github.com/streamsql/streamsql/parser"

// orderLimit plans a query's ORDER BY and LIMIT over its result out.
func (p *Planner) orderLimit(q *parser.Query, out Node) (Node, error) {
	return nil, errorf(q, "ORDER BY and LIMIT are not supported yet")
}
