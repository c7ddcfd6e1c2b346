package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/streamsql/streamsql"
)

// nexmarkResult is one row of `streamsql bench nexmark`.
type nexmarkResult struct {
	Query          string  `json:"query"`
	Events         int64   `json:"events"`
	Seconds        float64 `json:"seconds"`
	CPUSeconds     float64 `json:"cpu_seconds"`
	EventsPerSec   float64 `json:"events_per_second"`
	EventsPerCore  float64 `json:"events_per_core_second"`
	VsGenerator    float64 `json:"vs_generator"` // events per core-second as a share of the generator's
	PeakRSSBytes   int64   `json:"peak_rss_bytes"`
	Checkpoints    int     `json:"checkpoints"`
	StateBytes     int64   `json:"state_bytes"` // the most the state directory held while the job ran
	Parallelism    int     `json:"parallelism"`
	CheckpointMode string  `json:"checkpoint_mode,omitempty"`
}

// benchNexmark runs Nexmark queries (the files of queries/nexmark) to the end of a
// bounded input, each into the blackhole its file declares, after a generator-only
// baseline (the events table into a blackhole) in the same process, and reports each
// query's cost per core also as a share of the bare generator's.
func benchNexmark(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("streamsql bench nexmark", flag.ContinueOnError)
	fset.SetOutput(stderr)
	fset.Usage = usage(fset, "bench")
	if wantsHelp(args) {
		fset.SetOutput(stdout)
	}
	queries := fset.String("queries", "q0,q1,q2,q3,q5,q7,q8", "comma-separated queries, or 'all' for every file in --dir")
	events := fset.Int64("events", 10_000_000, "events each query reads")
	par := fset.Int("parallelism", 2, "parallelism.default of each job")
	interval := fset.Duration("checkpoint-interval", 0, "execution.checkpointing.interval (0: no checkpoints)")
	mode := fset.String("checkpoint-mode", "EXACTLY_ONCE", "execution.checkpointing.mode: EXACTLY_ONCE or AT_LEAST_ONCE")
	dir := fset.String("dir", "queries/nexmark", "directory of the query files (qN.sql)")
	asJSON := fset.Bool("json", false, "print one JSON object per query instead of a table")
	profile := fset.String("cpuprofile", "", "write each query's CPU profile to `PREFIX`.<query>.prof (for go tool pprof)")
	heap := fset.String("memprofile", "", "write each query's heap profile to `PREFIX`.<query>.heap every 5 s while it runs, so that it shows the heap near its end")
	if err := fset.Parse(args); err != nil {
		return parseFailed(err)
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "streamsql bench nexmark: %v\n", err)
		return 1
	}
	switch {
	case *events < 1:
		return fail(fmt.Errorf("--events must be at least 1, got %d", *events))
	case *par < 1:
		return fail(fmt.Errorf("--parallelism must be at least 1, got %d", *par))
	case *interval < 0:
		return fail(fmt.Errorf("--checkpoint-interval must not be negative, got %s", *interval))
	}
	*mode = strings.ToUpper(*mode)
	if *mode != "EXACTLY_ONCE" && *mode != "AT_LEAST_ONCE" {
		return fail(fmt.Errorf("--checkpoint-mode must be EXACTLY_ONCE or AT_LEAST_ONCE, got %q", *mode))
	}
	names, err := nexmarkQueries(*dir, *queries)
	if err != nil {
		return fail(err)
	}
	texts := make(map[string]string, len(names))
	for _, q := range names {
		b, err := os.ReadFile(filepath.Join(*dir, q+".sql"))
		if err != nil {
			return fail(fmt.Errorf("query %s: %v (run from the repository, or give --dir)", q, err))
		}
		texts[q] = setEvents(string(b), *events)
	}
	base, err := generatorOnly(texts[names[0]])
	if err != nil {
		return fail(err)
	}
	tmp, err := os.MkdirTemp("", "streamsql-nexmark")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	settings := fmt.Sprintf("SET 'parallelism.default' = '%d';\n", *par)
	if *interval > 0 {
		settings += fmt.Sprintf("SET 'execution.checkpointing.interval' = '%dms';\nSET 'execution.checkpointing.mode' = '%s';\n", interval.Milliseconds(), *mode)
	}
	var results []nexmarkResult
	run := func(name, sql string) error {
		if *profile != "" {
			stop, err := startProfile(*profile + "." + name + ".prof")
			if err != nil {
				return err
			}
			defer stop()
		}
		heapPath := ""
		if *heap != "" {
			heapPath = *heap + "." + name + ".heap"
		}
		r, err := runNexmark(filepath.Join(tmp, name), settings+sql, heapPath, stderr)
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		r.Query, r.Events, r.Parallelism = name, *events, *par
		if *interval > 0 {
			r.CheckpointMode = *mode
		}
		r.EventsPerSec = float64(r.Events) / r.Seconds
		r.EventsPerCore = float64(r.Events) / r.CPUSeconds
		r.VsGenerator = 1
		if len(results) > 0 {
			r.VsGenerator = r.EventsPerCore / results[0].EventsPerCore
		}
		results = append(results, r)
		if *asJSON {
			b, _ := json.Marshal(r)
			fmt.Fprintln(stdout, string(b))
		} else {
			if len(results) == 1 {
				fmt.Fprintf(stdout, "%-10s %12s %9s %14s %14s %8s %10s %6s %12s\n",
					"query", "events", "seconds", "events/s", "events/core·s", "vs gen", "peak RSS", "chkpt", "state")
			}
			fmt.Fprintf(stdout, "%-10s %12d %9.2f %14.0f %14.0f %8.2f %9.0fM %6d %11.1fM\n", r.Query, r.Events, r.Seconds,
				r.EventsPerSec, r.EventsPerCore, r.VsGenerator, float64(r.PeakRSSBytes)/(1<<20), r.Checkpoints, float64(r.StateBytes)/(1<<20))
		}
		return nil
	}
	if err := run("generator", base); err != nil {
		return fail(err)
	}
	for _, q := range names {
		if err := run(q, texts[q]); err != nil {
			return fail(err)
		}
	}
	return 0
}

// nexmarkQueries resolves --queries against the files of dir, in the suite's order.
func nexmarkQueries(dir, list string) ([]string, error) {
	var names []string
	if strings.TrimSpace(list) == "all" {
		files, err := filepath.Glob(filepath.Join(dir, "q*.sql"))
		if err != nil || len(files) == 0 {
			return nil, fmt.Errorf("no query files q*.sql in %s (run from the repository, or give --dir)", dir)
		}
		for _, f := range files {
			names = append(names, strings.TrimSuffix(filepath.Base(f), ".sql"))
		}
	} else {
		for _, q := range strings.Split(list, ",") {
			q = strings.ToLower(strings.TrimSpace(q))
			if !regexp.MustCompile(`^q\d+$`).MatchString(q) {
				return nil, fmt.Errorf("--queries: %q is not a query name like q5", q)
			}
			names = append(names, q)
		}
	}
	sort.SliceStable(names, func(i, j int) bool {
		a, _ := strconv.Atoi(names[i][1:])
		b, _ := strconv.Atoi(names[j][1:])
		return a < b
	})
	return names, nil
}

var eventsOption = regexp.MustCompile(`'events\.num'\s*=\s*'\d+'`)

func setEvents(sql string, n int64) string {
	return eventsOption.ReplaceAllString(sql, fmt.Sprintf("'events.num' = '%d'", n))
}

// generatorOnly is the baseline: the events table of a query file, every physical
// column into a blackhole.
func generatorOnly(query string) (string, error) {
	start := strings.Index(query, "CREATE TABLE datagen")
	end := strings.Index(query, "CREATE VIEW")
	computed := strings.Index(query, "`dateTime` AS")
	with := strings.Index(query, ") WITH (")
	if start < 0 || end < 0 || computed < start || with < computed || end < with {
		return "", errors.New("the query file has not the suite's events table (CREATE TABLE datagen ... CREATE VIEW)")
	}
	ddl := query[start:end]
	columns := strings.TrimRight(strings.TrimSpace(query[start+len("CREATE TABLE datagen"):computed]), ",")
	return ddl + "\nCREATE TABLE nexmark_generator " + columns + "\n) WITH ('connector' = 'blackhole');\n" +
		"INSERT INTO nexmark_generator SELECT event_type, person, auction, bid FROM datagen;\n", nil
}

// runNexmark runs one script to its end with its state under dir and measures it; with
// a heapPath it writes the heap's profile there every 5 s.
func runNexmark(dir, sql, heapPath string, stderr io.Writer) (nexmarkResult, error) {
	runtime.GC()
	debug.FreeOSMemory()
	resetPeakRSS()
	notices := &checkpointCounter{w: stderr}
	session, err := streamsql.NewSession(streamsql.Config{Out: io.Discard, Err: notices, Format: "csv", StateDir: dir, Fresh: true})
	if err != nil {
		return nexmarkResult{}, err
	}
	// A finished job removes its checkpoints, so the state directory is watched while
	// the job runs (checkpoints counted also from the job's notices, as one may come and
	// go between two looks).
	var r nexmarkResult
	stop, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		lastHeap := time.Now()
		for {
			if heapPath != "" && time.Since(lastHeap) >= 5*time.Second {
				writeHeapProfile(heapPath, stderr)
				lastHeap = time.Now()
			}
			n, b := stateOf(dir)
			r.Checkpoints, r.StateBytes = max(r.Checkpoints, n), max(r.StateBytes, b)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	cpu0 := cpuTime()
	start := time.Now()
	err = session.Exec(context.Background(), sql)
	if err == nil {
		err = session.Wait()
	}
	close(stop)
	<-watched
	r.Seconds = time.Since(start).Seconds()
	r.CPUSeconds = (cpuTime() - cpu0).Seconds()
	r.PeakRSSBytes = peakRSS()
	r.Checkpoints = max(r.Checkpoints, notices.last())
	session.Close()
	if err != nil {
		return nexmarkResult{}, err
	}
	return r, nil
}

// writeHeapProfile replaces path with the heap's profile (in use as of the last
// collection).
func writeHeapProfile(path string, stderr io.Writer) {
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup("heap").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "streamsql bench nexmark: heap profile: %v\n", err)
	}
}

// cpuTime is the CPU time of the process so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// resetPeakRSS makes the kernel's high-water mark of resident memory start again from
// now (Linux; elsewhere the peak is the process's).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS is the peak resident memory since resetPeakRSS: VmHWM of /proc/self/status,
// or the process's maximum from getrusage where that file does not exist.
func peakRSS() int64 {
	if f, err := os.Open("/proc/self/status"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				return kb << 10
			}
		}
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return int64(ru.Maxrss) << 10
}

// stateOf reports the checkpoints a job's state directory holds (the highest checkpoint
// id: ids count from 1) and its bytes.
func stateOf(dir string) (checkpoints int, bytes int64) {
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if n, ok := strings.CutPrefix(d.Name(), "chk-"); ok && d.IsDir() {
			if id, err := strconv.Atoi(n); err == nil && id > checkpoints {
				checkpoints = id
			}
		}
		if info, err := d.Info(); err == nil && !d.IsDir() {
			bytes += info.Size()
		}
		return nil
	})
	return checkpoints, bytes
}

// checkpointCounter passes a job's notices on and keeps the highest id of the
// "checkpoint N completed" ones.
type checkpointCounter struct {
	w  io.Writer
	mu sync.Mutex
	n  int
}

var completed = regexp.MustCompile(`checkpoint (\d+) completed`)

func (c *checkpointCounter) Write(p []byte) (int, error) {
	c.mu.Lock()
	for _, m := range completed.FindAllSubmatch(p, -1) {
		if id, err := strconv.Atoi(string(m[1])); err == nil && id > c.n {
			c.n = id
		}
	}
	c.mu.Unlock()
	return c.w.Write(p)
}

func (c *checkpointCounter) last() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// startProfile starts a CPU profile into path; the returned func ends it.
func startProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
