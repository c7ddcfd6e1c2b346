// Package kafka is the Kafka source and sink (connector 'kafka'), speaking the Kafka
// protocol through franz-go. It registers itself with package connector.
package kafka

import "github.com/streamsql/streamsql/exec/connector"

// Source and Sink are the connector 'kafka'.
var (
	Source connector.SourceConnector
	Sink   connector.SinkConnector
)
