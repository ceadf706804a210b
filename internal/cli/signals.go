package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// notifyContext returns a context cancelled by the first SIGINT or SIGTERM, whose cause names
// the signal. Later signals are still caught (not fatal) until stop is called, so the verbs'
// cleanup — closing sessions, which ends child process trees — always runs; that cleanup is
// bounded by the transports' close deadlines.
func notifyContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}
