package streamsql

import (
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/exec/connector/embedded"
	"github.com/streamsql/streamsql/exec/connector/kafka"
	"github.com/streamsql/streamsql/exec/connector/nexmark"
	"github.com/streamsql/streamsql/exec/connector/postgres"
)

// connectors adds the connectors that bring client libraries to the built-in ones.
var connectors = &connector.Registry{
	Sources: map[string]connector.SourceConnector{
		"embedded":     embedded.Source,
		"kafka":        kafka.Source,
		"upsert-kafka": kafka.UpsertSource,
		"nexmark":      nexmark.Source,
	},
	Lookups: map[string]connector.LookupConnector{
		"embedded": embedded.Lookup,
		"postgres": postgres.Lookup,
		"jdbc":     postgres.Lookup,
	},
	Sinks: map[string]connector.SinkConnector{
		"embedded":     embedded.Sink,
		"kafka":        kafka.Sink,
		"upsert-kafka": kafka.UpsertSink,
		"postgres":     postgres.Sink,
		"jdbc":         postgres.Sink,
	},
}
