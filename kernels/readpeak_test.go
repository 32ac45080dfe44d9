package kernels

import (
	"math"
	"strings"
	"testing"
)

// TestReadPeakLoop checks that ReadPeakLoop reads what it says on every
// implementation: with a read loop, the whole 1 KiB blocks of x (its sum
// that of those elements), otherwise all of x with Sum; x shorter than a
// block is read with Sum.
func TestReadPeakLoop(t *testing.T) {
	for _, p := range Implementations() {
		for _, n := range []int{0, 1, 255, 256, 257, 1000, 4096, 70000} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(i%13) - 6
			}
			got := p.ReadPeakLoop(x)
			want, read := 4*n, n
			if s := p.set.Instruments; s.ReadLoop != nil && n >= s.ReadBlock {
				read = n / s.ReadBlock * s.ReadBlock
				want = 4 * read
			}
			if got != want {
				t.Errorf("%s n=%d: %d bytes read, want %d", p.Name(), n, got, want)
			}
			var sum float64
			for _, v := range x[:read] {
				sum += float64(v)
			}
			if math.Abs(float64(readSink)-sum) > 1e-3*(1+math.Abs(sum)) {
				t.Errorf("%s n=%d: the loop's sum %v, want %v", p.Name(), n, readSink, sum)
			}
		}
	}
}

// TestReadStreamsLoop checks that ReadStreamsLoop reads what it says on
// every implementation: with a streams loop, the first whole blocks of
// each of the streams equal runs (its sum that of those elements),
// otherwise all of x with Sum.
func TestReadStreamsLoop(t *testing.T) {
	for _, p := range Implementations() {
		for _, n := range []int{0, 1, 63, 64, 127, 128, 1000, 4096, 70001} {
			for _, streams := range []int{1, 2, 3, 4, 8} {
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(i%13) - 6
				}
				got := p.ReadStreamsLoop(x, streams)
				var sum float64
				want := 4 * n
				if s := p.set.Instruments; s.StreamsLoop != nil && n/streams >= s.StreamsBlock {
					run := n / streams / s.StreamsBlock * s.StreamsBlock
					want = 4 * run * streams
					for k := range streams {
						for _, v := range x[k*run : k*run+run] {
							sum += float64(v)
						}
					}
				} else {
					for _, v := range x {
						sum += float64(v)
					}
				}
				if got != want {
					t.Errorf("%s n=%d streams=%d: %d bytes read, want %d", p.Name(), n, streams, got, want)
				}
				if math.Abs(float64(readSink)-sum) > 1e-3*(1+math.Abs(sum)) {
					t.Errorf("%s n=%d streams=%d: the loop's sum %v, want %v", p.Name(), n, streams, readSink, sum)
				}
			}
		}
	}
}

// TestReadStreamsLoopPanics checks that streams < 1 panics, naming the
// method and the argument.
func TestReadStreamsLoopPanics(t *testing.T) {
	for _, streams := range []int{0, -1} {
		func() {
			defer func() {
				r := recover()
				if s, ok := r.(string); !ok || !strings.Contains(s, "ReadStreamsLoop") || !strings.Contains(s, "streams = ") {
					t.Errorf("streams=%d: panic %v, want one naming ReadStreamsLoop and streams", streams, r)
				}
			}()
			Default().ReadStreamsLoop(make([]float32, 256), streams)
		}()
	}
}
