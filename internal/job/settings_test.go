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
