package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// interrupts turns SIGINT and SIGTERM into the run's end. The first cancels ctx, whose cause
// names the signal: the verbs stop, write their reports and close their sessions, which shuts
// the servers down gracefully (stdin, then SIGTERM, then SIGKILL of each process tree, at most
// 1.5s). The second closes abort: the servers' process trees are killed at once. A third is no
// longer caught, so it ends mcpspec by the signal's default action. stop releases the signals.
func interrupts(parent context.Context) (ctx context.Context, abort <-chan struct{}, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	aborted := make(chan struct{})
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		first := true
		for {
			select {
			case sig := <-sigs:
				if first {
					first = false
					cancel(fmt.Errorf("%v signal received", sig))
					continue
				}
				close(aborted)
				signal.Reset(os.Interrupt, syscall.SIGTERM)
				return
			case <-done:
				return
			}
		}
	}()
	stop = func() {
		signal.Stop(sigs)
		close(done)
		<-ended
		cancel(context.Canceled)
	}
	return ctx, aborted, stop
}
