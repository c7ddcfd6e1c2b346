package tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal of rows × cols: the controller end the test reads
// and writes, and the terminal end a process is given.
func openPTY(t *testing.T, rows, cols uint16) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("opening a pseudo-terminal: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("naming the pseudo-terminal: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("opening the terminal end: %v", err)
	}
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols}); err != nil {
		t.Fatalf("sizing the terminal: %v", err)
	}
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	return ptmx, tty
}

// ptyProcess is streamsql running on a pseudo-terminal, with what it wrote to it.
type ptyProcess struct {
	t    *testing.T
	cmd  *exec.Cmd
	ptmx *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	read chan struct{} // closed when the terminal's output ended
	// tail, when set, keeps only the latest output: past 1 MB the oldest goes, and
	// base counts what went, so that marks stay positions in all of it.
	tail bool
	base int
}

// keepTail makes the process keep only its latest output, for a process that
// writes more than a test should hold.
func (p *ptyProcess) keepTail() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tail = true
}

// startOnPTY starts streamsql with the terminal as its controlling terminal and as
// the files the caller leaves nil of stdin, stdout and stderr.
func startOnPTY(t *testing.T, cmd *exec.Cmd) *ptyProcess {
	t.Helper()
	ptmx, tty := openPTY(t, 30, 120)
	if cmd.Stdin == nil {
		cmd.Stdin = tty
	}
	if cmd.Stdout == nil {
		cmd.Stdout = tty
	}
	if cmd.Stderr == nil {
		cmd.Stderr = tty
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if cmd.Stdin != tty {
		cmd.SysProcAttr.Ctty = -1
		cmd.SysProcAttr.Setctty = false
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the process holds it now
	p := &ptyProcess{t: t, cmd: cmd, ptmx: ptmx, read: make(chan struct{})}
	go func() {
		defer close(p.read)
		buf := make([]byte, 1<<16)
		for {
			n, err := ptmx.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			if p.tail && p.out.Len() > 1<<20 {
				drop := p.out.Len() - 1<<18
				p.base += drop
				p.out.Next(drop)
			}
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return p
}

// output is what the process wrote to the terminal so far.
func (p *ptyProcess) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// mark is a position in the output, to wait for what comes after it.
func (p *ptyProcess) mark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.base + p.out.Len()
}

// since is the output after mark that the process still keeps, and the position
// where it starts.
func (p *ptyProcess) since(mark int) (string, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	start := max(mark, p.base)
	return p.out.String()[start-p.base:], start
}

// waitFor waits until the output after mark holds want, and returns the output from
// mark on.
func (p *ptyProcess) waitFor(mark int, want string) string {
	p.t.Helper()
	out, _ := p.waitForAt(mark, want)
	return out
}

// waitForAt is waitFor that also returns the position the output returned starts at.
func (p *ptyProcess) waitForAt(mark int, want string) (string, int) {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, start := p.since(mark)
		if strings.Contains(out, want) {
			return out, start
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("timed out waiting for %q; the terminal shows:\n%q", want, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// send types text into the terminal.
func (p *ptyProcess) send(text string) {
	p.t.Helper()
	if _, err := p.ptmx.WriteString(text); err != nil {
		p.t.Fatal(err)
	}
}

// wait waits for the process to end and for its output to be read.
func (p *ptyProcess) wait() error {
	err := p.cmd.Wait()
	select {
	case <-p.read:
	case <-time.After(5 * time.Second):
	}
	return err
}

// waitForAfter waits until the output after mark holds first, then then after it.
func (p *ptyProcess) waitForAfter(mark int, first, then string) {
	p.t.Helper()
	out, start := p.waitForAt(mark, first)
	p.waitFor(start+strings.Index(out, first)+len(first), then)
}
