package streamsql

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/streamsql/streamsql/internal/job"
)

// Job control from another terminal: each process that runs jobs listens on a Unix
// socket of its own in the state directory, <state-dir>/.control/<pid>.sock (mode
// 0600, in a 0700 directory; no network listener). A request is one JSON line, and so
// is its answer.

// JobInfo is a job as `streamsql list` shows it.
type JobInfo struct {
	Name           string    `json:"name"`
	State          string    `json:"state"`
	PID            int       `json:"pid"`
	Started        time.Time `json:"started"`
	RowsIn         int64     `json:"rows_in"`
	RowsOut        int64     `json:"rows_out"`
	LastCheckpoint int64     `json:"last_checkpoint"`
	Restarts       int       `json:"restarts"`
}

type controlRequest struct {
	Op        string `json:"op"` // list, stop or savepoint
	Job       string `json:"job,omitempty"`
	Drain     bool   `json:"drain,omitempty"`
	Savepoint bool   `json:"savepoint,omitempty"` // stop with a savepoint
	Target    string `json:"target,omitempty"`    // the savepoint's parent directory
}

type controlReply struct {
	Jobs           []JobInfo `json:"jobs,omitempty"`
	LastCheckpoint int64     `json:"last_checkpoint,omitempty"`
	Path           string    `json:"path,omitempty"` // the savepoint's
	Error          string    `json:"error,omitempty"`
}

func controlDir(stateDir string) string { return filepath.Join(stateDir, ".control") }

// ServeControl answers `streamsql list` and `streamsql stop` for the session's jobs
// until ctx ends; the returned function waits until it stopped and removes the socket.
func (s *Session) ServeControl(ctx context.Context) (wait func(), err error) {
	dir := controlDir(s.cfg.StateDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	path := filepath.Join(dir, strconv.Itoa(os.Getpid())+".sock")
	os.Remove(path) // a process of this pid that died left it
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	var serving sync.WaitGroup
	serving.Add(2)
	go func() {
		defer serving.Done()
		<-ctx.Done()
		l.Close()
	}()
	go func() {
		defer serving.Done()
		for {
			conn, err := l.Accept()
			if err != nil {
				return // closed
			}
			serving.Add(1)
			go func() {
				defer serving.Done()
				s.answer(ctx, conn)
			}()
		}
	}()
	return func() {
		serving.Wait()
		os.Remove(path)
	}, nil
}

func (s *Session) answer(ctx context.Context, conn net.Conn) {
	defer conn.Close()
	// A client that sends nothing is cut off when the session ends; the answer to one
	// that asked is written even then (a stop ends the session's last job).
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	var req controlRequest
	err := json.NewDecoder(bufio.NewReader(conn)).Decode(&req)
	if !stop() || err != nil {
		return
	}
	conn.SetWriteDeadline(time.Now().Add(10 * time.Minute))
	var reply controlReply
	switch req.Op {
	case "list":
		for _, st := range s.Jobs() {
			reply.Jobs = append(reply.Jobs, jobInfo(st))
		}
	case "stop", "savepoint":
		j := s.Job(req.Job)
		if j == nil {
			reply.Error = "no such job"
			break
		}
		var err error
		switch {
		case req.Op == "savepoint":
			reply.Path, err = j.Savepoint(ctx, req.Target)
		case req.Savepoint:
			reply.Path, err = s.StopJobWithSavepoint(ctx, j, req.Drain, req.Target)
		default:
			err = s.StopJob(ctx, j, req.Drain)
		}
		if err != nil {
			reply.Error = err.Error()
		}
		reply.LastCheckpoint = j.Status().LastCheckpoint
	default:
		reply.Error = fmt.Sprintf("unknown request %q", req.Op)
	}
	json.NewEncoder(conn).Encode(reply)
}

func jobInfo(st job.Status) JobInfo {
	return JobInfo{Name: st.Name, State: string(st.State), PID: os.Getpid(), Started: st.Started, RowsIn: st.RowsIn,
		RowsOut: st.RowsOut, LastCheckpoint: st.LastCheckpoint, Restarts: st.Restarts}
}

// ask sends req to every process of the state directory and returns their answers,
// removing the sockets of processes that are gone.
func ask(stateDir string, req controlRequest, each func(pid int, r controlReply) bool) error {
	socks, _ := filepath.Glob(filepath.Join(controlDir(stateDir), "*.sock"))
	for _, sock := range socks {
		pid, _ := strconv.Atoi(filepath.Base(sock[:len(sock)-len(".sock")]))
		conn, err := net.DialTimeout("unix", sock, time.Second)
		if err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, os.ErrNotExist) {
				os.Remove(sock) // its process is gone
			}
			continue
		}
		var r controlReply
		err = json.NewEncoder(conn).Encode(req)
		if err == nil {
			err = json.NewDecoder(conn).Decode(&r)
		}
		conn.Close()
		if err != nil {
			return fmt.Errorf("process %d: %w", pid, err)
		}
		if !each(pid, r) {
			return nil
		}
	}
	return nil
}

// ListJobs returns the jobs of every streamsql process using stateDir.
func ListJobs(stateDir string) ([]JobInfo, error) {
	var jobs []JobInfo
	err := ask(stateDir, controlRequest{Op: "list"}, func(_ int, r controlReply) bool {
		jobs = append(jobs, r.Jobs...)
		return true
	})
	return jobs, err
}

// StopJob stops the job of that name in whichever streamsql process of stateDir runs
// it, gracefully, and returns once it stopped, with its last completed checkpoint.
func StopJob(stateDir, name string, drain bool) (lastCheckpoint int64, err error) {
	r, err := askJob(stateDir, controlRequest{Op: "stop", Job: name, Drain: drain})
	return r.LastCheckpoint, err
}

// StopJobWithSavepoint stops the job of that name, as StopJob does, with a savepoint
// under target (the job's 'state.savepoints.dir' when empty), and returns its path.
func StopJobWithSavepoint(stateDir, name string, drain bool, target string) (string, error) {
	r, err := askJob(stateDir, controlRequest{Op: "stop", Job: name, Drain: drain, Savepoint: true, Target: absPath(target)})
	return r.Path, err
}

// TakeSavepoint has the running job of that name take a savepoint under target (the
// job's 'state.savepoints.dir' when empty), and returns its path; the job goes on.
func TakeSavepoint(stateDir, name, target string) (string, error) {
	r, err := askJob(stateDir, controlRequest{Op: "savepoint", Job: name, Target: absPath(target)})
	return r.Path, err
}

// absPath makes a path given on one process's command line mean the same to another.
func absPath(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// askJob sends req to the process of stateDir that runs the job req names.
func askJob(stateDir string, req controlRequest) (controlReply, error) {
	found := false
	var reply controlReply
	var runErr error
	err := ask(stateDir, controlRequest{Op: "list"}, func(pid int, r controlReply) bool {
		for _, j := range r.Jobs {
			if j.Name == req.Job && (j.State == string(job.Running) || j.State == string(job.Restarting) || j.State == string(job.Created)) {
				found = true
			}
		}
		if !found {
			return true
		}
		sock := filepath.Join(controlDir(stateDir), strconv.Itoa(pid)+".sock")
		reply, runErr = askAt(sock, req)
		return false
	})
	if err != nil {
		return reply, err
	}
	if !found {
		return reply, fmt.Errorf("no running job named '%s' uses the state directory %s", req.Job, stateDir)
	}
	return reply, runErr
}

func askAt(sock string, req controlRequest) (controlReply, error) {
	var r controlReply
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return r, err
	}
	defer conn.Close()
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return r, err
	}
	if err := json.NewDecoder(conn).Decode(&r); err != nil {
		return r, fmt.Errorf("job %s: %w", req.Job, err)
	}
	if r.Error != "" {
		if strings.HasPrefix(r.Error, "job ") {
			return r, errors.New(r.Error)
		}
		return r, fmt.Errorf("job %s: %s", req.Job, r.Error)
	}
	return r, nil
}
