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

// connectorMetadata lists the metadata keys of the connectors that have any, in the
// order Flink's documentation lists them.
var connectorMetadata = map[string][]MetadataKey{
	"kafka": {
		{Key: "topic", Type: notNull(TypeString)},
		{Key: "partition", Type: notNull(TypeInt)},
		{Key: "headers", Type: notNull(MapType(TypeString, Type{Kind: Binary})), Writable: true},
		{Key: "leader-epoch", Type: TypeInt},
		{Key: "offset", Type: notNull(TypeBigInt)},
		{Key: "timestamp", Type: notNull(TypeTSLTZ), Writable: true},
		{Key: "timestamp-type", Type: notNull(TypeString)},
	},
}

// ConnectorMetadata returns the metadata keys of a connector (by its 'connector'
// option, lower case); nil when it has none.
func ConnectorMetadata(connector string) []MetadataKey { return connectorMetadata[connector] }

// MetadataOf returns the metadata key that column c reads, and false when c is no
// metadata column or its connector has no such key.
func (t *Table) MetadataOf(c TableColumn) (MetadataKey, bool) {
	if c.Metadata == "" {
		return MetadataKey{}, false
	}
	for _, k := range connectorMetadata[t.Connector()] {
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
	keys := connectorMetadata[t.Connector()]
	if len(keys) == 0 {
		return errorf(def, "connector '%s' has no metadata: column `%s` cannot be a METADATA column", t.Connector(), c.Name)
	}
	k, ok := t.MetadataOf(c)
	if !ok {
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = "'" + k.Key + "'"
		}
		return errorf(def, "connector '%s' has no metadata key '%s' (it has %s)", t.Connector(), c.Metadata, strings.Join(names, ", "))
	}
	if !canCast(k.Type, c.Type) {
		return errorf(def, "METADATA column `%s` is a %s, which metadata key '%s' (a %s) cannot be cast to", c.Name, c.Type, k.Key, k.Type)
	}
	if !c.Virtual && k.Writable && !canCast(c.Type, k.Type) {
		return errorf(def, "METADATA column `%s` is a %s, which cannot be cast to metadata key '%s' (a %s) to write it", c.Name, c.Type, k.Key, k.Type)
	}
	return nil
}
