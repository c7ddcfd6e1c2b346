package streamsql

// The connectors that live in packages of their own register themselves.
import (
	_ "github.com/streamsql/streamsql/exec/connector/kafka"
	_ "github.com/streamsql/streamsql/exec/connector/postgres"
)
