package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/streamsql/streamsql"
	"github.com/streamsql/streamsql/exec/format"
)

// control runs `streamsql list`, `stop` and `savepoint`: job control of the streamsql
// processes that use a state directory, through their control sockets.
func control(cmd string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("streamsql "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usage(fs, cmd)
	if wantsHelp(args) {
		fs.SetOutput(stdout)
	}
	stateDir := fs.String("state-dir", "streamsql-state", "the state directory of the jobs")
	drain := fs.Bool("drain", false, "stop: advance event time to the end first, so every window fires")
	savepoint := fs.String("savepoint-path", "", "stop: take a savepoint into this directory first")
	if cmd == "savepoint" && len(args) > 0 && args[0] == "inspect" {
		if len(args) != 2 {
			fmt.Fprintln(stderr, "usage: streamsql savepoint inspect PATH")
			return 2
		}
		if err := streamsql.InspectSavepoint(args[1], stdout); err != nil {
			fmt.Fprintf(stderr, "streamsql savepoint inspect: %v\n", err)
			return 1
		}
		return 0
	}
	if err := fs.Parse(args); err != nil {
		return parseFailed(err)
	}
	switch cmd {
	case "savepoint":
		if fs.NArg() < 1 || fs.NArg() > 2 {
			fmt.Fprintln(stderr, "usage: streamsql savepoint --state-dir DIR JOB [TARGET_DIR]\n       streamsql savepoint inspect PATH")
			return 2
		}
		path, err := streamsql.TakeSavepoint(*stateDir, fs.Arg(0), fs.Arg(1))
		if err != nil {
			fmt.Fprintf(stderr, "streamsql savepoint: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "Savepoint completed. Path: %s\n", path)
		return 0
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
			fmt.Fprintln(stderr, "usage: streamsql stop --state-dir DIR [--savepoint-path TARGET_DIR] [--drain] JOB")
			return 2
		}
		if *savepoint != "" {
			path, err := streamsql.StopJobWithSavepoint(*stateDir, fs.Arg(0), *drain, *savepoint)
			if err != nil {
				fmt.Fprintf(stderr, "streamsql stop: %v\n", err)
				return 1
			}
			fmt.Fprintf(stdout, "Savepoint completed. Path: %s\n", path)
			return 0
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
