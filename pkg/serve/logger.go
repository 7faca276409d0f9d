package serve

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/logging"
)

// slogLogger writes OPA's runtime logs, the decision logs and aclc's own
// reload messages as one stream of JSON lines, through log/slog.
type slogLogger struct {
	l     *slog.Logger
	level *atomic.Uint32 // a logging.Level, shared by every WithFields copy
}

func newLogger(w io.Writer, level logging.Level) *slogLogger {
	lv := new(atomic.Uint32)
	lv.Store(uint32(level))
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})
	return &slogLogger{l: slog.New(h), level: lv}
}

func (s *slogLogger) log(level logging.Level, sl slog.Level, format string, a []any) {
	if logging.Level(s.level.Load()) < level {
		return
	}
	s.l.Log(context.Background(), sl, fmt.Sprintf(format, a...))
}

func (s *slogLogger) Debug(f string, a ...any) { s.log(logging.Debug, slog.LevelDebug, f, a) }
func (s *slogLogger) Info(f string, a ...any)  { s.log(logging.Info, slog.LevelInfo, f, a) }
func (s *slogLogger) Warn(f string, a ...any)  { s.log(logging.Warn, slog.LevelWarn, f, a) }
func (s *slogLogger) Error(f string, a ...any) { s.log(logging.Error, slog.LevelError, f, a) }

// WithFields returns a logger that adds the fields, sorted by key so the
// output is stable.
func (s *slogLogger) WithFields(fields map[string]any) logging.Logger {
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
	return &slogLogger{l: s.l.With(args...), level: s.level}
}

func (s *slogLogger) GetLevel() logging.Level      { return logging.Level(s.level.Load()) }
func (s *slogLogger) SetLevel(level logging.Level) { s.level.Store(uint32(level)) }

// parseLevel reads a --log-level value.
func parseLevel(s string) (logging.Level, error) {
	switch s {
	case "debug":
		return logging.Debug, nil
	case "", "info":
		return logging.Info, nil
	case "warn":
		return logging.Warn, nil
	case "error":
		return logging.Error, nil
	}
	return 0, fmt.Errorf("unknown log level %q (want debug, info, warn or error)", s)
}
