package serve

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// shutdownGrace is OPA's GracefulShutdownPeriod: how long its server
// waits for the requests in flight at shutdown. Those still running
// haltEarly before its end are cancelled, so that they have answered, and
// the server has stopped cleanly, by the time it ends; haltMargin after
// its end Serve returns whether or not OPA's runtime has stopped.
const (
	shutdownGrace = 5 * time.Second
	haltEarly     = time.Second
	haltMargin    = 2 * time.Second
)

var (
	// errShutdownGrace is the cause of a request context cancelled at the
	// end of the grace period.
	errShutdownGrace = errors.New("server shutting down: the grace period is ending")
	// errHalted is returned by Serve when OPA's runtime had not stopped
	// haltMargin after the requests in flight were cancelled.
	errHalted = errors.New("shutdown: requests still running after the grace period; stopped without them")
)

// newHalt returns the context of the requests' lifetime and the function
// that ends it, for the end of the grace period.
func newHalt() (context.Context, context.CancelCauseFunc) {
	return context.WithCancelCause(context.Background())
}

// untilHalt returns ctx, cancelled also when the server's grace period is
// about to end.
//
// OPA's runtime does not cancel the requests in flight at shutdown: it waits
// the grace period for them, then waits again, without a bound, to close
// its store, which they hold open while they evaluate. A request blocked in
// a builtin (a group lookup on a directory that does not answer) kept the
// process alive for as long as the builtin waited.
func (s *Server) untilHalt(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(s.running, func() { cancel(context.Cause(s.running)) })
	return ctx, func() { stop(); cancel(nil) }
}

// wait returns OPA's runtime's result. Once ctx is done the runtime shuts
// down; just before the end of the grace period the requests still running
// are cancelled, and if the runtime still has not stopped haltMargin after
// its end, wait returns without it, so the process does not outlive its
// grace period by more than that.
func (s *Server) wait(ctx context.Context, errc <-chan error) error {
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		halt := time.AfterFunc(shutdownGrace-haltEarly, func() { s.halt(errShutdownGrace) })
		defer halt.Stop()
		select {
		case err = <-errc:
		case <-time.After(shutdownGrace + haltMargin):
			err = errHalted
		}
	}
	if err != nil {
		return fmt.Errorf("serve %s: %w", s.cfg.addr, err)
	}
	return nil
}
