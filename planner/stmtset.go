package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/parser"
)

// SinkSet is a statement set: several INSERTs that run as one job, one checkpoint
// covering all their sinks. Its children are Sink nodes, each with inputs of its own.
type SinkSet struct {
	Sinks []Node
}

func (n *SinkSet) Schema() Schema   { return nil }
func (n *SinkSet) Children() []Node { return n.Sinks }
func (n *SinkSet) Updating() bool   { return false }

func (n *SinkSet) Describe() string {
	names := make([]string, len(n.Sinks))
	for i, s := range n.Sinks {
		names[i] = s.(*Sink).Table.Name
	}
	return fmt.Sprintf("StatementSet(sinks=[%s])", strings.Join(names, ", "))
}

// PlanStatementSet plans the INSERTs of a statement set. A set of one INSERT is that
// INSERT's plan. Each table is written by one INSERT of a set: two sinks of one table
// in one job would write the same files or rows under two transactions.
func (p *Planner) PlanStatementSet(set *parser.StatementSetStmt) (Node, error) {
	var sinks []Node
	seen := map[string]bool{}
	for _, ins := range set.Inserts {
		n, err := p.PlanInsert(ins)
		if err != nil {
			return nil, err
		}
		name := strings.ToLower(n.(*Sink).Table.Name)
		if seen[name] {
			return nil, errorf(ins, "the statement set already writes table %s: each table takes one INSERT of a set (combine them with UNION ALL)", ins.Table)
		}
		seen[name] = true
		sinks = append(sinks, n)
	}
	if len(sinks) == 1 {
		return sinks[0], nil
	}
	return &SinkSet{Sinks: sinks}, nil
}

// IsInsert reports whether plan writes into tables (an INSERT or a statement set)
// rather than producing a query's result.
func IsInsert(plan Node) bool {
	switch plan.(type) {
	case *Sink, *SinkSet:
		return true
	}
	return false
}
