package postgres

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/planner"
)

// TestURLErrorsHidePasswords: a url that cannot be read is named in the error without
// its password, in each form a password can take.
func TestURLErrorsHidePasswords(t *testing.T) {
	for _, url := range []string{
		"jdbc:postgresql://alice:s3cret@db.example:notaport/shop",
		"jdbc:postgresql://db.example:notaport/shop?user=alice&password=s3cret",
		"postgres://alice:s3cret@db.example:notaport/shop",
		"mysql://alice:s3cret@db.example/shop",
	} {
		table := &planner.Table{Name: "orders", Options: map[string]string{"connector": "postgres", "url": url, "table-name": "orders", "password": "hunter2"}}
		_, err := parseOptions(table)
		if err == nil {
			t.Errorf("%s: accepted", url)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "s3cret") || strings.Contains(msg, "hunter2") || !strings.Contains(msg, "option 'url'") {
			t.Errorf("%s: %s", url, msg)
		}
	}
}
