package tests

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// chromiumPath is Debian's chromium, which .ci/run installs.
const chromiumPath = "/usr/bin/chromium"

// requireChromium, set to 1 (as CI sets it), turns a missing chromium into a failure.
const requireChromium = "STREAMSQL_TEST_REQUIRE_CHROMIUM"

// browser starts a headless chromium with a fresh profile, offline.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv(requireChromium) == "1" {
			t.Fatalf("chromium is required (%s=1) but %s is missing: %v", requireChromium, chromiumPath, err)
		}
		t.Skipf("no chromium at %s (apt-get install chromium, or set %s=1 to fail instead)", chromiumPath, requireChromium)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	var answering sync.WaitGroup
	t.Cleanup(func() { cancelTimeout(); cancel(); answering.Wait(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	// The stop button asks for confirmation: accept it.
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	answering.Add(1)
	go func() {
		defer answering.Done()
		for _, err := range dialogs {
			if err != nil {
				return // the browser closed
			}
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	return ctx
}

// dashboardJob is a checkpointed aggregate in two stages of two tasks each.
const dashboardJob = `
SET 'execution.checkpointing.interval' = '300 ms';
SET 'parallelism.default' = '2';
CREATE TABLE gen (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000',
  'fields.k.min' = '1', 'fields.k.max' = '10');
CREATE TABLE hole (k BIGINT, c BIGINT) WITH ('connector' = 'blackhole');
`

const dashboardInsert = `INSERT INTO hole SELECT k, COUNT(*) FROM gen WHERE v > 0 GROUP BY k;`

// TestDashboardInBrowser loads --web-addr's page in headless chromium: it lists the
// job, its graph shows every operator EXPLAIN shows, the checkpoint table fills as
// checkpoints complete, and the stop button stops the job.
func TestDashboardInBrowser(t *testing.T) {
	ctx := browser(t)
	explain, errOut, code := runCLI(t, "", "-e", dashboardJob+"EXPLAIN "+dashboardInsert, "--state-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("EXPLAIN: %s", errOut)
	}
	var operators []string
	for _, m := range regexp.MustCompile(`(?m)^[ +\-]*([A-Z]\w*\(.*\))$`).FindAllStringSubmatch(strings.Split(explain, "== Guarantee ==")[0], -1) {
		operators = append(operators, m[1])
	}
	if len(operators) < 3 {
		t.Fatalf("EXPLAIN shows %d operators:\n%s", len(operators), explain)
	}
	p, url := startMonitored(t, dashboardJob+dashboardInsert, "dashboard", "--web-addr", "127.0.0.1:0")

	// The page lists the job.
	step, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(step, chromedp.Navigate(url), chromedp.WaitVisible(`#jobs tbody tr[data-job="insert-hole"]`)); err != nil {
		t.Fatalf("the page does not list the job: %v", err)
	}
	row, err := chromedp.Run(ctx, chromedp.Text(`#jobs tbody tr[data-job="insert-hole"]`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(row, "RUNNING") {
		t.Errorf("the job's row reads %q", row)
	}
	// Its graph shows every operator of EXPLAIN, with its figures.
	if err := chromedp.Do(ctx, chromedp.WaitVisible(`#graph g.node`)); err != nil {
		t.Fatal(err)
	}
	described, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#graph g.node")].map(g => g.dataset.description)`))
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range operators {
		found := false
		for _, d := range described {
			found = found || d == op
		}
		if !found {
			t.Errorf("the graph lacks %s; it shows %q", op, described)
		}
	}
	edges, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#graph path.edge").length`))
	if err != nil {
		t.Fatal(err)
	}
	source, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#graph g.node[data-id="0.src"]').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	if edges != len(described)-1 {
		t.Errorf("the graph of %d operators has %d edges", len(described), edges)
	}
	if !regexp.MustCompile(`TableSourceScan ×2.*\d+\.\d rows/s.*back-pressure \d+%`).MatchString(source) {
		t.Errorf("the source's node reads %q", source)
	}
	// The checkpoint table fills as checkpoints complete.
	count := func() int {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#checkpoints tbody tr[data-status="COMPLETED"]').length`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitUntil := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting until %s; stderr:\n%s", what, p.errOut.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	var first int
	waitUntil("a checkpoint is listed", func() bool { first = count(); return first > 0 })
	waitUntil("two more checkpoints are listed", func() bool { return count() >= first+2 })
	charts, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#charts polyline").length`))
	if err != nil || charts != 3 {
		t.Errorf("%d checkpoint charts (%v), want 3", charts, err)
	}
	// The savepoint button takes one and shows its path.
	if err := chromedp.Do(ctx, chromedp.Click(`#savepoint`)); err != nil {
		t.Fatal(err)
	}
	step, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if _, err := chromedp.Run(step, chromedp.Poll[bool](`/^savepoint (done|failed)/.test(document.getElementById("result").textContent)`)); err != nil {
		t.Fatalf("the savepoint button did not answer: %v", err)
	}
	said, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("result").textContent`))
	if err != nil {
		t.Fatal(err)
	}
	if path, ok := strings.CutPrefix(said, "savepoint done: "); !ok {
		t.Errorf("the savepoint button says %q", said)
	} else if _, err := os.Stat(filepath.Join(path, "_metadata")); err != nil {
		t.Errorf("the savepoint it names has no metadata: %v", err)
	}
	// The stop button stops the job, with a final checkpoint, and the script ends.
	if err := chromedp.Do(ctx, chromedp.Click(`#stop`)); err != nil {
		t.Fatal(err)
	}
	step, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if _, err := chromedp.Run(step, chromedp.Poll[bool](`/^stop (done|failed)/.test(document.getElementById("result").textContent)`)); err != nil {
		t.Fatalf("the stop button did not answer: %v", err)
	}
	result, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("result").textContent`))
	if err != nil {
		t.Fatal(err)
	}
	if result != "stop done" {
		t.Errorf("the stop button says %q", result)
	}
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the process ended with %v:\n%s", err, p.errOut.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the process did not end after its job stopped:\n%s", p.errOut.String())
	}
}
