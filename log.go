package streamsql

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// plainHandler is a session's logger when its Config has none: info and above, as
// plain lines on the session's Err, warnings and errors marked as the shell marks
// them ("[WARNING] ...").
type plainHandler struct {
	s *Session
}

func (h plainHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h plainHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	switch {
	case r.Level >= slog.LevelError:
		b.WriteString("[ERROR] ")
	case r.Level >= slog.LevelWarn:
		b.WriteString("[WARNING] ")
	}
	b.WriteString(r.Message)
	b.WriteByte('\n')
	_, err := fmt.Fprint(h.s.cfg.Err, b.String())
	return err
}

func (h plainHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h plainHandler) WithGroup(string) slog.Handler      { return h }

func (s *Session) warn(msg string) { s.cfg.Logger.Warn(msg) }
