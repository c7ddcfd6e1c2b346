package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// version is the release, set at build time with
// -ldflags '-X main.version=v1.2.3'; otherwise the module's version from the build
// information (a version for `go install ...@v1.2.3`, "(devel)" for a checkout).
var version = ""

// versionString says which streamsql this is: its version, the commit it was built
// from when known, and the Go that built it.
func versionString() string {
	v := version
	var commit, when, modified string
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = ", modified"
				}
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	out := "streamsql " + v
	if commit != "" {
		out += fmt.Sprintf(" (commit %.12s, %s%s)", commit, when, modified)
	}
	return fmt.Sprintf("%s, built with %s for %s/%s", out, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// A command is one of streamsql's subcommands, as `streamsql help` lists them.
type command struct {
	name, usage, summary string
	run                  func(args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"list", "streamsql list [--state-dir DIR]", "list the jobs of the streamsql processes that use DIR, with their figures",
			func(a []string, o, e io.Writer) int { return control("list", a, o, e) }},
		{"stop", "streamsql stop [--state-dir DIR] [--savepoint-path TARGET_DIR] [--drain] JOB",
			"stop a running job gracefully, with a final checkpoint (and a savepoint into TARGET_DIR)",
			func(a []string, o, e io.Writer) int { return control("stop", a, o, e) }},
		{"savepoint", "streamsql savepoint [--state-dir DIR] JOB [TARGET_DIR]\n       streamsql savepoint inspect PATH",
			"have a running job take a savepoint and go on; or show what a savepoint holds",
			func(a []string, o, e io.Writer) int { return control("savepoint", a, o, e) }},
		{"bench", "streamsql bench [-rows N] [--workloads W,...] [--json] [--cpuprofile PREFIX]\n       streamsql bench nexmark [--queries q0,q5|all] [--events N] [--parallelism P] [--checkpoint-interval D] [--checkpoint-mode M] [--json]",
			"measure queries over JSON and CSV bids (rows/s, rows per core-second, CPU a row against a hand-written scan), or the Nexmark queries against a generator-only baseline",
			bench},
		{"help", "streamsql help [COMMAND]", "say what streamsql and each of its commands do", nil},
		{"version", "streamsql version   (or streamsql --version)", "print the version of streamsql and of the Go that built it", nil},
	}
}

func findCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// overview is what `streamsql help` and `streamsql --help` print before the flags.
func overview(w io.Writer) {
	fmt.Fprint(w, `streamsql runs continuous SQL (Flink SQL) over streams, from one binary.

usage: streamsql [flags]            an interactive shell (type 'help' in it)
       streamsql -f FILE [flags]    run the statements of FILE in order
       streamsql -e SQL [flags]     run the statements of one string
       streamsql COMMAND [args]     job control and measurements

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\n'streamsql help COMMAND' says more of one. Flags:\n")
}

// help runs `streamsql help [COMMAND]`, on stdout.
func help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return run([]string{"--help"}, stdout, stdout)
	}
	if len(args) > 1 {
		fmt.Fprintln(stderr, "usage: streamsql help [COMMAND]")
		return 2
	}
	c, ok := findCommand(args[0])
	if !ok {
		fmt.Fprintf(stderr, "streamsql help: unknown command %q (commands: %s)\n", args[0], strings.Join(commandNames(), ", "))
		return 2
	}
	fmt.Fprintf(stdout, "%s.\n\n", strings.ToUpper(c.summary[:1])+c.summary[1:])
	if c.run == nil {
		fmt.Fprintf(stdout, "usage: %s\n", c.usage)
		return 0
	}
	return c.run([]string{"-h"}, stdout, stdout)
}

func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// parseFailed is the exit status of a command whose flags did not parse: 0 when they
// asked for help, which the flag package printed, 2 otherwise.
func parseFailed(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}

// usage prints a command's usage line and its flags, for -h and `streamsql help`.
func usage(fs *flag.FlagSet, name string) func() {
	return func() {
		c, _ := findCommand(name)
		fmt.Fprintf(fs.Output(), "usage: %s\n\nFlags:\n", c.usage)
		fs.PrintDefaults()
	}
}
