package connector

import (
	"strings"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// ReadAlignment reads the watermark alignment options of t: a group needs its max-drift,
// as in Flink. The update interval is checked but has no effect: the tasks of a group
// share their watermarks as they change, not at an interval.
func ReadAlignment(t *planner.Table) (exec.Alignment, error) {
	if t == nil {
		return exec.Alignment{}, nil
	}
	o := &Options{t: t, connector: t.Connector()}
	group, hasGroup := t.Option(planner.WatermarkAlignmentGroup)
	group = strings.TrimSpace(group)
	_, hasDrift := t.Option(planner.WatermarkAlignmentMaxDrift)
	if _, err := o.Duration(planner.WatermarkAlignmentInterval, 0); err != nil {
		return exec.Alignment{}, err
	}
	switch {
	case !hasGroup && !hasDrift:
		return exec.Alignment{}, nil
	case group == "":
		return exec.Alignment{}, o.Err("option '%s' needs '%s', the name of the sources' alignment group", planner.WatermarkAlignmentMaxDrift, planner.WatermarkAlignmentGroup)
	case !hasDrift:
		return exec.Alignment{}, o.Err("option '%s' needs '%s', how far ahead of the group's watermark a source may read, for example '1 min'", planner.WatermarkAlignmentGroup, planner.WatermarkAlignmentMaxDrift)
	}
	if t.Watermark == nil {
		return exec.Alignment{}, o.Err("option '%s' needs a WATERMARK: only event time is aligned", planner.WatermarkAlignmentGroup)
	}
	drift, err := o.Duration(planner.WatermarkAlignmentMaxDrift, 0)
	if err != nil {
		return exec.Alignment{}, err
	}
	if drift <= 0 {
		return exec.Alignment{}, o.Err("option '%s' must be longer than 0", planner.WatermarkAlignmentMaxDrift)
	}
	return exec.Alignment{Group: group, MaxDrift: drift}, nil
}
