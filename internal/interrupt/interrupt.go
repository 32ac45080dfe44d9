// Package interrupt lets a command stop its work cleanly when SIGINT
// (Ctrl-C) or SIGTERM arrives: the first signal cancels a context that the
// work checks at its own boundaries (a batch, a training step, a token, a
// benchmark sample), so the command saves what it has and exits with a
// message of its own. A later signal ends the process at once through the
// command's Again function, unless the command has none (its work must
// not be lost: later signals are then ignored) or holds the watch (see
// Hold: the signal takes effect when the hold is released).
package interrupt

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Signals are the signals a Watch catches.
var Signals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// Watch catches Signals from Start until Stop.
type Watch struct {
	ctx    context.Context
	cancel context.CancelFunc
	ch     chan os.Signal
	done   chan struct{}
	sigs   []os.Signal
	// ignoreLate: Stop after a signal ignores later ones instead of
	// restoring their default action (see Stop).
	ignoreLate bool

	mu      sync.Mutex
	first   os.Signal       // the signal that cancelled ctx
	again   func(os.Signal) // called on a later signal; nil: ignore it
	holds   int             // Holds in force
	pending os.Signal       // a later signal waiting for the holds' release
	fired   bool            // again was called
}

// Start catches Signals until Stop. again, when not nil, is called once,
// on its own goroutine, with the first signal that arrives after the one
// that cancelled the context, and is meant to end the process.
func Start(again func(os.Signal)) *Watch {
	w := start(again, Signals...)
	w.ignoreLate = true
	return w
}

func start(again func(os.Signal), sigs ...os.Signal) *Watch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &Watch{ctx: ctx, cancel: cancel, ch: make(chan os.Signal, 2), done: make(chan struct{}), again: again, sigs: sigs}
	signal.Notify(w.ch, sigs...)
	go func() {
		defer close(w.done)
		for sig := range w.ch {
			w.deliver(sig)
		}
	}()
	return w
}

// deliver handles one caught signal.
func (w *Watch) deliver(sig os.Signal) {
	w.mu.Lock()
	if w.first == nil {
		w.first = sig
		w.mu.Unlock()
		w.cancel()
		return
	}
	if w.holds > 0 {
		if w.pending == nil {
			w.pending = sig
		}
		w.mu.Unlock()
		return
	}
	w.fire(sig) // unlocks
}

// fire calls again with sig once, if it is set; w.mu is held on entry and
// released.
func (w *Watch) fire(sig os.Signal) {
	f := w.again
	if f == nil || w.fired {
		w.mu.Unlock()
		return
	}
	w.fired = true
	w.mu.Unlock()
	f(sig)
}

// Context is cancelled by the first signal.
func (w *Watch) Context() context.Context { return w.ctx }

// Signal returns the signal that cancelled the context, nil if none has
// arrived.
func (w *Watch) Signal() os.Signal {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.first
}

// SetAgain replaces the function called on a later signal (nil: later
// signals are ignored). A later signal that arrived while it was nil is
// not replayed.
func (w *Watch) SetAgain(again func(os.Signal)) {
	w.mu.Lock()
	w.again = again
	w.mu.Unlock()
}

// Hold defers the effect of later signals until the returned function is
// called (once): a save in progress completes before the process ends.
func (w *Watch) Hold() (release func()) {
	w.mu.Lock()
	w.holds++
	w.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			w.holds--
			if w.holds == 0 && w.pending != nil {
				sig := w.pending
				w.pending = nil
				w.fire(sig) // unlocks
				return
			}
			w.mu.Unlock()
		})
	}
}

// Stop ends the watch before the delivery channel is closed, so a late
// signal is never sent on a closed channel. If no signal has arrived, the
// signals' default actions are restored. If one has, the command is on its
// way out after saving its work: a Watch made by Start then ignores later
// signals instead, so that a flood of them cannot end the process by the
// signal before it exits with its own status. The context stays as it is.
func (w *Watch) Stop() {
	if w.ignoreLate && w.Signal() != nil {
		signal.Ignore(w.sigs...)
	}
	signal.Stop(w.ch)
	close(w.ch)
	<-w.done
}

// ExitStatus is the exit status of a command that stopped on sig: 128
// plus the signal's number, as a shell reports a process the signal
// ended (130 for SIGINT, 143 for SIGTERM).
func ExitStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 128 + int(syscall.SIGINT)
}

// Name returns the usual name of sig: "SIGINT", "SIGTERM".
func Name(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}
