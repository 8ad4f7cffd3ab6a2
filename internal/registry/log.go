package registry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"

	"github.com/sirupsen/logrus"
)

// distribution logs through logrus's process-wide standard logger and offers
// no per-instance logger to a library user, so routeLogs silences that logger
// and forwards its warnings and errors to slog. The last New wins; svcd has
// one registry.
func routeLogs(l *slog.Logger) {
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	logSink.Store(l)
	std := logrus.StandardLogger()
	std.SetOutput(io.Discard)
	// Info carries a line per request; below Warn nothing is even formatted.
	std.SetLevel(logrus.WarnLevel)
	std.ReplaceHooks(logrus.LevelHooks{})
	std.AddHook(hook{})
}

var logSink atomic.Pointer[slog.Logger]

type hook struct{}

func (hook) Levels() []logrus.Level {
	return []logrus.Level{logrus.PanicLevel, logrus.FatalLevel, logrus.ErrorLevel, logrus.WarnLevel}
}

func (hook) Fire(e *logrus.Entry) error {
	l := logSink.Load()
	if l == nil {
		return nil
	}
	level := slog.LevelError
	if e.Level == logrus.WarnLevel {
		level = slog.LevelWarn
	}
	// distribution logs every 4xx (an unknown manifest, a bad digest) as an
	// error; those are the client's business, not the operator's.
	if e.Message == "response completed with error" {
		if status, ok := e.Data["http.response.status"].(int); ok && status < 500 {
			level = slog.LevelDebug
		}
	}
	// An in-process request's failure is returned to the Go caller (Import
	// and friends), who reports it; the source breaking off mid-copy is not
	// the operator's concern either.
	if e.Data["http.request.remoteaddr"] == inProcessAddr && level == slog.LevelError {
		level = slog.LevelDebug
	}
	ctx := context.Background()
	if !l.Enabled(ctx, level) {
		return nil
	}
	// Every distribution logger carries go.version (dcontext's default
	// fields); entries without it come from another logrus user in the
	// process and are passed on without the registry's name.
	msg := e.Message
	if _, ok := e.Data["go.version"]; ok {
		msg = "registry: " + msg
	}
	attrs := make([]slog.Attr, 0, len(e.Data))
	for k, v := range e.Data {
		if k == "go.version" {
			continue
		}
		attrs = append(attrs, slog.String(k, fmt.Sprint(v)))
	}
	l.LogAttrs(ctx, level, msg, attrs...)
	return nil
}
