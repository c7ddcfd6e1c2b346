package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// upsertInput produces n upserts and tombstones of keys 0..keys-1 to topic changes,
// partitioned by key as Kafka's producers do, and returns the final rows by key: the
// value of each key's last record ("grp,v"), keys last deleted absent.
func upsertInput(t *testing.T, addr string, n, keys int) map[int]string {
	t.Helper()
	cl := kafkaClient(t, addr) // the default partitioner: by the key's hash
	r := rand.New(rand.NewPCG(3, 5))
	final := map[int]string{}
	var first error
	for i := range n {
		k := r.IntN(keys)
		rec := &kgo.Record{Topic: "changes", Key: fmt.Appendf(nil, `{"id":%d}`, k)}
		if r.IntN(10) == 0 {
			delete(final, k) // a tombstone
		} else {
			grp, v := r.IntN(5), r.IntN(1000)
			rec.Value = fmt.Appendf(nil, `{"id":%d,"grp":"g%d","v":%d}`, k, grp, v)
			final[k] = fmt.Sprintf("g%d,%d", grp, v)
		}
		_ = i
		cl.Produce(context.Background(), rec, func(_ *kgo.Record, err error) {
			if err != nil && first == nil {
				first = err
			}
		})
	}
	if err := cl.Flush(context.Background()); err != nil || first != nil {
		t.Fatalf("producing: %v %v", err, first)
	}
	return final
}

// upsertTotals is what the job's sink must end with: per group, the number of keys and
// the sum of their values, as the sink's JSON values.
func upsertTotals(final map[int]string) []string {
	type acc struct{ n, sum int }
	by := map[string]*acc{}
	for _, row := range final {
		var grp string
		var v int
		g, vs, _ := strings.Cut(row, ",")
		grp = g
		fmt.Sscan(vs, &v)
		if by[grp] == nil {
			by[grp] = &acc{}
		}
		by[grp].n++
		by[grp].sum += v
	}
	var out []string
	for g, a := range by {
		out = append(out, fmt.Sprintf(`{"grp":"%s","n":%d,"total":%d}`, g, a.n, a.sum))
	}
	sort.Strings(out)
	return out
}

// compacted reads topic and keeps each key's last record, as a compacted topic does:
// the values of the keys whose last record is not a tombstone, sorted.
func compacted(t *testing.T, addr, topic string) []string {
	t.Helper()
	recs, err := kafkaRecords(addr, topic)
	if err != nil {
		t.Fatal(err)
	}
	last := map[string][]byte{}
	for _, r := range recs {
		if r.Value == nil {
			delete(last, string(r.Key))
		} else {
			last[string(r.Key)] = r.Value
		}
	}
	var out []string
	for _, v := range last {
		out = append(out, string(v))
	}
	sort.Strings(out)
	return out
}

func upsertPipeline(addr, out string) string {
	return fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '100 ms';
SET 'parallelism.default' = '2';
CREATE TABLE changes (id BIGINT, grp STRING, v BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = 'changes', 'properties.bootstrap.servers' = '%[1]s',
  'key.format' = 'json', 'value.format' = 'json', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE totals (grp STRING, n BIGINT, total BIGINT, PRIMARY KEY (grp) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = '%[2]s', 'properties.bootstrap.servers' = '%[1]s',
  'key.format' = 'json', 'value.format' = 'json');
INSERT INTO totals SELECT grp, COUNT(*), SUM(v) FROM changes GROUP BY grp;
`, addr, out)
}

// TestUpsertKafka: an aggregate over an upsert-kafka table, into an upsert-kafka table.
// The source's normalization (updates retract the key's old row, tombstones delete it)
// makes the groups' counts and sums those of the keys' last values; the sink's topic,
// compacted, holds them. Killed with SIGKILL and restarted, the job ends with the same
// compacted topic: the source's last values per key come back from the checkpoint with
// the aggregate's state.
func TestUpsertKafka(t *testing.T) {
	addr := kafkaCluster(t, 3, "changes", "clean", "out")
	final := upsertInput(t, addr, upsertKafkaRows, 2000)
	want := upsertTotals(final)

	start := time.Now()
	runKilled(t, writeScript(t, upsertPipeline(addr, "clean")), t.TempDir(), 0, 0, nil)
	t.Logf("failure-free run: %v", time.Since(start))
	if got := compacted(t, addr, "clean"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("failure-free run, compacted:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if testing.Short() {
		return
	}
	start = time.Now()
	// Killed 250-650 ms after each start: most runs complete a checkpoint (the first one
	// takes some 200 ms from the start), so most starts restore one.
	killed, restored := runKilledAfter(t, writeScript(t, upsertPipeline(addr, "out")), t.TempDir(), 3, 8,
		rand.New(rand.NewPCG(9, 4)), 250*time.Millisecond, 400*time.Millisecond)
	t.Logf("run with %d kills: %v, %d starts restored a checkpoint", killed, time.Since(start), restored)
	if restored < 3 {
		t.Errorf("only %d of %d starts restored a checkpoint: the kills did not test recovery", restored, killed+1)
	}
	if got := compacted(t, addr, "out"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after %d kills, compacted:\n%s\nwant:\n%s", killed, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// upsertKafkaRows is the input of TestUpsertKafka: enough for the job to outlive the
// kills (with 1.5M, once the JSON decoder got faster, a run ended after 2 of 3).
const upsertKafkaRows = 5000000
