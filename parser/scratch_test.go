package parser

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScratch(t *testing.T) {
	in := os.Getenv("SQL")
	if in == "" {
		t.Skip()
	}
	for _, q := range strings.Split(in, "\n===\n") {
		s, err := Parse(q)
		if err != nil {
			fmt.Printf("ERR %s\n", err)
			continue
		}
		fmt.Printf("OK  %s\n", s)
	}
}

func TestScratchFiles(t *testing.T) {
	files, _ := filepath.Glob("../queries/*.sql")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		s, err := Parse(string(b))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, st := range s.Stmts {
			checkRoundTrip(t, st)
		}
	}
}
