package main

import (
	"io"
	"log/slog"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aclc-dev/aclc/pkg/logs"
)

// logOptions are the servers' log flags.
type logOptions struct{ format, level string }

func logFlags(fs *pflag.FlagSet, o *logOptions) {
	fs.StringVar(&o.format, "log-format", "json", "format of the logs on standard error: json (one object a line, as OPA) or text")
	fs.StringVar(&o.level, "log-level", "info", "level of the logs: debug, info, warn or error")
}

// check refuses a format or level the servers do not know.
func (o logOptions) check(cmd *cobra.Command) int {
	if !slices.Contains(logs.Formats, o.format) {
		return usageErr(cmd, "--log-format %q: want json or text", o.format)
	}
	if _, err := logs.ParseLevel(o.level); err != nil {
		return usageErr(cmd, "--log-level %q: want debug, info, warn or error", o.level)
	}
	return exitOK
}

// logger is the server's logger on w.
func (o logOptions) logger(w io.Writer) (*slog.Logger, error) {
	h, err := logs.NewHandler(w, o.format)
	if err != nil {
		return nil, err
	}
	level, err := logs.ParseLevel(o.level)
	if err != nil {
		return nil, err
	}
	return logs.New(h, level), nil
}
