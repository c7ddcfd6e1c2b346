package connector_test

import (
	"context"
	"io"
	"os"

	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/planner"
)

// A bounded datagen source printed by the print sink.
func ExampleOpenSource() {
	ctx := context.Background()
	src := &planner.Table{
		Name: "orders",
		Columns: []planner.TableColumn{
			{Name: "id", Type: planner.TypeBigInt},
			{Name: "customer", Type: planner.TypeInt},
		},
		Options: map[string]string{
			"connector":           "datagen",
			"seed":                "7",
			"fields.id.kind":      "sequence",
			"fields.id.start":     "1",
			"fields.id.end":       "3",
			"fields.customer.min": "1",
			"fields.customer.max": "1",
		},
	}
	r, err := connector.OpenSource(ctx, connector.SourceSpec{Table: src})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	sink, err := connector.OpenSink(ctx, connector.SinkSpec{
		Table:  &planner.Table{Name: "out", Options: map[string]string{"connector": "print", "print-identifier": "out"}},
		Schema: src.PhysicalSchema(),
		Stdout: os.Stdout,
	})
	if err != nil {
		panic(err)
	}
	defer sink.Close()
	for {
		b, err := r.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		err = sink.Process(ctx, 0, b)
		b.Release()
		if err != nil {
			panic(err)
		}
	}
	if err := sink.Finish(ctx); err != nil {
		panic(err)
	}
	// Output:
	// out> +I[1, 1]
	// out> +I[2, 1]
	// out> +I[3, 1]
}
