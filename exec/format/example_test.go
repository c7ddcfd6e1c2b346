package format_test

import (
	"fmt"
	"os"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
)

func ExampleCSVDecoder() {
	schema := planner.Schema{
		{Name: "id", Type: planner.TypeString},
		{Name: "temperature", Type: planner.TypeDouble},
		{Name: "ts", Type: planner.TypeTS},
	}
	dec, err := format.NewDecoder("csv", schema, memory.DefaultAllocator, nil, time.UTC)
	if err != nil {
		panic(err)
	}
	defer dec.Release()
	for i, line := range []string{"sensor_1,35.8,2019-01-17 09:43:19", "sensor_2,abc,2019-01-17 09:43:20", `"sensor,3",,2019-01-17T09:43:21.5`} {
		if err := dec.Decode([]byte(line), int64(i+1)); err != nil {
			fmt.Println(err)
		}
	}
	rec := dec.Flush()
	defer rec.Release()
	os.Stdout.Write(format.AppendRows(nil, format.NewChangelogEncoder("", time.UTC), exec.Batch{Rec: rec}))
	// Output:
	// line 2: cannot parse "abc" as DOUBLE for column temperature: "sensor_2,abc,2019-01-17 09:43:20"
	// +I[sensor_1, 35.8, 2019-01-17 09:43:19.000]
	// +I[sensor,3, null, 2019-01-17 09:43:21.500]
}

func ExampleWriteTable() {
	format.WriteTable(os.Stdout, []string{"id", "temperature", "cnt"}, [][]string{
		{"sensor_1", "35.8", "3"},
		{"sensor_10", format.TableNull, "12"},
	})
	// Output:
	// +-----------+-------------+-----+
	// |        id | temperature | cnt |
	// +-----------+-------------+-----+
	// |  sensor_1 |        35.8 |   3 |
	// | sensor_10 |      <NULL> |  12 |
	// +-----------+-------------+-----+
	// 2 rows in set
}
