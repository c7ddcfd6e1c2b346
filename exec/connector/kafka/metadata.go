package kafka

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
	"github.com/twmb/franz-go/pkg/kgo"
)

// metaReader adds a Kafka table's metadata columns (topic, partition, headers,
// leader-epoch, offset, timestamp, timestamp-type, and the value format's value.*
// keys) to the rows decoded from each record's value: the source's rows are the
// table's SourceSchema, physical and metadata columns in the table's order.
type metaReader struct {
	schema   *arrow.Schema // of the rows returned
	physical []int         // the positions of the physical columns
	cols     []metaColumn
	values   []int // the positions of the value format's metadata columns, which the decoder reads after the physical ones
}

// metaColumn is one metadata column of the record: its position in the rows and its
// builder.
type metaColumn struct {
	at  int
	key string
	b   array.Builder
}

// formatMetadata returns the value format's metadata keys that t's columns read, in
// the table's order and without the prefix, for format.NewMetadataDecoder.
func formatMetadata(t *planner.Table) []string {
	var keys []string
	for _, c := range t.Columns {
		if c.Computed == nil {
			if k, ok := strings.CutPrefix(c.Metadata, planner.FormatMetadataPrefix); ok {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// newMetaReader returns the metadata reader of t, or nil when t has no metadata
// columns.
func newMetaReader(t *planner.Table, mem memory.Allocator) (*metaReader, error) {
	if !t.HasMetadata() {
		return nil, nil
	}
	src := t.SourceSchema()
	m := &metaReader{schema: exec.ArrowSchema(src)}
	at := 0
	for _, c := range t.Columns {
		if c.Computed != nil {
			continue
		}
		if !c.IsMetadata() {
			m.physical = append(m.physical, at)
			at++
			continue
		}
		k, ok := t.MetadataOf(c)
		if !ok {
			m.release()
			return nil, fmt.Errorf("table %s: the kafka connector has no metadata key '%s'", t.Name, c.Metadata)
		}
		if strings.HasPrefix(k.Key, planner.FormatMetadataPrefix) {
			m.values = append(m.values, at)
			at++
			continue
		}
		m.cols = append(m.cols, metaColumn{at: at, key: k.Key, b: array.NewBuilder(mem, exec.ArrowType(k.Type))})
		at++
	}
	return m, nil
}

// timestampTypes are the names Flink gives Kafka's timestamp types.
var timestampTypes = map[int8]string{0: "CreateTime", 1: "LogAppendTime"}

// recordInfo is the metadata of a record. An upsert-kafka source keeps it for the
// record that holds each key's value (its retraction carries it), in its checkpoints
// too; topic and partition are the partition's.
type recordInfo struct {
	Topic         string             `json:"-"`
	Partition     int32              `json:"-"`
	Offset        int64              `json:"offset"`
	Timestamp     int64              `json:"ts"` // Unix milliseconds
	TimestampType int8               `json:"ts_type"`
	LeaderEpoch   int32              `json:"leader_epoch"`
	Headers       []kgo.RecordHeader `json:"headers,omitempty"`
}

func infoOf(rec *kgo.Record) recordInfo {
	return recordInfo{Topic: rec.Topic, Partition: rec.Partition, Offset: rec.Offset, Timestamp: rec.Timestamp.UnixMilli(),
		TimestampType: rec.Attrs.TimestampType(), LeaderEpoch: rec.LeaderEpoch, Headers: rec.Headers}
}

// add appends the metadata of rec, n times (for the rows decoded from it).
func (m *metaReader) add(rec *recordInfo, n int) {
	for range n {
		for _, c := range m.cols {
			switch c.key {
			case "topic":
				c.b.(*array.StringBuilder).Append(rec.Topic)
			case "partition":
				c.b.(*array.Int32Builder).Append(rec.Partition)
			case "headers":
				mb := c.b.(*array.MapBuilder)
				mb.Append(true)
				keys, items := mb.KeyBuilder().(*array.StringBuilder), mb.ItemBuilder().(*array.BinaryBuilder)
				for _, h := range rec.Headers {
					keys.Append(h.Key)
					if h.Value == nil {
						items.AppendNull()
					} else {
						items.Append(h.Value)
					}
				}
			case "leader-epoch":
				if rec.LeaderEpoch < 0 {
					c.b.AppendNull()
				} else {
					c.b.(*array.Int32Builder).Append(rec.LeaderEpoch)
				}
			case "offset":
				c.b.(*array.Int64Builder).Append(rec.Offset)
			case "timestamp":
				c.b.(*array.TimestampBuilder).Append(arrow.Timestamp(rec.Timestamp))
			case "timestamp-type":
				name, ok := timestampTypes[rec.TimestampType]
				if !ok {
					name = "NoTimestampType"
				}
				c.b.(*array.StringBuilder).Append(name)
			}
		}
	}
}

// merge returns the rows of phys (the decoded physical columns) with the metadata
// columns added since the last merge. It takes phys's reference.
func (m *metaReader) merge(phys arrow.Record) arrow.Record {
	defer phys.Release()
	cols := make([]arrow.Array, len(m.schema.Fields()))
	for i, at := range m.physical {
		cols[at] = phys.Column(i)
		cols[at].Retain()
	}
	for i, at := range m.values {
		cols[at] = phys.Column(len(m.physical) + i)
		cols[at].Retain()
	}
	for _, c := range m.cols {
		cols[c.at] = c.b.NewArray()
	}
	out := array.NewRecord(m.schema, cols, phys.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return out
}

func (m *metaReader) release() {
	if m == nil {
		return
	}
	for _, c := range m.cols {
		c.b.Release()
	}
}
