package tests

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected outputs of the golden files")

// testCase is one command of a golden file:
//
//	command arg=value ...
//	input lines
//	----
//	expected output lines
//	<blank line>
//
// An output that holds blank lines is written between "----\n----" and "----\n----".
type testCase struct {
	pos      string // file:line, for failures
	comment  string // the # lines before the command
	cmd      string
	args     map[string]string
	input    string
	expected string
}

func readCases(t *testing.T, path string) []testCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var cases []testCase
	var comment strings.Builder
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.HasPrefix(line, "#") {
			comment.WriteString(line + "\n")
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		fields := strings.Fields(line)
		c := testCase{pos: fmt.Sprintf("%s:%d", path, i+1), comment: comment.String(), cmd: fields[0], args: map[string]string{}}
		comment.Reset()
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(f, "=")
			c.args[k] = v
		}
		var input []string
		for i++; i < len(lines) && lines[i] != "----"; i++ {
			input = append(input, lines[i])
		}
		c.input = strings.Join(input, "\n")
		var out []string
		if i+1 < len(lines) && lines[i+1] == "----" { // output with blank lines
			for i += 2; i < len(lines) && !(lines[i] == "----" && i+1 < len(lines) && lines[i+1] == "----"); i++ {
				out = append(out, lines[i])
			}
			i++
		} else {
			for i++; i < len(lines) && lines[i] != ""; i++ {
				out = append(out, lines[i])
			}
		}
		c.expected = strings.Join(out, "\n")
		cases = append(cases, c)
	}
	return cases
}

// writeCases writes the cases back with their actual outputs.
func writeCases(path string, cases []testCase, actual []string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for i, c := range cases {
		if i > 0 {
			w.WriteString("\n")
		}
		if c.comment != "" {
			w.WriteString(c.comment)
		}
		w.WriteString(c.cmd)
		keys := make([]string, 0, len(c.args))
		for k := range c.args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, " %s=%s", k, c.args[k])
		}
		w.WriteString("\n")
		if c.input != "" {
			w.WriteString(c.input + "\n")
		}
		out := strings.TrimRight(actual[i], "\n")
		if strings.Contains(out, "\n\n") {
			fmt.Fprintf(w, "----\n----\n%s\n----\n----\n", out)
		} else if out != "" {
			fmt.Fprintf(w, "----\n%s\n", out)
		} else {
			w.WriteString("----\n")
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}
