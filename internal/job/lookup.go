package job

import (
	"context"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/exec/ops"
	"github.com/streamsql/streamsql/planner"
)

// lookupJoin adds a lookup join to its input's stage: it keeps no checkpointed state
// and needs no exchange, each task looking up the keys of its own rows.
func (b *builder) lookupJoin(stage int, n *planner.LookupJoin) error {
	cfg, err := connector.ReadLookupConfig(n.Table)
	if err != nil {
		return err
	}
	j := b.j
	b.addOp(stage, func(ctx context.Context, _ int, out exec.Output) (exec.Operator, error) {
		src, err := j.env.Connectors.OpenLookup(ctx, connector.LookupSpec{Table: n.Table, Keys: n.RightKeys, Mem: b.mem,
			Location: j.env.Location, TablesDir: j.env.tablesDir()})
		if err != nil {
			return nil, err
		}
		op, err := ops.NewLookupJoin(b.mem, b.env, n, out, ops.LookupOptions{Source: src, Partial: cfg.Partial, MaxRows: cfg.MaxRows,
			ExpireAfterWrite: cfg.ExpireAfterWrite, ExpireAfterAccess: cfg.ExpireAfterAccess, CacheMissingKey: cfg.CacheMissingKey,
			MaxRetries: cfg.MaxRetries, Now: j.env.Now})
		if err != nil {
			src.Close()
			return nil, err
		}
		return op, nil
	})
	b.name(stage, n.Describe())
	return nil
}
