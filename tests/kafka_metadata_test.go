package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestKafkaMetadataColumns: a script writes rows with a 'timestamp' and a 'headers'
// METADATA column into Kafka (the in-process broker), and another reads them back
// with every metadata key; a Kafka client sees the timestamps and headers on the
// records, and the values without them.
func TestKafkaMetadataColumns(t *testing.T) {
	addr := kafkaCluster(t, 2, "events")
	ddl := fmt.Sprintf(`CREATE TABLE events (
  id BIGINT,
  name STRING,
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  headers MAP<STRING, BYTES> METADATA,
  part BIGINT METADATA FROM 'partition' VIRTUAL,
  kind STRING METADATA FROM 'timestamp-type' VIRTUAL,
  topic STRING METADATA VIRTUAL
) WITH ('connector' = 'kafka', 'topic' = 'events', 'properties.bootstrap.servers' = '%s', 'format' = 'json'`, addr)
	write := ddl + `, 'sink.partitioner' = 'fixed');
SET 'table.local-time-zone' = 'UTC';
INSERT INTO events VALUES
  (1, 'a', TO_TIMESTAMP_LTZ(1714979289123, 3), MAP['trace', CAST('t-1' AS BYTES), 'n', CAST('' AS BYTES)]),
  (2, 'b', TO_TIMESTAMP_LTZ(1714979290000, 3), MAP['trace', CAST('t-2' AS BYTES)]);`
	if _, errOut, code := runCLI(t, "", "-e", write, "--state-dir", t.TempDir()); code != 0 {
		t.Fatalf("writing: %s", errOut)
	}
	recs, err := kafkaRecords(addr, "events")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		var hs []string
		for _, h := range r.Headers {
			hs = append(hs, h.Key+"="+string(h.Value))
		}
		got = append(got, fmt.Sprintf("%s %s %s", r.Value, r.Timestamp.UTC().Format(time.RFC3339Nano), strings.Join(hs, ",")))
	}
	want := `{"id":1,"name":"a"} 2024-05-06T07:08:09.123Z trace=t-1,n=|{"id":2,"name":"b"} 2024-05-06T07:08:10Z trace=t-2`
	if strings.Join(got, "|") != want {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.ReplaceAll(want, "|", "\n"))
	}

	read := ddl + `, 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');
SET 'table.local-time-zone' = 'UTC';
SELECT id, name, ts, CAST(headers['trace'] AS STRING) AS trace, CARDINALITY(headers) AS n, part, kind, topic FROM events;`
	out, errOut, code := runCLI(t, "", "-e", read, "--format", "csv", "--state-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("reading: %s", errOut)
	}
	wantOut := `id,name,ts,trace,n,part,kind,topic
1,a,2024-05-06 07:08:09.123,t-1,2,0,CreateTime,events
2,b,2024-05-06 07:08:10.000,t-2,1,0,CreateTime,events
`
	if out != wantOut {
		t.Errorf("read back:\n%s\nwant:\n%s", out, wantOut)
	}
}
