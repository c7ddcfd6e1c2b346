package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
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
		got = append(got, fmt.Sprintf("%s %s %s", r.Value, r.Timestamp.UTC().Format(time.RFC3339Nano), headerText(r)))
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

// TestKafkaFormatMetadata: a Kafka table in each changelog format reads the format's
// metadata (value.source.timestamp, value.database, ...) beside the rows of each
// message, and with the connector's; a watermark may use it. A message whose metadata
// is malformed fails the job naming it, or is skipped with ignore-parse-errors.
func TestKafkaFormatMetadata(t *testing.T) {
	addr := kafkaCluster(t, 1, "dbz", "canal", "maxwell", "bad")
	kafkaProduce(t, addr, "dbz", []string{
		`{"before":null,"after":{"id":1,"name":"scooter"},"op":"c","ts_ms":1589362330904,"source":{"connector":"mysql","ts_ms":1589362330000,"db":"inventory","table":"products"}}`,
		`{"before":{"id":1,"name":"scooter"},"after":{"id":1,"name":"bike"},"op":"u","ts_ms":1589362331904,"source":{"connector":"mysql","ts_ms":1589362331000,"db":"inventory","table":"products"}}`,
	})
	kafkaProduce(t, addr, "canal", []string{
		`{"data":[{"id":7,"name":"a"},{"id":8,"name":"b"}],"database":"shop","table":"items","sqlType":{"id":-5,"name":12},"pkNames":["id"],"type":"INSERT","es":1589373560000,"ts":1589373560798}`,
	})
	kafkaProduce(t, addr, "maxwell", []string{
		`{"database":"test","table":"product","type":"insert","ts":1596684904,"data":{"id":3,"name":"c"},"primary_key_columns":["id"]}`,
	})
	kafkaProduce(t, addr, "bad", []string{
		`{"before":null,"after":{"id":1,"name":"ok"},"op":"c","source":{"ts_ms":1000}}`,
		`{"before":null,"after":{"id":2,"name":"late"},"op":"c","source":{"ts_ms":"yesterday"}}`,
	})
	with := func(topic, format, extra string) string {
		return fmt.Sprintf(`WITH ('connector' = 'kafka', 'topic' = '%s', 'properties.bootstrap.servers' = '%s', 'format' = '%s',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'%s)`, topic, addr, format, extra)
	}
	script := `SET 'table.local-time-zone' = 'UTC';
CREATE TABLE dbz (
  id BIGINT, name STRING,
  origin_ts TIMESTAMP_LTZ(3) METADATA FROM 'value.source.timestamp' VIRTUAL,
  ingested TIMESTAMP_LTZ(3) METADATA FROM 'value.ingestion-timestamp' VIRTUAL,
  db STRING METADATA FROM 'value.source.database' VIRTUAL,
  tbl STRING METADATA FROM 'value.source.table' VIRTUAL,
  props MAP<STRING, STRING> METADATA FROM 'value.source.properties' VIRTUAL,
  ` + "`offset`" + ` BIGINT METADATA VIRTUAL,
  WATERMARK FOR origin_ts AS origin_ts - INTERVAL '1' SECOND
) ` + with("dbz", "debezium-json", "") + `;
CREATE TABLE canal (
  id BIGINT, name STRING,
  db STRING METADATA FROM 'value.database' VIRTUAL,
  tbl STRING METADATA FROM 'value.table' VIRTUAL,
  types MAP<STRING, INT> METADATA FROM 'value.sql-type' VIRTUAL,
  pk ARRAY<STRING> METADATA FROM 'value.pk-names' VIRTUAL,
  ingested TIMESTAMP_LTZ(3) METADATA FROM 'value.ingestion-timestamp' VIRTUAL,
  happened TIMESTAMP_LTZ(3) METADATA FROM 'value.event-timestamp' VIRTUAL
) ` + with("canal", "canal-json", "") + `;
CREATE TABLE maxwell (
  id BIGINT, name STRING,
  db STRING METADATA FROM 'value.database' VIRTUAL,
  tbl STRING METADATA FROM 'value.table' VIRTUAL,
  pk ARRAY<STRING> METADATA FROM 'value.primary-key-columns' VIRTUAL,
  ingested TIMESTAMP_LTZ(3) METADATA FROM 'value.ingestion-timestamp' VIRTUAL
) ` + with("maxwell", "maxwell-json", "") + `;
SELECT id, name, origin_ts, ingested, db, tbl, props['connector'] AS conn, ` + "`offset`" + ` FROM dbz;
SELECT id, name, db, tbl, types['id'] AS id_type, pk[1] AS pk, ingested, happened FROM canal;
SELECT id, name, db, tbl, pk[1] AS pk, ingested FROM maxwell;
`
	out, errOut, code := runCLI(t, "", "-e", script, "--format", "changelog", "--state-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := `+I[1, scooter, 2020-05-13 09:32:10.000, 2020-05-13 09:32:10.904, inventory, products, mysql, 0]
-U[1, scooter, 2020-05-13 09:32:11.000, 2020-05-13 09:32:11.904, inventory, products, mysql, 1]
+U[1, bike, 2020-05-13 09:32:11.000, 2020-05-13 09:32:11.904, inventory, products, mysql, 1]
+I[7, a, shop, items, -5, id, 2020-05-13 12:39:20.798, 2020-05-13 12:39:20.000]
+I[8, b, shop, items, -5, id, 2020-05-13 12:39:20.798, 2020-05-13 12:39:20.000]
+I[3, c, test, product, id, 2020-08-06 03:35:04.000]
`
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}

	bad := `CREATE TABLE bad (id BIGINT, name STRING, origin_ts TIMESTAMP_LTZ(3) METADATA FROM 'value.source.timestamp' VIRTUAL) ` +
		with("bad", "debezium-json", "%s") + `;
SELECT id, name FROM bad;`
	_, errOut, code = runCLI(t, "", "-e", fmt.Sprintf(bad, ""), "--format", "changelog", "--state-dir", t.TempDir())
	if wantErr := `metadata 'source.timestamp': field source.ts_ms: cannot parse "yesterday" as BIGINT`; code == 0 || !strings.Contains(errOut, wantErr) || !strings.Contains(errOut, "offset 1") {
		t.Errorf("malformed metadata: exit %d, stderr %s\nwant an error with %s", code, errOut, wantErr)
	}
	out, errOut, code = runCLI(t, "", "-e", fmt.Sprintf(bad, `, 'debezium-json.ignore-parse-errors' = 'true'`), "--format", "changelog", "--state-dir", t.TempDir())
	if code != 0 || out != "+I[1, ok]\n" {
		t.Errorf("malformed metadata ignored: exit %d, output %q, stderr %s", code, out, errOut)
	}
}

// TestUpsertKafkaMetadata: an upsert-kafka table writes its 'timestamp' and 'headers'
// METADATA columns as the records' and reads Kafka's metadata keys back: each change
// with the metadata of the record holding the key's value (the retraction of an old
// value carries the old record's offset and timestamp, as Flink's).
func TestUpsertKafkaMetadata(t *testing.T) {
	addr := kafkaCluster(t, 1, "users")
	ddl := fmt.Sprintf(`SET 'table.local-time-zone' = 'UTC';
CREATE TABLE users (
  id BIGINT, name STRING,
  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp',
  hs MAP<STRING, BYTES> METADATA FROM 'headers',
  `+"`offset`"+` BIGINT METADATA VIRTUAL,
  PRIMARY KEY (id) NOT ENFORCED
) WITH ('connector' = 'upsert-kafka', 'topic' = 'users', 'properties.bootstrap.servers' = '%s',
  'key.format' = 'json', 'value.format' = 'json', 'scan.bounded.mode' = 'latest-offset');
`, addr)
	for _, insert := range []string{
		`INSERT INTO users VALUES (1, 'ann', TO_TIMESTAMP_LTZ(1000, 3), MAP['v', CAST('1' AS BYTES)]), (2, 'bob', TO_TIMESTAMP_LTZ(1500, 3), MAP['v', CAST('b' AS BYTES)]);`,
		`INSERT INTO users VALUES (1, 'ann2', TO_TIMESTAMP_LTZ(2000, 3), MAP['v', CAST('2' AS BYTES)]);`,
	} {
		if _, errOut, code := runCLI(t, "", "-e", ddl+insert, "--state-dir", t.TempDir()); code != 0 {
			t.Fatalf("writing: %s", errOut)
		}
	}
	recs, err := kafkaRecords(addr, "users")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%s %s %d %s", r.Key, r.Value, r.Timestamp.UnixMilli(), headerText(r)))
	}
	want := `{"id":1} {"id":1,"name":"ann"} 1000 v=1|{"id":2} {"id":2,"name":"bob"} 1500 v=b|{"id":1} {"id":1,"name":"ann2"} 2000 v=2`
	if strings.Join(got, "|") != want {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.ReplaceAll(want, "|", "\n"))
	}
	out, errOut, code := runCLI(t, "", "-e", ddl+"SELECT id, name, ts, `offset`, CAST(hs['v'] AS STRING) AS v FROM users;",
		"--format", "changelog", "--state-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("reading: %s", errOut)
	}
	wantOut := `+I[1, ann, 1970-01-01 00:00:01.000, 0, 1]
+I[2, bob, 1970-01-01 00:00:01.500, 1, b]
-U[1, ann, 1970-01-01 00:00:01.000, 0, 1]
+U[1, ann2, 1970-01-01 00:00:02.000, 2, 2]
`
	if out != wantOut {
		t.Errorf("read back:\n%s\nwant:\n%s", out, wantOut)
	}
}

// headerText is a record's headers as key=value, comma-separated.
func headerText(r *kgo.Record) string {
	var hs []string
	for _, h := range r.Headers {
		hs = append(hs, h.Key+"="+string(h.Value))
	}
	return strings.Join(hs, ",")
}
