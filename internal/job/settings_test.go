package job

import (
	"strings"
	"testing"
)

func TestSuggest(t *testing.T) {
	for key, want := range map[string]string{
		"execution.checkpointing.intervall": "execution.checkpointing.interval",
		"parallelism.defualt":               "parallelism.default",
		"pipeline.nmae":                     "pipeline.name",
		"execution.checkpointing.interval":  "", // known
		"table.exec.mini-batch.enabled":     "", // known, ignored
		"my.own.key":                        "", // far from every key
	} {
		if got := Suggest(key); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestParseSettingsChecksValues(t *testing.T) {
	for _, bad := range []map[string]string{
		{"parallelism.default": "0"},
		{"parallelism.default": "65535"},
		{"execution.checkpointing.interval": "99999999999999999999 s"},
		{"execution.checkpointing.interval": "soon"},
		{"restart-strategy.type": "sometimes"},
		{"pipeline.name": "../elsewhere"},
		{"table.exec.state.ttl": "forever"},
	} {
		if _, err := ParseSettings(bad); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
	s, err := ParseSettings(map[string]string{"parallelism.default": "3", "execution.checkpointing.interval": "2 s", "pipeline.name": "orders"})
	if err != nil || s.Parallelism != 3 || s.Checkpoint.Interval.Seconds() != 2 || s.Name != "orders" || !strings.Contains(s.Restart.String(), "exponential") {
		t.Errorf("%+v, %v", s, err)
	}
}

// TestParallelismBound: a parallelism above the number of key groups is one clear line
// naming both keys (it once panicked in reflect.Select at 65535), and a number of key
// groups other than the fixed 128 is refused, since state and savepoints are laid out
// in 128.
func TestParallelismBound(t *testing.T) {
	for _, c := range []struct {
		options map[string]string
		want    string
	}{
		{map[string]string{"parallelism.default": "65535"},
			"'parallelism.default' = '65535' is above 'pipeline.max-parallelism' (128), the number of key groups keyed state is spread over"},
		{map[string]string{"parallelism.default": "129", "pipeline.max-parallelism": "128"},
			"'parallelism.default' = '129' is above 'pipeline.max-parallelism' (128), the number of key groups keyed state is spread over"},
		{map[string]string{"pipeline.max-parallelism": "256"},
			"'pipeline.max-parallelism' = '256': streamsql keeps keyed state in 128 key groups, fixed: only '128' is accepted"},
		{map[string]string{"pipeline.max-parallelism": "64"},
			"'pipeline.max-parallelism' = '64': streamsql keeps keyed state in 128 key groups, fixed: only '128' is accepted"},
	} {
		_, err := ParseSettings(c.options)
		if err == nil || err.Error() != c.want || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v:\n got %v\nwant %s", c.options, err, c.want)
		}
	}
	s, err := ParseSettings(map[string]string{"parallelism.default": "128", "pipeline.max-parallelism": "128"})
	if err != nil || s.Parallelism != 128 {
		t.Errorf("128 of 128: %+v, %v", s, err)
	}
}

func TestCheckName(t *testing.T) {
	for _, name := range []string{"", ".", "..", "a/b", `a\b`, "a\x00"} {
		if checkName(name) == nil {
			t.Errorf("%q accepted", name)
		}
	}
	if err := checkName("insert-orders_by_day"); err != nil {
		t.Error(err)
	}
}
