package kafka

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/planner"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Source and Sink are the connector 'kafka'.
var (
	Source = connector.SourceConnector{Open: openSource, Replayable: true, Parallel: true, Rescale: rescaleSource,
		Bounded: func(t *planner.Table) bool {
			mode, ok := t.Option("scan.bounded.mode")
			return ok && !strings.EqualFold(mode, "unbounded")
		}}
	Sink = connector.SinkConnector{Open: openSink, Delivery: delivery}
)

// isProperty accepts the Kafka client properties, 'properties.*'. The client honours
// bootstrap.servers, group.id, client.id, isolation.level, auto.offset.reset and
// transaction.timeout.ms; the others are accepted, as Flink passes them to its client,
// and ignored.
func isProperty(key string) bool {
	return strings.HasPrefix(key, "properties.") && len(key) > len("properties.")
}

// clientOpts returns the options of a client of the table's cluster.
func clientOpts(o *connector.Options, t *planner.Table) ([]kgo.Opt, error) {
	servers, err := o.Required("properties.bootstrap.servers")
	if err != nil {
		return nil, err
	}
	var seeds []string
	for _, s := range strings.Split(servers, ",") {
		if s = strings.TrimSpace(s); s != "" {
			seeds = append(seeds, s)
		}
	}
	opts := []kgo.Opt{kgo.SeedBrokers(seeds...)}
	if id, ok := t.Option("properties.client.id"); ok {
		opts = append(opts, kgo.ClientID(id))
	}
	return opts, nil
}

// topics reads 'topic': one topic or a ';'-separated list.
func topics(o *connector.Options) ([]string, error) {
	v, err := o.Required("topic")
	if err != nil {
		return nil, err
	}
	var ts []string
	seen := map[string]bool{}
	for _, s := range strings.Split(v, ";") {
		s = strings.TrimSpace(s)
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		ts = append(ts, s)
	}
	if len(ts) == 0 {
		return nil, o.Err("option 'topic' names no topic")
	}
	return ts, nil
}

// choice reads an option that takes one of values (lower case), def when absent.
func choice(o *connector.Options, t *planner.Table, key, def string, values ...string) (string, error) {
	v, ok := t.Option(key)
	if !ok {
		return def, nil
	}
	v = strings.ToLower(strings.TrimSpace(v))
	for _, x := range values {
		if v == x {
			return v, nil
		}
	}
	return "", o.Err("option '%s' must be one of %s, got %q", key, quoteList(values), t.Options[key])
}

func quoteList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = "'" + v + "'"
	}
	return strings.Join(q, ", ")
}

// specificOffsets parses 'partition:0,offset:42;partition:1,offset:300'.
func specificOffsets(o *connector.Options, key, v string) (map[int32]int64, error) {
	m := map[int32]int64{}
	for _, entry := range strings.Split(v, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		p, off := int64(-1), int64(-1)
		for _, kv := range strings.Split(entry, ",") {
			k, val, ok := strings.Cut(strings.TrimSpace(kv), ":")
			n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
			if !ok || err != nil || n < 0 {
				return nil, o.Err("option '%s': bad entry %q (want 'partition:0,offset:42;partition:1,offset:300')", key, entry)
			}
			switch strings.TrimSpace(k) {
			case "partition":
				p = n
			case "offset":
				off = n
			default:
				return nil, o.Err("option '%s': bad entry %q (want 'partition:0,offset:42;partition:1,offset:300')", key, entry)
			}
		}
		if p < 0 || off < 0 || p > 1<<31-1 {
			return nil, o.Err("option '%s': bad entry %q (want 'partition:0,offset:42;partition:1,offset:300')", key, entry)
		}
		m[int32(p)] = off
	}
	if len(m) == 0 {
		return nil, o.Err("option '%s' names no partition", key)
	}
	return m, nil
}

// millisProperty reads a 'properties.*' duration in milliseconds.
func millisProperty(o *connector.Options, key string, def time.Duration) (time.Duration, error) {
	n, err := o.Int64(key, def.Milliseconds(), 1, 1<<40)
	if err != nil {
		return 0, err
	}
	return time.Duration(n) * time.Millisecond, nil
}

// tableErr prefixes an error with the table's name.
func tableErr(table string, err error) error { return fmt.Errorf("table %s: %w", table, err) }
