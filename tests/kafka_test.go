package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The Kafka tests run the real binary against an in-process Kafka cluster (kfake); the
// binary connects to it through 'properties.bootstrap.servers' as it would to a broker.

func kafkaCluster(t *testing.T, partitions int32, topics ...string) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return strings.Join(c.ListenAddrs(), ",")
}

func kafkaClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// kafkaProduce writes values round-robin over the topic's partitions.
func kafkaProduce(t *testing.T, addr, topic string, values []string) {
	t.Helper()
	cl := kafkaClient(t, addr, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	var mu sync.Mutex
	var first error
	for _, v := range values {
		cl.Produce(context.Background(), &kgo.Record{Topic: topic, Value: []byte(v)}, func(_ *kgo.Record, err error) {
			mu.Lock()
			if err != nil && first == nil {
				first = err
			}
			mu.Unlock()
		})
	}
	if err := cl.Flush(context.Background()); err != nil || first != nil {
		t.Fatalf("producing to %s: %v %v", topic, err, first)
	}
}

// kafkaCommitted reads the committed records of topic, up to its last stable offsets
// now, as a read_committed consumer.
func kafkaCommitted(t *testing.T, addr, topic string) ([]string, error) {
	recs, err := kafkaRecords(addr, topic)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Value)
	}
	return out, nil
}

// kafkaRecords reads the committed records of topic as kafkaCommitted does, whole.
func kafkaRecords(addr, topic string) ([]*kgo.Record, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends := map[int32]int64{}
	admin, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	meta.Topics = append(meta.Topics, mt)
	mresp, err := meta.RequestWith(ctx, admin)
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrListOffsetsRequest() // the last stable offsets
	req.ReplicaID, req.IsolationLevel = -1, 1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for _, t := range mresp.Topics {
		for _, p := range t.Partitions {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition, rp.Timestamp = p.Partition, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, admin)
	if err != nil {
		return nil, err
	}
	assign := map[int32]kgo.Offset{}
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			if p.ErrorCode != 0 {
				return nil, fmt.Errorf("list offsets: error %d", p.ErrorCode)
			}
			if p.Offset > 0 {
				ends[p.Partition] = p.Offset
				assign[p.Partition] = kgo.NewOffset().AtStart()
			}
		}
	}
	if len(assign) == 0 {
		return nil, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign}))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	pos := map[int32]int64{}
	var out []*kgo.Record
	for {
		done := true
		for p, end := range ends {
			if pos[p] < end {
				done = false
			}
		}
		if done {
			return out, nil
		}
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("consuming %s: %w", topic, err)
		}
		if errs := fs.Errors(); len(errs) > 0 {
			return nil, errs[0].Err
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset >= ends[r.Partition] {
				return
			}
			pos[r.Partition] = r.Offset + 1
			if !r.Attrs.IsControl() {
				out = append(out, r)
			}
		})
	}
}

// TestKafkaGroupBy: a GROUP BY over a bounded Kafka source, printed as CSV by the
// binary.
func TestKafkaGroupBy(t *testing.T) {
	addr := kafkaCluster(t, 2, "clicks")
	var vals []string
	for i := 0; i < 1000; i++ {
		vals = append(vals, fmt.Sprintf("user%d,%d", i%3, i))
	}
	kafkaProduce(t, addr, "clicks", vals)
	script := writeScript(t, fmt.Sprintf(`
SET 'parallelism.default' = '2';
CREATE TABLE clicks (u STRING, n BIGINT) WITH (
  'connector' = 'kafka', 'topic' = 'clicks', 'properties.bootstrap.servers' = '%s',
  'properties.group.id' = 'report', 'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset', 'format' = 'csv');
SELECT u, COUNT(*) AS c, SUM(n) AS s FROM clicks GROUP BY u;
`, addr))
	out, errOut, code := runCLI(t, "", "-f", script, "--format", "csv", "--state-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	sort.Strings(lines[1:])
	want := []string{"u,c,s", "user0,334,166833", "user1,333,166167", "user2,333,166500"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("output:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}
}

// kafkaPipeline copies the rows of topic in whose id is not a multiple of 3 to topic
// out, exactly-once, with checkpoints every 100 ms; each record's timestamp is its id
// in milliseconds and its header "id" the id (METADATA columns).
func kafkaPipeline(addr, out, prefix string) string {
	return fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '100 ms';
SET 'parallelism.default' = '2';
CREATE TABLE src (id BIGINT, name STRING) WITH (
  'connector' = 'kafka', 'topic' = 'in', 'properties.bootstrap.servers' = '%[1]s',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'csv');
CREATE TABLE dst (id BIGINT, name STRING, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  h MAP<STRING, BYTES> METADATA FROM 'headers') WITH (
  'connector' = 'kafka', 'topic' = '%[2]s', 'properties.bootstrap.servers' = '%[1]s', 'format' = 'csv',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = '%[3]s');
INSERT INTO dst SELECT id, name, TO_TIMESTAMP_LTZ(id, 3), MAP['id', CAST(CAST(id AS STRING) AS BYTES)]
  FROM src WHERE id %% 3 <> 0;
`, addr, out, prefix)
}

// runKilled starts the script and SIGKILLs it at random moments (50-300 ms after each
// start) up to kills times, then lets it finish; it returns the kills and how many starts
// restored a checkpoint. It fails if the job finished before minKills kills.
func runKilled(t *testing.T, script, stateDir string, minKills, kills int, r *rand.Rand) (killed, restored int) {
	t.Helper()
	return runKilledAfter(t, script, stateDir, minKills, kills, r, 50*time.Millisecond, 250*time.Millisecond)
}

// runKilledAfter is runKilled with each kill from least to least + spread after a start.
func runKilledAfter(t *testing.T, script, stateDir string, minKills, kills int, r *rand.Rand, least, spread time.Duration) (killed, restored int) {
	t.Helper()
	for {
		cmd := streamsqlCmd("-f", script, "--state-dir", stateDir)
		var errOut strings.Builder
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		var timeout <-chan time.Time
		if killed < kills {
			timeout = time.After(least + time.Duration(r.Int64N(int64(spread))))
		} else {
			timeout = time.After(2 * time.Minute)
		}
		var err error
		select {
		case err = <-exited:
		case <-timeout:
			cmd.Process.Kill()
			if err = <-exited; err == nil {
				break // it ended as it was killed
			}
			if killed == kills {
				t.Fatalf("the final run did not end in 2 minutes:\n%.3000s", errOut.String())
			}
			killed++
		}
		if strings.Contains(errOut.String(), "restoring checkpoint") {
			restored++
		}
		logFailures(t, errOut.String())
		if err != nil && !strings.Contains(err.Error(), "killed") {
			t.Fatalf("run %d: %v\n%.3000s", killed, err, errOut.String())
		}
		if err == nil {
			if killed < minKills {
				t.Fatalf("the job ended after only %d kills, fewer than %d: make it longer", killed, minKills)
			}
			return killed, restored
		}
	}
}

// logFailures logs the lines of a run's standard error that report a failed attempt.
func logFailures(t *testing.T, stderr string) {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, " failed: ") {
			t.Logf("%.500s", l)
		}
	}
}

func sortedCopy(v []string) []string {
	v = append([]string(nil), v...)
	sort.Strings(v)
	return v
}

// TestKafkaCrashExactlyOnce kills a Kafka-to-Kafka exactly-once job 10 to 15 times;
// a read_committed reader of the output then sees exactly the rows of a failure-free
// run, none lost and none twice, each with the timestamp and header its METADATA
// columns wrote, and every row it saw while the job ran is among them.
func TestKafkaCrashExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	const n = kafkaCrashRows
	addr := kafkaCluster(t, 2, "in", "clean", "out")
	vals := make([]string, n)
	var want []string
	for i := range vals {
		vals[i] = fmt.Sprintf("%d,row-%d", i, i)
		if i%3 != 0 {
			want = append(want, vals[i])
		}
	}
	kafkaProduce(t, addr, "in", vals)

	start := time.Now()
	runKilled(t, writeScript(t, kafkaPipeline(addr, "clean", "clean")), t.TempDir(), 0, 0, nil)
	t.Logf("failure-free run: %v", time.Since(start))
	clean, err := kafkaCommitted(t, addr, "clean")
	if err != nil {
		t.Fatal(err)
	}
	if got := sortedCopy(clean); strings.Join(got, "\n") != strings.Join(sortedCopy(want), "\n") {
		t.Fatalf("failure-free run wrote %d rows, want %d", len(got), len(want))
	}

	// Sample the output while the job is killed and restarted.
	stop := make(chan struct{})
	var sampling sync.WaitGroup
	var samples [][]string
	var sampleErr error
	sampling.Add(1)
	go func() {
		defer sampling.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(150 * time.Millisecond):
			}
			s, err := kafkaCommitted(t, addr, "out")
			if err != nil {
				sampleErr = err
				return
			}
			samples = append(samples, s)
		}
	}()
	start = time.Now()
	killed, restored := runKilled(t, writeScript(t, kafkaPipeline(addr, "out", "crash")), t.TempDir(), 10, 15, rand.New(rand.NewPCG(7, 11)))
	close(stop)
	sampling.Wait()
	t.Logf("run with %d kills: %v, %d starts restored a checkpoint, %d samples", killed, time.Since(start), restored, len(samples))
	if restored < 3 {
		t.Errorf("only %d of %d starts restored a checkpoint: the kills did not test recovery", restored, killed+1)
	}
	if sampleErr != nil {
		t.Fatal(sampleErr)
	}
	recs, err := kafkaRecords(addr, "out")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(recs))
	badMeta := 0
	for i, r := range recs {
		got[i] = string(r.Value)
		id, _, _ := strings.Cut(got[i], ",")
		if len(r.Headers) != 1 || r.Headers[0].Key != "id" || string(r.Headers[0].Value) != id ||
			fmt.Sprint(r.Timestamp.UnixMilli()) != id {
			if badMeta++; badMeta <= 3 {
				t.Errorf("record %q has timestamp %d and headers %v", got[i], r.Timestamp.UnixMilli(), r.Headers)
			}
		}
	}
	count := map[string]int{}
	for _, row := range got {
		count[row]++
	}
	wrong := 0
	for _, row := range clean {
		if count[row] != 1 {
			if wrong++; wrong <= 10 {
				t.Errorf("row %q written %d times", row, count[row])
			}
		}
	}
	if wrong > 10 {
		t.Errorf("... %d rows written other than once", wrong)
	}
	if len(got) != len(clean) {
		t.Errorf("%d rows after the crashes, want %d", len(got), len(clean))
	}
	grew := 0
	for i, s := range samples {
		for _, row := range s {
			if count[row] == 0 {
				t.Fatalf("sample %d saw row %q, which is not in the final output", i, row)
			}
		}
		if len(s) > 0 && len(s) < len(got) {
			grew++
		}
	}
	if grew == 0 {
		t.Errorf("no sample saw partial output: the job was not observed committing")
	}
}

// kafkaCrashRows is the input of the crash test: enough for the job to outlive 10
// kills.
const kafkaCrashRows = 1000000
