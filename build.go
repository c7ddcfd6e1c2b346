package streamsql

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/ops"
	"github.com/streamsql/streamsql/planner"
)

// job is a built pipeline and the table its source reads, for reporting.
type job struct {
	pipeline *exec.Pipeline
	source   string
}

// build turns a plan into a pipeline: this is the one place where plan nodes become
// operators. A query's results go to result; an INSERT's plan ends in its Sink.
func (s *Session) build(ctx context.Context, plan planner.Node, result exec.Operator) (j *job, err error) {
	j = &job{pipeline: &exec.Pipeline{}}
	var opened []exec.Operator
	defer func() {
		if err != nil {
			closeAll(opened)
			if j.pipeline.Source != nil {
				j.pipeline.Source.Close()
			}
		}
	}()
	env := &expr.Env{Location: s.cfg.Location, Now: s.cfg.Now}
	mem := s.cfg.Mem
	var add func(n planner.Node, out exec.Operator) error
	add = func(n planner.Node, out exec.Operator) error {
		if out != nil {
			opened = append([]exec.Operator{out}, opened...)
		}
		output := exec.OutputFunc(func(ctx context.Context, b exec.Batch) error { return out.Process(ctx, 0, b) })
		switch n := n.(type) {
		case *planner.Scan:
			r, err := connector.OpenSource(ctx, connector.SourceSpec{Table: n.Table, Mem: mem, Location: s.cfg.Location})
			if err != nil {
				return err
			}
			j.pipeline.Source, j.source = r, n.Table.Name
			return nil
		case *planner.Values:
			j.pipeline.Source = &valuesReader{rows: n.Rows}
			return nil
		case *planner.Filter:
			op, err := ops.NewFilter(mem, env, n.Cond, output)
			if err != nil {
				return err
			}
			return add(n.Input, op)
		case *planner.Project:
			op, err := ops.NewProject(mem, env, n.Exprs, n.Schema(), output)
			if err != nil {
				return err
			}
			return add(n.Input, op)
		case *planner.Aggregate:
			return add(n.Input, ops.NewAggregate(mem, n, output))
		case *planner.Sink:
			if n.Input.Updating() && n.Table.Connector() == "filesystem" {
				return fmt.Errorf("table %s: the filesystem sink accepts only inserts, but the query produces updates", n.Table.Name)
			}
			op, err := connector.OpenSink(ctx, connector.SinkSpec{Table: n.Table, Schema: n.Schema(), Mem: mem, Location: s.cfg.Location, Stdout: s.cfg.Out})
			if err != nil {
				return err
			}
			return add(n.Input, op)
		}
		return fmt.Errorf("cannot run plan node %T", n)
	}
	if err := add(plan, result); err != nil {
		return nil, err
	}
	j.pipeline.Ops = opened
	return j, nil
}

func closeAll(opsList []exec.Operator) {
	for _, op := range opsList {
		if c, ok := op.(exec.Closer); ok {
			c.Close()
		}
	}
}

// runJob runs a job and reports the records its source skipped.
func (s *Session) runJob(ctx context.Context, j *job) error {
	err := j.pipeline.Run(ctx)
	if sc, ok := j.pipeline.Source.(exec.SkipCounter); ok && sc.Skipped() > 0 {
		fmt.Fprintf(s.cfg.Err, "table %s: skipped %d malformed records\n", j.source, sc.Skipped())
	}
	return err
}

// valuesReader produces rows with no columns once, for SELECT without FROM.
type valuesReader struct {
	rows int
	done bool
}

func (v *valuesReader) Next(context.Context) (exec.Batch, error) {
	if v.done {
		return exec.Batch{}, io.EOF
	}
	v.done = true
	return exec.Batch{Rec: array.NewRecord(arrow.NewSchema(nil, nil), nil, int64(v.rows))}, nil
}

func (v *valuesReader) Close() error { return nil }
