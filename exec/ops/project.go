package ops

import (
	"context"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/planner"
)

// project computes one output column per expression.
type project struct {
	pool   *exec.BufferPool // of the output's and the expressions' buffers (see changes)
	schema *arrow.Schema
	exprs  []expr.Evaluator
	texts  []string // the expressions as SQL, for errors
	out    exec.Output
	cols   []arrow.Array
	typed  []bool // whether the schema took column i's type from a batch (see adopt)
}

var _ exec.Operator = (*project)(nil)

// NewProject returns the operator of a Project plan node: it evaluates the node's
// expressions over each batch; the row kinds and origins pass through.
func NewProject(mem memory.Allocator, env *expr.Env, n *planner.Project, out exec.Output) (exec.Operator, error) {
	env, noting := noteWatermark(env, out, n.Exprs...)
	pool := exec.NewBufferPool(mem, true)
	p := &project{pool: pool, schema: exec.ArrowSchema(n.Schema()), out: out, cols: make([]arrow.Array, len(n.Exprs)), typed: make([]bool, len(n.Exprs))}
	in := n.Input.Schema()
	for _, e := range n.Exprs {
		ev, err := expr.Compile(e, pool, env)
		if err != nil {
			pool.Close()
			return nil, err
		}
		p.exprs = append(p.exprs, ev)
		p.texts = append(p.texts, planner.ExprSQL(e, in))
	}
	return noting(p), nil
}

func (p *project) Process(ctx context.Context, _ int, b exec.Batch) error {
	defer func() {
		for i, c := range p.cols {
			if c != nil {
				c.Release()
				p.cols[i] = nil
			}
		}
	}()
	for i, e := range p.exprs {
		col, err := e.Eval(b.Rec)
		if err != nil {
			return evalError(p.pool, "Project", p.texts[i], b, err, func(rec arrow.Record) error {
				col, err := e.Eval(rec)
				if col != nil {
					col.Release()
				}
				return err
			})
		}
		p.cols[i] = col
	}
	p.adopt()
	rec := array.NewRecord(p.schema, p.cols, b.Rec.NumRows())
	defer rec.Release()
	return p.out.Emit(ctx, exec.Batch{Rec: rec, Kinds: b.Kinds, Origin: b.Origin, Splits: b.Splits})
}

// adopt has the schema hold the column types of the batch at hand, once per column,
// where they are equal to its own but other values. A record checks each column's
// type against its schema's, and a ROW type compared with another value is compared
// field by field, by reflection: the columns of a source's ROW, passed on, cost that
// in every batch.
func (p *project) adopt() {
	var fields []arrow.Field
	for i, c := range p.cols {
		f := p.schema.Field(i)
		if p.typed[i] || c.DataType() == f.Type {
			continue
		}
		p.typed[i] = true
		if !arrow.TypeEqual(c.DataType(), f.Type, arrow.CheckMetadata()) {
			continue
		}
		if fields == nil {
			fields = p.schema.Fields()
		}
		fields[i].Type = c.DataType()
	}
	if fields != nil {
		md := p.schema.Metadata()
		p.schema = arrow.NewSchema(fields, &md)
	}
}

func (p *project) Close() error {
	p.pool.Close()
	return nil
}
