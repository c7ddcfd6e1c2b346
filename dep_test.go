package streamsql

import (
	"go/build"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDependencies enforces the import direction between the project's packages.
func TestDependencies(t *testing.T) {
	const mod = "github.com/streamsql/streamsql"
	rules := []struct {
		pkg       string
		forbidden []string
	}{
		{"parser", []string{mod + "/"}},
		{"state", []string{mod + "/"}},
		{"checkpoint", []string{mod + "/", "go.etcd.io/bbolt"}},
		{"planner", []string{mod + "/exec", mod + "/cmd", mod + "/state", mod + "/checkpoint", "go.etcd.io/bbolt"}},
		{"exec", []string{mod + "/cmd", mod + "/state", "go.etcd.io/bbolt"}},
		{"exec/expr", []string{mod + "/cmd", mod + "/exec/ops", mod + "/exec/connector"}},
		{"exec/ops", []string{mod + "/cmd", mod + "/exec/connector", "go.etcd.io/bbolt"}},
		{"exec/format", []string{mod + "/cmd", mod + "/exec/ops", mod + "/exec/connector"}},
		{"exec/connector", []string{mod + "/cmd", mod + "/exec/ops", "go.etcd.io/bbolt"}},
		{"exec/connector/embedded", []string{mod + "/cmd", mod + "/exec/ops", mod + "/state"}}, // its table is a bbolt file
		{"internal/job", []string{mod + "/cmd", "go.etcd.io/bbolt"}},
		// The HTTP server sees jobs only through their figures and the Jobs interface.
		{"internal/web", []string{mod + "/cmd", mod + "/exec", mod + "/planner", mod + "/state", mod + "/checkpoint", "go.etcd.io/bbolt"}},
	}
	for _, r := range rules {
		p, err := build.Import(mod+"/"+r.pkg, ".", 0)
		if err != nil {
			t.Fatalf("%s: %v", r.pkg, err)
		}
		for _, imp := range p.Imports {
			if imp == mod { // the engine API sits above every package
				t.Errorf("%s imports the root package, which it must not", r.pkg)
			}
			for _, f := range r.forbidden {
				if strings.HasPrefix(imp, f) && imp != mod+"/"+r.pkg {
					t.Errorf("%s imports %s, which it must not", r.pkg, imp)
				}
			}
		}
	}
}

// TestArchitectureNamesPackages checks that every directory ARCHITECTURE.md names exists.
func TestArchitectureNamesPackages(t *testing.T) {
	data, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	// Table rows: | box | `package` | job |
	row := regexp.MustCompile("(?m)^\\| [^|]+ \\| `([^`]+)`")
	matches := row.FindAllStringSubmatch(string(data), -1)
	if len(matches) < 5 {
		t.Fatalf("found only %d packages in ARCHITECTURE.md", len(matches))
	}
	for _, m := range matches {
		pkg := m[1]
		if fi, err := os.Stat(pkg); err != nil || !fi.IsDir() {
			t.Errorf("ARCHITECTURE.md names %s, which is not a directory of the repository", pkg)
		}
	}
}
