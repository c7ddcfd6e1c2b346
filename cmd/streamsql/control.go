package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/streamsql/streamsql"
	"github.com/streamsql/streamsql/exec/format"
)

// control runs `streamsql list` and `streamsql stop`: job control of the streamsql
// processes that use a state directory, through their control sockets.
func control(cmd string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("streamsql "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	stateDir := fs.String("state-dir", "streamsql-state", "the state directory of the jobs")
	drain := fs.Bool("drain", false, "stop: advance event time to the end first, so every window fires")
	savepoint := fs.String("savepoint-path", "", "stop: take a savepoint into this directory (not supported yet)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch cmd {
	case "list":
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "streamsql list: unexpected argument %q\n", fs.Arg(0))
			return 2
		}
		jobs, err := streamsql.ListJobs(*stateDir)
		if err != nil {
			fmt.Fprintf(stderr, "streamsql list: %v\n", err)
			return 1
		}
		var rows [][]string
		for _, j := range jobs {
			last := ""
			if j.LastCheckpoint > 0 {
				last = strconv.FormatInt(j.LastCheckpoint, 10)
			}
			started := ""
			if !j.Started.IsZero() {
				started = j.Started.Format("2006-01-02 15:04:05")
			}
			rows = append(rows, []string{j.Name, j.State, strconv.Itoa(j.PID), started, strconv.FormatInt(j.RowsIn, 10),
				strconv.FormatInt(j.RowsOut, 10), last, strconv.Itoa(j.Restarts)})
		}
		format.WriteTable(stdout, []string{"job id", "status", "pid", "start time", "rows in", "rows out", "last checkpoint", "restarts"}, rows)
		return 0
	default: // stop
		if fs.NArg() != 1 {
			fmt.Fprintln(stderr, "usage: streamsql stop --state-dir DIR [--drain] JOB")
			return 2
		}
		if *savepoint != "" {
			fmt.Fprintln(stderr, "streamsql stop: --savepoint-path is not supported yet: savepoints are not built; without it, the job stops with a final checkpoint it resumes from")
			return 1
		}
		last, err := streamsql.StopJob(*stateDir, fs.Arg(0), *drain)
		if err != nil {
			fmt.Fprintf(stderr, "streamsql stop: %v\n", err)
			return 1
		}
		if last > 0 {
			fmt.Fprintf(stdout, "Job %s stopped with checkpoint %d.\n", fs.Arg(0), last)
		} else {
			fmt.Fprintf(stdout, "Job %s stopped.\n", fs.Arg(0))
		}
		return 0
	}
}
