// Package logs makes the one log handler of an aclc server: JSON lines by
// default, as OPA writes them, or logfmt-style text, at a level; OPA's
// runtime and decision logs go through the same handler (OPA), so a server
// writes one stream in one format.
package logs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/logging"

	"github.com/aclc-dev/aclc/internal/text"
)

// Formats and levels, as --log-format and --log-level take them.
var (
	Formats = []string{"json", "text"}
	Levels  = []string{"debug", "info", "warn", "error"}
)

// ParseLevel reads a --log-level value.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "", "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("unknown log level %q (want debug, info, warn or error)", s)
}

// NewHandler returns the handler for format ("json", the default, or
// "text") writing to w. It passes every level: loggers filter, so that
// OPA's decision logs, which OPA writes at info whatever --log-level says,
// still come through.
func NewHandler(w io.Writer, format string) (slog.Handler, error) {
	opts := &slog.HandlerOptions{Level: slog.LevelDebug}
	switch format {
	case "", "json":
		return slog.NewJSONHandler(w, opts), nil
	case "text":
		return slog.NewTextHandler(w, opts), nil
	}
	return nil, fmt.Errorf("unknown log format %q (want json or text)", format)
}

// New returns a logger on h that drops records below level.
func New(h slog.Handler, level slog.Level) *slog.Logger {
	return slog.New(leveled{h, level})
}

// leveled filters a handler's records by level.
type leveled struct {
	slog.Handler
	level slog.Level
}

func (l leveled) Enabled(ctx context.Context, lv slog.Level) bool {
	return lv >= l.level && l.Handler.Enabled(ctx, lv)
}
func (l leveled) WithAttrs(a []slog.Attr) slog.Handler {
	return leveled{l.Handler.WithAttrs(a), l.level}
}
func (l leveled) WithGroup(n string) slog.Handler { return leveled{l.Handler.WithGroup(n), l.level} }

// OPA returns an OPA logging.Logger that writes through h at level.
func OPA(h slog.Handler, level slog.Level) logging.Logger {
	lv := new(atomic.Uint32)
	lv.Store(uint32(opaLevel(level)))
	return &opaLogger{l: slog.New(h), level: lv}
}

func opaLevel(l slog.Level) logging.Level {
	switch {
	case l <= slog.LevelDebug:
		return logging.Debug
	case l <= slog.LevelInfo:
		return logging.Info
	case l <= slog.LevelWarn:
		return logging.Warn
	}
	return logging.Error
}

// opaLogger is OPA's logging.Logger over slog.
type opaLogger struct {
	l     *slog.Logger
	level *atomic.Uint32 // a logging.Level, shared by every WithFields copy
}

func (s *opaLogger) log(level logging.Level, sl slog.Level, format string, a []any) {
	if logging.Level(s.level.Load()) < level {
		return
	}
	s.l.Log(context.Background(), sl, fmt.Sprintf(format, a...))
}

func (s *opaLogger) Debug(f string, a ...any) { s.log(logging.Debug, slog.LevelDebug, f, a) }
func (s *opaLogger) Info(f string, a ...any)  { s.log(logging.Info, slog.LevelInfo, f, a) }
func (s *opaLogger) Warn(f string, a ...any)  { s.log(logging.Warn, slog.LevelWarn, f, a) }
func (s *opaLogger) Error(f string, a ...any) { s.log(logging.Error, slog.LevelError, f, a) }

// WithFields returns a logger that adds the fields, sorted by key so the
// output is stable.
func (s *opaLogger) WithFields(fields map[string]any) logging.Logger {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	args := make([]any, 0, 2*len(keys))
	for _, k := range keys {
		v := fields[k]
		if err, ok := v.(error); ok {
			v = err.Error()
		}
		args = append(args, k, v)
	}
	return &opaLogger{l: s.l.With(args...), level: s.level}
}

func (s *opaLogger) GetLevel() logging.Level      { return logging.Level(s.level.Load()) }
func (s *opaLogger) SetLevel(level logging.Level) { s.level.Store(uint32(level)) }

// OneLine joins the lines of a message with single spaces (text.OneLine):
// every message aclc prints, logs or answers is one line.
func OneLine(s string) string { return text.OneLine(s) }
