package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCLIHelp: --help and `help` exit 0 and name every command; `help COMMAND` gives
// its usage and flags; an unknown command fails naming the commands.
func TestCLIHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		out, errOut, code := runCLI(t, "", args...)
		if code != 0 || errOut != "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
		for _, want := range []string{"usage: streamsql", "-f FILE", "-e SQL", "-version", "  list ", "  stop ", "  savepoint ", "  bench ", "  help ", "  version "} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, out)
			}
		}
	}
	for cmd, want := range map[string]string{
		"stop": "-savepoint-path", "savepoint": "inspect PATH", "list": "-state-dir", "bench": "-rows", "version": "--version",
	} {
		out, errOut, code := runCLI(t, "", "help", cmd)
		if code != 0 || !strings.Contains(out, "usage: streamsql "+cmd) || !strings.Contains(out, want) {
			t.Errorf("help %s: exit %d, stderr %q, output:\n%s", cmd, code, errOut, out)
		}
	}
	if out, _, code := runCLI(t, "", "stop", "-h"); code != 0 || !strings.Contains(out, "-drain") {
		t.Errorf("stop -h: exit %d:\n%s", code, out)
	}
	_, errOut, code := runCLI(t, "", "help", "nope")
	if code != 2 || !strings.Contains(errOut, `unknown command "nope"`) || !strings.Contains(errOut, "stop") {
		t.Errorf("help nope: exit %d, stderr %q", code, errOut)
	}
}

// TestCLIVersion: --version and `version` print the version and the Go that built
// the binary; -ldflags -X main.version sets the version.
func TestCLIVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, _, code := runCLI(t, "", args...)
		if code != 0 || !strings.HasPrefix(out, "streamsql ") || !strings.Contains(out, runtime.Version()) {
			t.Errorf("%v: exit %d: %q", args, code, out)
		}
	}
	bin := filepath.Join(t.TempDir(), "streamsql")
	build := exec.Command("go", "build", "-ldflags", "-X main.version=v9.8.7", "-o", bin, "../cmd/streamsql")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "streamsql v9.8.7") {
		t.Errorf("built with -X main.version=v9.8.7: %v %q", err, out)
	}
}

// TestCLIFileAndInline: -e given with -f is refused with one line, running nothing.
func TestCLIFileAndInline(t *testing.T) {
	out, errOut, code := runCLI(t, "", "-f", "queries/sensors.sql", "-e", "SELECT 1;")
	if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "-f and -e cannot be given together") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestReadmeFirstCommand: the README's first command prints what the README shows.
func TestReadmeFirstCommand(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	const cmdStart = "```sh\ngo run ./cmd/streamsql "
	i := strings.Index(text, cmdStart)
	if i < 0 {
		t.Fatal("the README's first command is not `go run ./cmd/streamsql ...`")
	}
	rest := text[i+len(cmdStart):]
	args := strings.Fields(rest[:strings.Index(rest, "\n")])
	j := strings.Index(rest, "\n```\n\n")
	k := strings.Index(rest[j+5:], "```\n")
	if j < 0 || k < 0 {
		t.Fatal("the README shows no output after its first command")
	}
	shown := rest[j+5:][k+4:]
	want := shown[:strings.Index(shown, "```")]
	out, errOut, code := runCLI(t, "", append(args, "--state-dir", t.TempDir())...)
	if code != 0 || out != want {
		t.Errorf("streamsql %s: exit %d, stderr %q, output:\n%s\nthe README shows:\n%s", strings.Join(args, " "), code, errOut, out, want)
	}
}
