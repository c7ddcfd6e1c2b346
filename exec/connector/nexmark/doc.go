// Package nexmark is the Nexmark benchmark's source ('connector' = 'nexmark'): a
// deterministic generator of the online auction's person, auction and bid events,
// written straight into Arrow buffers, which come from a pool of the reader's and go
// back to it when a batch is released (exec.BufferPool).
//
// Every event is a pure function of its id (gen.go): its type, ids, prices, strings and
// event time are drawn from a random source seeded by the id alone. So a checkpointed
// position, the next event id of each of the source's lanes (state.go), replays exactly,
// and parallel tasks, each reading the ids k, k+tasks, k+2·tasks, ..., read disjoint
// events whose event times advance together.
//
// A table has one of two shapes (option 'table', reader.go): Flink's single 'events'
// table with event_type and nullable person, auction and bid ROW columns, or a plain
// 'person', 'auction' or 'bid' table of that type's fields. Columns are matched to the
// generator's fields by name, so a table may declare any subset in any order.
package nexmark
