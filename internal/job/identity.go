package job

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/streamsql/streamsql/planner"
)

// checkName refuses a job name that would not stay one directory inside the state
// directory.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		return fmt.Errorf("a job name must be a non-empty name without '/', '\\' or NUL, and not '.' or '..'")
	}
	return nil
}

// DeriveName is the name of a job whose 'pipeline.name' is not set: insert-<sink> for
// an INSERT INTO, insert-<sink>,<sink>,... for a statement set, select-<n> for the n-th
// SELECT of a session.
func DeriveName(plan planner.Node, selects int) string {
	// A quoted table name may hold anything; the job's directory takes a safe form.
	safe := func(sink planner.Node) string {
		return strings.Map(func(r rune) rune {
			if r == '/' || r == '\\' || r == 0 {
				return '_'
			}
			return r
		}, strings.ToLower(sink.(*planner.Sink).Table.Name))
	}
	switch plan := plan.(type) {
	case *planner.Sink:
		return "insert-" + safe(plan)
	case *planner.SinkSet:
		names := make([]string, len(plan.Sinks))
		for i, s := range plan.Sinks {
			names[i] = safe(s)
		}
		return "insert-" + strings.Join(names, ",")
	}
	return "select-" + strconv.Itoa(selects)
}

// describe lists what decides a job's state and output, line by line: the plan (without
// parallelism, so a job may be rescaled one day), every table's columns and options
// (secrets hashed), and the settings that change results.
func describe(plan planner.Node, s Settings) []string {
	text := planner.Explain(plan, func(planner.Node) int { return 0 })
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	seen := map[*planner.Table]bool{}
	planner.Walk(plan, func(n planner.Node) {
		var t *planner.Table
		switch n := n.(type) {
		case *planner.Scan:
			t = n.Table
		case *planner.Sink:
			t = n.Table
		}
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		lines = append(lines, fmt.Sprintf("table %s %s", t.Name, t.Schema()))
		for _, c := range t.Columns {
			if c.IsMetadata() {
				lines = append(lines, fmt.Sprintf("table %s column %s metadata '%s' virtual %v", t.Name, c.Name, c.Metadata, c.Virtual))
			}
		}
		if len(t.PartitionKeys) > 0 {
			lines = append(lines, fmt.Sprintf("table %s partitioned by %s", t.Name, strings.Join(t.PartitionKeys, ", ")))
		}
		for _, k := range t.OptionKeys() {
			lines = append(lines, fmt.Sprintf("table %s '%s' = '%s'", t.Name, k, maskSecret(k, t.Options[k])))
		}
	})
	lines = append(lines, fmt.Sprintf("state ttl %v, allow lateness %dms, early fire %dms", s.StateTTL, s.Emit.AllowLateness, s.Emit.EarlyFireDelay))
	return lines
}

// maskSecret replaces the value of an option that holds a secret by a digest of it, so
// a changed password still changes the fingerprint but never reaches a file.
func maskSecret(key, value string) string {
	k := strings.ToLower(key)
	if !strings.Contains(k, "password") && !strings.Contains(k, "secret") && !strings.Contains(k, "token") &&
		!strings.Contains(k, "sasl.jaas") && !strings.Contains(k, "url") {
		return value
	}
	sum := sha256.Sum256([]byte(value))
	return "sha256:" + hex.EncodeToString(sum[:6])
}

func fingerprint(lines []string) string {
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:12])
}

// identity is what a job's directory records of the job that owns it.
type identity struct {
	Name        string
	Fingerprint string
	Describe    []string
	// Layout is the parallelism of each stage: a checkpoint restores only into the
	// same one, until state is redistributed by key group.
	Layout string
	// Finished is set when the job ran to its end: a later run of the same script
	// skips it until every job of the script finished.
	Finished bool `json:",omitempty"`
	// RestoredFrom is the checksum of the savepoint the job last started from: with
	// the same savepoint given again, it resumes from its own later checkpoints.
	RestoredFrom string `json:",omitempty"`
}

const identityFile = "job.json"

func readIdentity(dir string) (*identity, error) {
	data, err := os.ReadFile(filepath.Join(dir, identityFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	id := &identity{}
	if err := json.Unmarshal(data, id); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, identityFile), err)
	}
	return id, nil
}

func writeIdentity(dir string, id *identity) error {
	data, err := json.MarshalIndent(id, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, identityFile), data)
}

// writeFileAtomic replaces path with data: written aside, synced, renamed.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// changed says how two descriptions of a job differ, by their first differing line.
func changed(old, cur []string) string {
	for i := 0; i < max(len(old), len(cur)); i++ {
		var o, c string
		if i < len(old) {
			o = old[i]
		}
		if i < len(cur) {
			c = cur[i]
		}
		if o != c {
			return fmt.Sprintf("was %q, is now %q", strings.TrimSpace(o), strings.TrimSpace(c))
		}
	}
	return "the same description with another fingerprint"
}

// lock is a job's exclusive hold on its directory, for the life of a process: two
// processes never run one job, and --fresh never removes files another process uses.
type lock struct{ f *os.File }

// ErrLocked says another process runs the job.
var ErrLocked = errors.New("job is running in another process")

func lockDir(dir, name string) (*lock, error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		data := make([]byte, 32)
		n, _ := f.ReadAt(data, 0)
		f.Close()
		pid := strings.TrimSpace(string(data[:n]))
		if pid == "" {
			pid = "unknown"
		}
		return nil, &unrecoverable{fmt.Errorf("job %s is running in process %s: %w", name, pid, ErrLocked)}
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &lock{f}, nil
}

func (l *lock) release() {
	if l != nil {
		l.f.Close() // closing drops the flock
	}
}
