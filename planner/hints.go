package planner

import (
	"maps"
	"slices"
	"strings"

	"github.com/streamsql/streamsql/parser"
)

// joinHints are Flink's join strategy hints. streamsql has one strategy for each kind
// of join (a hash-partitioned streaming join), so they are accepted with a notice and
// change nothing.
var joinHints = map[string]bool{"BROADCAST": true, "SHUFFLE_HASH": true, "SHUFFLE_MERGE": true, "NEST_LOOP": true, "LOOKUP": true}

// tableHints applies the hints of a table reference to t: OPTIONS('k' = 'v', ...) gives
// a copy of t whose options are t's with these set (Flink's dynamic table options). Any
// other table hint is an error.
func tableHints(t *Table, hints []*parser.Hint) (*Table, error) {
	if len(hints) == 0 {
		return t, nil
	}
	c := *t
	c.Options = maps.Clone(t.Options)
	for _, h := range hints {
		if h.Name != "OPTIONS" {
			return nil, errorf(h, "unknown table hint %s: the table hint is OPTIONS('key' = 'value', ...)", h.Name)
		}
		if len(h.Args) > 0 || len(h.Options) == 0 {
			return nil, errorf(h, "OPTIONS takes 'key' = 'value' pairs")
		}
		for _, o := range h.Options {
			c.Options[o.Key] = o.Value
			if !slices.Contains(c.Hinted, o.Key) {
				c.Hinted = append(c.Hinted, o.Key)
			}
		}
	}
	slices.Sort(c.Hinted)
	return &c, nil
}

// queryHints checks the hints after a SELECT: join hints are accepted with a notice,
// STATE_TTL and unknown hints are errors.
func (p *Planner) queryHints(hints []*parser.Hint) error {
	for _, h := range hints {
		switch {
		case joinHints[h.Name]:
			p.notice("hint " + h.String() + " is accepted and ignored: streamsql plans every join of a kind one way")
		case h.Name == "STATE_TTL":
			return errorf(h, "the STATE_TTL hint is not supported: set 'table.exec.state.ttl' for the whole job")
		case h.Name == "OPTIONS":
			return errorf(h, "OPTIONS is a table hint: write it after the table's name, FROM t /*+ OPTIONS(...) */")
		default:
			return errorf(h, "unknown hint %s (query hints: %s, STATE_TTL)", h.Name, strings.Join([]string{"BROADCAST", "SHUFFLE_HASH", "SHUFFLE_MERGE", "NEST_LOOP", "LOOKUP"}, ", "))
		}
	}
	return nil
}

func (p *Planner) notice(msg string) {
	if p.Notice != nil {
		p.Notice(msg)
	}
}
