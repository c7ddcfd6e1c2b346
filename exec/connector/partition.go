package connector

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
)

// fileOptionKeys are the options of the filesystem connector, source and sink alike:
// one table definition serves both, as in Flink.
var fileOptionKeys = []string{
	"path", "source.monitor-interval", "partition.default-name",
	"sink.rolling-policy.file-size", "sink.rolling-policy.rollover-interval",
	"sink.rolling-policy.check-interval", "sink.rolling-policy.inactivity-interval",
	"sink.partition-commit.trigger", "sink.partition-commit.delay",
	"sink.partition-commit.policy.kind", "sink.partition-commit.success-file.name",
	"sink.partition-commit.watermark-time-zone", "sink.shuffle-by-partition.enable",
	"partition.time-extractor.kind", "partition.time-extractor.timestamp-pattern",
}

// defaultPartitionName names the directory of a NULL or empty partition value, as
// Flink's 'partition.default-name' does by default.
const defaultPartitionName = "__DEFAULT_PARTITION__"

// partitioning is how a partitioned table lays its files out: one directory level
// per partition column, Hive-style (dt=2024-05-06/hm=07:00/part-...).
type partitioning struct {
	keys        []string // the partition columns, as the table names them
	cols        []int    // their indexes in the rows written or read
	defaultName string   // the directory value of NULL and ''
	loc         *time.Location
}

// newPartitioning returns the partitioning of t for rows with the given column names
// (the table's, in the rows' order), or nil when t is not partitioned.
func newPartitioning(o *Options, t *planner.Table, names []string, loc *time.Location) (*partitioning, error) {
	if len(t.PartitionKeys) == 0 {
		return nil, nil
	}
	p := &partitioning{keys: t.PartitionKeys, defaultName: defaultPartitionName, loc: loc}
	if v, ok := t.Option("partition.default-name"); ok {
		if v == "" {
			return nil, o.Err("option 'partition.default-name' must not be empty")
		}
		p.defaultName = v
	}
	for _, k := range t.PartitionKeys {
		i := slices.IndexFunc(names, func(n string) bool { return strings.EqualFold(n, k) })
		if i < 0 {
			return nil, o.Err("partition column %s is not among the columns written", k)
		}
		p.cols = append(p.cols, i)
	}
	return p, nil
}

// isKey reports whether column i of the rows is a partition column.
func (p *partitioning) isKey(i int) bool {
	for _, c := range p.cols {
		if c == i {
			return true
		}
	}
	return false
}

// appendDir appends the partition directory of row i, relative to the table's path,
// to dst: key=value segments joined by '/', values escaped as Flink escapes them.
func (p *partitioning) appendDir(dst []byte, cols []arrow.Array, i int) []byte {
	for j, c := range p.cols {
		if j > 0 {
			dst = append(dst, '/')
		}
		dst = escapePathName(dst, p.keys[j])
		dst = append(dst, '=')
		arr := cols[c]
		start := len(dst)
		if !arr.IsNull(i) {
			dst = escapePathName(dst, string(format.AppendValue(nil, arr, i, p.loc)))
		}
		if len(dst) == start {
			dst = escapePathName(dst, p.defaultName)
		}
	}
	return dst
}

// escapePathName appends s to dst with the characters that cannot stand in a
// partition directory's name written as %XX (upper-case hex): the ASCII control
// characters, DEL and " # % ' * / : = ? \ { } [ ] ^, as Flink's PartitionPathUtils
// does. Other bytes, multi-byte UTF-8 included, stay as they are.
func escapePathName(dst []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if needsEscape(c) {
			dst = append(dst, '%', hex[c>>4], hex[c&0xf])
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

func needsEscape(c byte) bool {
	if c < ' ' || c == 0x7f {
		return true
	}
	return strings.IndexByte("\"#%'*/:=?\\{}[]^", c) >= 0
}

// unescapePathName undoes escapePathName; a '%' not followed by two hex digits stays.
func unescapePathName(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if hi, lo := unhex(s[i+1]), unhex(s[i+2]); hi >= 0 && lo >= 0 {
				b.WriteByte(byte(hi<<4 | lo))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// parseDir returns the partition values of a directory relative to the table's path,
// in key order, with ok false unless it is exactly one key=value segment per partition
// column, in order. A value of the default name is NULL (null set).
func (p *partitioning) parseDir(rel string) (values []string, null []bool, ok bool) {
	segs := strings.Split(rel, "/")
	if len(segs) != len(p.keys) {
		return nil, nil, false
	}
	for j, seg := range segs {
		k, v, found := strings.Cut(seg, "=")
		if !found || !strings.EqualFold(unescapePathName(k), p.keys[j]) {
			return nil, nil, false
		}
		v = unescapePathName(v)
		values = append(values, v)
		null = append(null, v == p.defaultName)
	}
	return values, null, true
}

// partitionTime extracts the time of a partition from its values, as Flink's default
// partition time extractor: pattern (partition.time-extractor.timestamp-pattern) with
// each $key replaced by that key's value, or the first partition value when there is no
// pattern, read as yyyy-MM-dd[ HH:mm[:ss[.SSS]]] in loc. The result is milliseconds
// since the epoch.
func (p *partitioning) partitionTime(pattern string, values []string, loc *time.Location) (int64, error) {
	text := values[0]
	if pattern != "" {
		text = expandPattern(pattern, p.keys, values)
	}
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02 15:04", "2006-01-02", "2006-01-02T15:04:05.999999999", "2006-01-02T15:04"} {
		if ts, err := time.ParseInLocation(layout, text, loc); err == nil {
			return ts.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("the partition time %q is no timestamp of the form yyyy-MM-dd[ HH:mm[:ss]]", text)
}

// expandPattern replaces $key (and ${key}) in pattern by the key's value, longest key
// first so that $dt does not take the start of $dth.
func expandPattern(pattern string, keys, values []string) string {
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		if pattern[i] != '$' {
			b.WriteByte(pattern[i])
			continue
		}
		rest := pattern[i+1:]
		braced := strings.HasPrefix(rest, "{")
		if braced {
			rest = rest[1:]
		}
		best := -1
		for j, k := range keys {
			if strings.HasPrefix(rest, k) && (best < 0 || len(k) > len(keys[best])) {
				best = j
			}
		}
		if best < 0 || (braced && !strings.HasPrefix(rest[len(keys[best]):], "}")) {
			b.WriteByte('$')
			continue
		}
		b.WriteString(values[best])
		i += len(keys[best])
		if braced {
			i += 2
		}
	}
	return b.String()
}

// rollingPolicy is when the filesystem sink closes a part file and starts another
// (Flink's 'sink.rolling-policy.*'): at every checkpoint, and in between when the file
// reaches fileSize, has been open for rollover or was not written for inactivity,
// checked every checkInterval.
type rollingPolicy struct {
	fileSize      int64
	rollover      time.Duration
	inactivity    time.Duration
	checkInterval time.Duration
}

func newRollingPolicy(o *Options) (rollingPolicy, error) {
	r := rollingPolicy{fileSize: 128 << 20}
	if v, ok := o.t.Option("sink.rolling-policy.file-size"); ok {
		n, err := ParseMemorySize(v)
		if err != nil || n < 1 {
			return r, o.Err("option 'sink.rolling-policy.file-size' must be a positive memory size such as '128MB', got %q", v)
		}
		r.fileSize = n
	}
	var err error
	for _, d := range []struct {
		key string
		to  *time.Duration
		def time.Duration
	}{
		{"sink.rolling-policy.rollover-interval", &r.rollover, 30 * time.Minute},
		{"sink.rolling-policy.inactivity-interval", &r.inactivity, 30 * time.Minute},
		{"sink.rolling-policy.check-interval", &r.checkInterval, time.Minute},
	} {
		if *d.to, err = o.Duration(d.key, d.def); err != nil {
			return r, err
		}
		if *d.to <= 0 {
			return r, o.Err("option '%s' must be a positive duration", d.key)
		}
	}
	return r, nil
}

// ParseMemorySize reads a memory size as Flink's MemorySize does: a number and a unit
// (b, k/kb, m/mb, g/gb, t/tb and their long forms, in powers of 1024; spaces allowed
// between); a bare number is bytes.
func ParseMemorySize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 || i > 18 {
		return 0, fmt.Errorf("invalid memory size %q", s)
	}
	var n int64
	for _, c := range t[:i] {
		n = n*10 + int64(c-'0')
	}
	var shift uint
	switch strings.ToLower(strings.TrimSpace(t[i:])) {
	case "", "b", "bytes":
	case "k", "kb", "kibibytes":
		shift = 10
	case "m", "mb", "mebibytes":
		shift = 20
	case "g", "gb", "gibibytes":
		shift = 30
	case "t", "tb", "tebibytes":
		shift = 40
	default:
		return 0, fmt.Errorf("invalid memory size %q: unknown unit", s)
	}
	if n > (1<<63-1)>>shift {
		return 0, fmt.Errorf("memory size %q is too large", s)
	}
	return n << shift, nil
}

// commitPolicy is when and how the filesystem sink commits a partition whose files are
// committed (Flink's 'sink.partition-commit.*'): by the 'process-time' trigger once
// delay has passed since its first files were committed, by 'partition-time' once the
// watermark passes the partition's time (its values read by the timestamp pattern, as
// a wall-clock time in the watermark time zone) plus delay; and always when the input
// ends. The 'success-file' policy writes an empty success file into its directory.
type commitPolicy struct {
	partitionTime bool
	delay         time.Duration
	successFile   string // "" without the success-file policy
	pattern       string
	zone          *time.Location
}

func newCommitPolicy(o *Options) (commitPolicy, error) {
	c := commitPolicy{zone: time.UTC}
	switch v := strings.ToLower(strings.TrimSpace(o.t.Options["sink.partition-commit.trigger"])); v {
	case "", "process-time":
	case "partition-time":
		c.partitionTime = true
	default:
		return c, o.Err("option 'sink.partition-commit.trigger' must be 'process-time' or 'partition-time', got %q", v)
	}
	var err error
	if c.delay, err = o.Duration("sink.partition-commit.delay", 0); err != nil {
		return c, err
	}
	if v, ok := o.t.Option("sink.partition-commit.policy.kind"); ok {
		for _, kind := range strings.Split(v, ",") {
			switch k := strings.ToLower(strings.TrimSpace(kind)); k {
			case "success-file":
				c.successFile = "_SUCCESS"
			case "metastore":
				return c, o.Err("sink.partition-commit.policy.kind 'metastore' needs a Hive metastore, which streamsql does not have; use 'success-file'")
			case "custom":
				return c, o.Err("sink.partition-commit.policy.kind 'custom' needs a Java class, which streamsql cannot run; use 'success-file'")
			default:
				return c, o.Err("option 'sink.partition-commit.policy.kind' must be 'success-file' (or 'metastore', 'custom' on Flink), got %q", k)
			}
		}
	}
	if v, ok := o.t.Option("sink.partition-commit.success-file.name"); ok && c.successFile != "" {
		if v == "" || strings.ContainsAny(v, "/\\\x00") || v == "." || v == ".." {
			return c, o.Err("option 'sink.partition-commit.success-file.name' must be a file name, got %q", v)
		}
		c.successFile = v
	}
	switch v := strings.ToLower(strings.TrimSpace(o.t.Options["partition.time-extractor.kind"])); v {
	case "", "default":
	default:
		return c, o.Err("option 'partition.time-extractor.kind' must be 'default' ('custom' needs a Java class, which streamsql cannot run), got %q", v)
	}
	c.pattern = o.t.Options["partition.time-extractor.timestamp-pattern"]
	if v, ok := o.t.Option("sink.partition-commit.watermark-time-zone"); ok {
		if c.zone, err = planner.LoadZone(v); err != nil {
			return c, o.Err("option 'sink.partition-commit.watermark-time-zone': unknown time zone %q", v)
		}
	}
	return c, nil
}

// fires reports whether partition dir, whose first files were committed at created
// (ms), commits at processing time now (ms) and watermark wm.
func (c commitPolicy) fires(p *partitioning, dir string, created, now, wm int64) (bool, error) {
	delay := c.delay.Milliseconds()
	if !c.partitionTime {
		return now >= created+delay, nil
	}
	if wm == exec.MaxWatermark {
		return true, nil
	}
	values, _, ok := p.parseDir(dir)
	if !ok {
		return false, fmt.Errorf("not a directory of the table's partition columns")
	}
	t, err := p.partitionTime(c.pattern, values, c.zone)
	if err != nil {
		return false, err
	}
	return wm != exec.MinWatermark && wm > t+delay, nil
}

// apply commits the partition in directory dir.
func (c commitPolicy) apply(dir string) error {
	if c.successFile == "" {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(dir, c.successFile), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return SyncDir(dir)
}
