//go:build unix

package interrupt

import (
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// keepUSR1 catches SIGUSR1 on a channel of the test's own for the whole
// test, so that a signal delivered while no Watch catches it does not end
// the process.
func keepUSR1(t *testing.T) {
	keep := make(chan os.Signal, 1)
	signal.Notify(keep, syscall.SIGUSR1)
	t.Cleanup(func() { signal.Stop(keep) })
}

func send(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5 s", what)
		}
	}
}

// TestSequence sends signals to the process and checks, for each way of
// setting up the watch, what the first and the later ones do.
func TestSequence(t *testing.T) {
	keepUSR1(t)
	for _, c := range []struct {
		name      string
		again     bool // Start with an again function
		clear     bool // SetAgain(nil) before the signals
		hold      bool // a Hold in force during the second signal
		wantAgain int  // calls of again after the second and third signals
	}{
		{"again", true, false, false, 1},
		{"no again", false, false, false, 0},
		{"again cleared", true, true, false, 0},
		{"held", true, false, true, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := make(chan os.Signal, 4)
			var again func(os.Signal)
			if c.again {
				again = func(s os.Signal) { calls <- s }
			}
			w := start(again, syscall.SIGUSR1)
			defer w.Stop()
			if c.clear {
				w.SetAgain(nil)
			}
			if w.Signal() != nil || w.Context().Err() != nil {
				t.Fatal("cancelled before any signal")
			}
			send(t)
			waitFor(t, "the first signal cancels the context", func() bool { return w.Context().Err() != nil })
			if w.Signal() != syscall.SIGUSR1 {
				t.Fatalf("Signal() = %v, want SIGUSR1", w.Signal())
			}
			if len(calls) != 0 {
				t.Fatal("the first signal called again")
			}
			var release func()
			if c.hold {
				release = w.Hold()
			}
			send(t)
			if c.hold {
				time.Sleep(50 * time.Millisecond)
				if len(calls) != 0 {
					t.Fatal("a signal during a Hold called again before the release")
				}
				release()
				release() // a second call does nothing
			}
			send(t)
			if c.wantAgain > 0 {
				waitFor(t, "again is called", func() bool { return len(calls) > 0 })
			}
			time.Sleep(50 * time.Millisecond)
			if len(calls) != c.wantAgain {
				t.Fatalf("again called %d times, want %d", len(calls), c.wantAgain)
			}
		})
	}
}

// TestStopRace: signals arriving while a watch stops never reach a closed
// channel (a "send on closed channel" panic if the channel were closed
// before the delivery stopped).
func TestStopRace(t *testing.T) {
	keepUSR1(t)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			default:
				syscall.Kill(os.Getpid(), syscall.SIGUSR1)
			}
		}
	}()
	deadline := time.Now().Add(500 * time.Millisecond)
	n := 0
	for ; time.Now().Before(deadline); n++ {
		w := start(nil, syscall.SIGUSR1)
		for w.Context().Err() == nil && time.Now().Before(deadline) {
			time.Sleep(10 * time.Microsecond)
		}
		w.Stop()
	}
	close(done)
	if n < 10 {
		t.Errorf("only %d watches in 500 ms", n)
	}
}

func TestExitStatus(t *testing.T) {
	for _, c := range []struct {
		sig  os.Signal
		want int
		name string
	}{
		{os.Interrupt, 130, "SIGINT"},
		{syscall.SIGTERM, 143, "SIGTERM"},
	} {
		if got := ExitStatus(c.sig); got != c.want {
			t.Errorf("ExitStatus(%v) = %d, want %d", c.sig, got, c.want)
		}
		if got := Name(c.sig); got != c.name {
			t.Errorf("Name(%v) = %q, want %q", c.sig, got, c.name)
		}
	}
}
