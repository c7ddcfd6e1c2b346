// Command streamsql runs continuous SQL: a script with -f, one string with -e, or an
// interactive REPL when given neither.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
	_ "time/tzdata" // 'table.local-time-zone' works on machines without a zone database

	"github.com/chzyer/readline"
	"github.com/streamsql/streamsql"
	"github.com/streamsql/streamsql/parser"
)

func main() {
	tuneGC()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "help":
			return help(args[1:], stdout, stderr)
		case "version":
			fmt.Fprintln(stdout, versionString())
			return 0
		}
		if c, ok := findCommand(args[0]); ok && c.run != nil {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fs := flag.NewFlagSet("streamsql", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("f", "", "run the statements of `FILE`")
	inline := fs.String("e", "", "run the statements of `SQL`")
	stateDir := fs.String("state-dir", "streamsql-state", "where jobs keep checkpoints; a job started again resumes from its latest")
	fresh := fs.Bool("fresh", false, "discard earlier checkpoints and start jobs from nothing")
	format := fs.String("format", "", "how SELECT results print: table, csv, json or changelog (default: table in the shell or on a terminal, csv otherwise)")
	savepoint := fs.String("s", "", "start the jobs from the savepoint at `PATH` (or a retained checkpoint)")
	allowDrop := fs.Bool("allow-non-restored-state", false, "with -s: drop the savepoint's state that no operator of the new query claims")
	dryRun := fs.Bool("dry-run", false, "with -s: report what each job would restore of the savepoint, and run nothing")
	metricsAddr := fs.String("metrics-addr", "", "serve Prometheus metrics of the jobs at `ADDR` (host:port; a bare port is loopback, :port every interface)")
	webAddr := fs.String("web-addr", "", "serve the web dashboard and its REST API at `ADDR` (host:port; a bare port is loopback, :port every interface)")
	logFormat := fs.String("log-format", "text", "how log lines print: text (time, level, message) or json (one object a line)")
	logLevel := fs.String("log-level", "info", "the least severe log lines printed: debug (each checkpoint too), info, warn or error")
	quiet := fs.Bool("quiet", false, "no progress line on the terminal")
	showVersion := fs.Bool("version", false, "print the version of streamsql and of the Go that built it")
	fs.Usage = func() {
		overview(fs.Output())
		fs.PrintDefaults()
	}
	if wantsHelp(args) {
		fs.SetOutput(stdout) // asked for, help is output, not an error
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *showVersion {
		fmt.Fprintln(stdout, versionString())
		return 0
	}
	if *file != "" && *inline != "" {
		fmt.Fprintln(stderr, "streamsql: -f and -e cannot be given together: give a file with -f or a string with -e")
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "streamsql: unexpected argument %q (streamsql help lists the commands)\n", fs.Arg(0))
		return 2
	}
	interactive := *file == "" && *inline == ""
	if *format == "" {
		*format = "csv"
		if interactive || isTerminal(stdout) {
			*format = "table"
		}
	}
	if *dryRun && *savepoint == "" {
		fmt.Fprintln(stderr, "streamsql: --dry-run reports what jobs restore of a savepoint: give one with -s PATH")
		return 2
	}
	// On a terminal, a script's run shows a progress line on stderr; what else goes to
	// the terminal is written above it.
	var term *terminal
	if !interactive && !*quiet && isTerminal(stderr) {
		term = &terminal{err: stderr}
		if isTerminal(stdout) {
			stdout = term.writer(stdout)
		}
		stderr = term.writer(stderr)
	}
	logOut := &logWriter{w: stderr}
	logger, err := newLogger(logOut, *logFormat, *logLevel)
	if err != nil {
		fmt.Fprintf(stderr, "streamsql: %v\n", err)
		return 2
	}
	settings := map[string]string{}
	if *savepoint != "" {
		settings["execution.savepoint.path"] = *savepoint
	}
	if *allowDrop {
		settings["execution.savepoint.ignore-unclaimed-state"] = "true"
	}
	cfg := streamsql.Config{Out: stdout, Err: stderr, Logger: logger, Format: *format, Verbose: interactive,
		StateDir: *stateDir, Fresh: *fresh, Control: !*dryRun, Settings: settings, DryRun: *dryRun,
		MetricsAddr: *metricsAddr, WebAddr: *webAddr}
	if f, ok := stdout.(*os.File); ok && interactive && isTerminal(stdout) {
		// The shell on a terminal shows results live, in the session's result mode.
		views := &liveViews{out: stdout, now: time.Now, size: func() (int, int) {
			w, h, err := readline.GetSize(int(f.Fd()))
			if err != nil || w < 20 || h < 8 {
				return 80, 24
			}
			return w, h
		}, keys: -1}
		if readline.IsTerminal(int(os.Stdin.Fd())) {
			views.keys = int(os.Stdin.Fd())
		}
		cfg.Live = views.new
	}
	session, err := streamsql.NewSession(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "streamsql: %v\n", err)
		return 2
	}
	defer session.Close()
	if interactive {
		return repl(session, logOut, stdout, stderr)
	}
	sql := *inline
	if *file != "" {
		data, err := os.ReadFile(*file)
		if err != nil {
			fmt.Fprintf(stderr, "streamsql: %v\n", err)
			return 1
		}
		sql = strings.TrimPrefix(string(data), "\ufeff") // editors may start a file with a byte-order mark
	}
	// SIGINT and SIGTERM stop every job gracefully, each with a final checkpoint; a
	// second signal ends the process at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer context.AfterFunc(ctx, func() {
		stop()
		session.StopJobs()
	})()
	var progress sync.WaitGroup
	progressCtx, endProgress := context.WithCancel(context.Background())
	if term != nil {
		progress.Go(func() { runProgress(progressCtx, term, session, 250*time.Millisecond) })
	}
	err = session.Exec(ctx, sql)
	err = errors.Join(err, session.Wait())
	endProgress()
	progress.Wait() // the line is gone before the error prints
	if err != nil {
		fmt.Fprintf(stderr, "streamsql: %v\n", err)
		return 1
	}
	return 0
}

// isTerminal says whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && readline.IsTerminal(int(f.Fd()))
}

// wantsHelp says whether the flags ask for help (-h, -help, --help).
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

const shellHelp = `Statements end with ';' and may span lines.
  SET 'key' = 'value';                 session options (table.local-time-zone, parallelism.default, ...)
  CREATE TABLE t (...) WITH (...);     a source or sink table
  CREATE VIEW v AS SELECT ...;         a named query
  DROP TABLE t; DROP VIEW v;
  SHOW TABLES;  DESCRIBE t;  SHOW JOBS;  SHOW CHECKPOINTS;
  DESCRIBE JOB 'name';                 a running job's operators, rows/s, back-pressure, watermarks
  SELECT ...;                          runs the query and prints its result; Ctrl-C stops it
  INSERT INTO t SELECT ...;            starts a job that writes into t, in the background
  STOP JOB 'name' [WITH SAVEPOINT] [WITH DRAIN];
                                       stops a job gracefully, with a final checkpoint
                                       (and a savepoint of it, whose path it prints)
  EXPLAIN SELECT ...;                  shows the operator pipeline
Commands: help, quit (or exit, or Ctrl-D).
`

// repl reads statements interactively until quit or end of input.
func repl(session *streamsql.Session, logOut *logWriter, stdout, stderr io.Writer) int {
	home, _ := os.UserHomeDir()
	history := filepath.Join(home, ".streamsql_history")
	// The history is the user's alone (it may name hosts and users); readline would
	// create it world-readable.
	if f, err := os.OpenFile(history, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
		f.Close()
		os.Chmod(history, 0o600)
	}
	var buf strings.Builder // the lines of a statement typed so far
	pending := &buf
	rl, err := readline.NewEx(&readline.Config{
		Prompt:          "streamsql> ",
		HistoryFile:     history,
		InterruptPrompt: "^C",
		EOFPrompt:       "quit",
		Stdout:          stdout,
		Stderr:          stderr,
		AutoComplete:    &completer{vocabulary: session.Vocabulary, pending: func() string { return pending.String() }},
	})
	if err != nil {
		fmt.Fprintf(stderr, "streamsql: %v\n", err)
		return 1
	}
	defer rl.Close()
	// Job notices and failures arrive while a line is being typed: readline's writer
	// prints them above it and redraws the line.
	session.SetErr(rl.Stderr(), func(err error) { fmt.Fprintf(rl.Stderr(), "[ERROR] %v\n", err) })
	logOut.set(rl.Stderr())
	defer logOut.set(stderr)
	// Multi-line statements are saved to history whole, once complete.
	rl.Config.DisableAutoSaveHistory = true
	fmt.Fprintln(stdout, "streamsql: type 'help' for help, 'quit' to leave.")
	for {
		line, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			buf.Reset()
			rl.SetPrompt("streamsql> ")
			continue
		}
		if err != nil { // io.EOF: Ctrl-D
			break
		}
		if buf.Len() == 0 {
			switch strings.ToLower(strings.TrimSuffix(strings.TrimSpace(line), ";")) {
			case "":
				continue
			case "help":
				fmt.Fprint(stdout, shellHelp)
				continue
			case "quit", "exit":
				session.StopJobs()
				return exitCode(session.Wait(), stderr)
			}
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
		text := buf.String()
		if !parser.Complete(text) {
			rl.SetPrompt("        -> ")
			continue
		}
		buf.Reset()
		rl.SetPrompt("streamsql> ")
		rl.SaveHistory(maskSecrets(oneLine(text)))
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		if err := session.Exec(ctx, text); err != nil {
			fmt.Fprintf(stderr, "[ERROR] %v\n", err)
		}
		stop()
	}
	session.StopJobs()
	return exitCode(session.Wait(), stderr)
}

// secretOption matches a WITH option whose value is a secret ('password' = '...', and
// keys naming a secret or token), and secretInURL the password of a user:password@
// URL; maskSecrets hides their values in the history.
var (
	secretOption = regexp.MustCompile(`(?i)('[^']*(?:password|secret|token)[^']*'\s*=\s*)'(?:[^']|'')*'`)
	secretInURL  = regexp.MustCompile(`(://[^:/@'\s]+:)[^@'\s]+@`)
)

func maskSecrets(sql string) string {
	sql = secretOption.ReplaceAllString(sql, "$1'******'")
	return secretInURL.ReplaceAllString(sql, "${1}******@")
}

// oneLine joins the lines of a statement into one, so that it comes back from the
// history as one entry; a line's -- comment becomes a /* */ comment.
func oneLine(sql string) string {
	var parts []string
	for _, line := range strings.Split(sql, "\n") {
		line = strings.TrimSpace(line)
		quoted := false
		for i := 0; i+1 < len(line); i++ {
			switch {
			case line[i] == '\'':
				quoted = !quoted
			case !quoted && line[i] == '-' && line[i+1] == '-':
				comment := strings.TrimSpace(strings.ReplaceAll(line[i+2:], "*/", "* /"))
				line = strings.TrimSpace(line[:i] + "/* " + comment + " */")
				i = len(line)
			}
		}
		if line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, " ")
}

func exitCode(err error, stderr io.Writer) int {
	if err != nil {
		fmt.Fprintf(stderr, "streamsql: %v\n", err)
		return 1
	}
	return 0
}
