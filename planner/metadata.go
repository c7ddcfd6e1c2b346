package planner

import (
	"strings"
)

// MetadataKey is a metadata field a connector exposes to METADATA columns: read from
// each record (every key), and written by the sink when Writable.
type MetadataKey struct {
	Key      string
	Type     Type
	Writable bool
}

// kafkaMetadata are the keys of the Kafka connector's records.
var kafkaMetadata = []MetadataKey{
	{Key: "topic", Type: notNull(TypeString)},
	{Key: "partition", Type: notNull(TypeInt)},
	{Key: "headers", Type: notNull(MapType(TypeString, Type{Kind: Binary})), Writable: true},
	{Key: "leader-epoch", Type: TypeInt},
	{Key: "offset", Type: notNull(TypeBigInt)},
	{Key: "timestamp", Type: notNull(TypeTSLTZ), Writable: true},
	{Key: "timestamp-type", Type: notNull(TypeString)},
}

// connectorMetadata lists the metadata keys of the connectors that have any, in the
// order Flink's documentation lists them. upsert-kafka's are Kafka's: its source reads
// them from the record that holds the key's current value.
var connectorMetadata = map[string][]MetadataKey{
	"kafka":        kafkaMetadata,
	"upsert-kafka": kafkaMetadata,
}

// formatMetadata lists the metadata keys of the formats that have any, as Flink
// documents them (all nullable: a message may lack the field). A connector that reads
// them (Kafka, for its value format) names them with the prefix "value.".
var formatMetadata = map[string][]MetadataKey{
	"debezium-json": {
		{Key: "schema", Type: TypeString},
		{Key: "ingestion-timestamp", Type: TypeTSLTZ},
		{Key: "source.timestamp", Type: TypeTSLTZ},
		{Key: "source.database", Type: TypeString},
		{Key: "source.schema", Type: TypeString},
		{Key: "source.table", Type: TypeString},
		{Key: "source.properties", Type: MapType(TypeString, TypeString)},
	},
	"canal-json": {
		{Key: "database", Type: TypeString},
		{Key: "table", Type: TypeString},
		{Key: "sql-type", Type: MapType(TypeString, TypeInt)},
		{Key: "pk-names", Type: ArrayType(TypeString)},
		{Key: "ingestion-timestamp", Type: TypeTSLTZ},
		{Key: "event-timestamp", Type: TypeTSLTZ},
	},
	"maxwell-json": {
		{Key: "database", Type: TypeString},
		{Key: "table", Type: TypeString},
		{Key: "primary-key-columns", Type: ArrayType(TypeString)},
		{Key: "ingestion-timestamp", Type: TypeTSLTZ},
	},
}

// FormatMetadataPrefix starts the keys of a Kafka table's value format's metadata.
const FormatMetadataPrefix = "value."

// FormatMetadata returns the metadata keys of a format (lower case), without the
// prefix; nil when it has none.
func FormatMetadata(format string) []MetadataKey { return formatMetadata[format] }

// ConnectorMetadata returns the metadata keys of a connector (by its 'connector'
// option, lower case); nil when it has none.
func ConnectorMetadata(connector string) []MetadataKey { return connectorMetadata[connector] }

// metadataKeys are the metadata keys of t: as Flink lists them, its value format's
// (on Kafka, whose 'format' or 'value.format' has any; prefixed "value.") before its
// connector's. Flink's filesystem connector exposes no format metadata, nor does this.
func (t *Table) metadataKeys() []MetadataKey {
	keys := connectorMetadata[t.Connector()]
	if t.Connector() != "kafka" {
		return keys
	}
	fk := formatMetadata[t.valueFormat()]
	if len(fk) == 0 {
		return keys
	}
	out := make([]MetadataKey, 0, len(fk)+len(keys))
	for _, k := range fk {
		k.Key = FormatMetadataPrefix + k.Key
		out = append(out, k)
	}
	return append(out, keys...)
}

// valueFormat is the format of a table's values: 'format', or 'value.format'.
func (t *Table) valueFormat() string {
	f := t.Options["format"]
	if f == "" {
		f = t.Options["value.format"]
	}
	return strings.ToLower(strings.TrimSpace(f))
}

// MetadataOf returns the metadata key that column c reads, and false when c is no
// metadata column or its table has no such key.
func (t *Table) MetadataOf(c TableColumn) (MetadataKey, bool) {
	if c.Metadata == "" {
		return MetadataKey{}, false
	}
	for _, k := range t.metadataKeys() {
		if k.Key == c.Metadata {
			return k, true
		}
	}
	return MetadataKey{}, false
}

func notNull(t Type) Type { t.NotNull = true; return t }

// writableKeys lists the keys of a connector its sink writes, quoted.
func writableKeys(connector string) string {
	var names []string
	for _, k := range connectorMetadata[connector] {
		if k.Writable {
			names = append(names, "'"+k.Key+"'")
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// bindMetadata checks a metadata column against the keys of the table's connector.
func bindMetadata(t *Table, def positioned, c TableColumn) error {
	keys := t.metadataKeys()
	if len(keys) == 0 {
		return errorf(def, "connector '%s' has no metadata: column `%s` cannot be a METADATA column", t.Connector(), c.Name)
	}
	k, ok := t.MetadataOf(c)
	if !ok {
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = "'" + k.Key + "'"
		}
		with := ""
		if len(keys) > len(connectorMetadata[t.Connector()]) {
			with = " with format '" + t.valueFormat() + "'"
		}
		return errorf(def, "connector '%s'%s has no metadata key '%s' (it has %s)", t.Connector(), with, c.Metadata, strings.Join(names, ", "))
	}
	if !canCast(k.Type, c.Type) {
		return errorf(def, "METADATA column `%s` is a %s, which metadata key '%s' (a %s) cannot be cast to", c.Name, c.Type, k.Key, k.Type)
	}
	if !c.Virtual && k.Writable && !canCast(c.Type, k.Type) {
		return errorf(def, "METADATA column `%s` is a %s, which cannot be cast to metadata key '%s' (a %s) to write it", c.Name, c.Type, k.Key, k.Type)
	}
	return nil
}
