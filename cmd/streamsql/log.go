package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// logWriter is where log lines go: stderr, or in the shell readline's writer, which
// prints them above the line being typed.
type logWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *logWriter) set(w io.Writer) {
	l.mu.Lock()
	l.w = w
	l.mu.Unlock()
}

// newLogger builds the logger of --log-format and --log-level.
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lvl slog.Level
	switch strings.ToLower(level) {
	case "debug":
		lvl = slog.LevelDebug
	case "info":
		lvl = slog.LevelInfo
	case "warn", "warning":
		lvl = slog.LevelWarn
	case "error":
		lvl = slog.LevelError
	default:
		return nil, fmt.Errorf("--log-level must be debug, info, warn or error, got %q", level)
	}
	switch strings.ToLower(format) {
	case "text":
		return slog.New(&textHandler{w: w, level: lvl}), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lvl})), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, got %q", format)
}

// textHandler writes a line a person reads: the time, the level, the message and any
// attributes but the job's name, which the message already starts with.
//
//	2026-12-01 17:40:29.123 WARN  job insert-out: failed: ...; restart 1 in 1s
type textHandler struct {
	w     io.Writer
	level slog.Level
	attrs []slog.Attr
}

func (h *textHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *textHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	b.WriteString(t.Format("2006-01-02 15:04:05.000 "))
	fmt.Fprintf(&b, "%-5s ", r.Level.String())
	b.WriteString(r.Message)
	attr := func(a slog.Attr) bool {
		if a.Key != "job" {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		}
		return true
	}
	for _, a := range h.attrs {
		attr(a)
	}
	r.Attrs(attr)
	b.WriteByte('\n')
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *textHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &textHandler{w: h.w, level: h.level, attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
}

func (h *textHandler) WithGroup(string) slog.Handler { return h }
