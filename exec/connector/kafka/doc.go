// Package kafka is the Kafka source and sink (connector 'kafka'), speaking the Kafka
// protocol through franz-go. It registers itself with package connector.
package kafka
