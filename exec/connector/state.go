package connector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrInvalidState: a source was asked to restore state that is corrupt, of another
// version, or not its own (another connector, table, path or split).
var ErrInvalidState = errors.New("invalid source state")

// stateVersion is the version of the snapshot encodings of this package.
const stateVersion = 1

// stateHeader opens every source snapshot, a JSON object, and says whose position it
// holds; the rest of the object is the connector's own.
type stateHeader struct {
	Version   int    `json:"version"`
	Connector string `json:"connector"`
	Table     string `json:"table"`
	Task      int    `json:"task"`
	Tasks     int    `json:"tasks"`
}

func newStateHeader(connector, table string, s split) stateHeader {
	return stateHeader{Version: stateVersion, Connector: connector, Table: table, Task: s.task, Tasks: s.tasks}
}

// decodeState checks that data is a snapshot of the source want describes and decodes
// it into v, a struct embedding stateHeader.
func decodeState(data []byte, want stateHeader, v any) error {
	var got stateHeader
	if err := json.Unmarshal(data, &got); err != nil {
		return want.Err("corrupt state: %v", err)
	}
	switch {
	case got.Version != want.Version:
		return want.Err("state version %d is not supported (want %d)", got.Version, want.Version)
	case got.Connector != want.Connector || got.Table != want.Table:
		return want.Err("the state is of the %s source of table %s", got.Connector, got.Table)
	case got.Task != want.Task || got.Tasks != want.Tasks:
		return want.Err("the state is of task %d of %d, not of task %d of %d", got.Task, got.Tasks, want.Task, want.Tasks)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return want.Err("corrupt state: %v", err)
	}
	return nil
}

// err is an ErrInvalidState about the source h describes.
func (h stateHeader) Err(f string, args ...any) error {
	return &kindError{
		msg:  fmt.Sprintf("table %s: cannot restore the %s source: ", h.Table, h.Connector) + fmt.Sprintf(f, args...),
		kind: ErrInvalidState,
	}
}
