package gpt

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
)

// Fixed limits on sizes, checked (with the memory a configuration needs,
// see CheckMemory) before anything is allocated: by Config.CheckLimits,
// Load and the tinygpt command. They bound every tensor below 2^31
// elements (safetensors shapes, int32 token positions) and keep sizes read
// from flags or files from overflowing the estimates.
const (
	MaxWidth     = 1 << 14 // Config.Width (w_fc is Width × 4·Width)
	MaxLayers    = 1024    // Config.Layers
	MaxHeads     = 1024    // Config.Heads
	MaxBlockSize = 1 << 15 // Config.BlockSize
	MaxVocab     = 1 << 16 // Config.Vocab: token ids are uint16
	MaxBatch     = 1 << 16 // TrainConfig.BatchSize
	MaxSteps     = 1e9     // TrainConfig.MaxIters
	MaxThreads   = 1024    // GOMAXPROCS a run may ask for
)

// fallbackMemory is the memory assumed available where the system reports
// none of its limits (no /proc/meminfo, no cgroup, no rlimit).
const fallbackMemory = 8 << 30

// CheckLimits reports the first field of c outside the fixed limits (or
// impossible, as Validate does), naming the field, its value and the
// limit.
func (c Config) CheckLimits() error {
	for _, f := range []struct {
		name   string
		v, max int
	}{
		{"Vocab", c.Vocab, MaxVocab}, {"BlockSize", c.BlockSize, MaxBlockSize},
		{"Layers", c.Layers, MaxLayers}, {"Heads", c.Heads, MaxHeads}, {"Width", c.Width, MaxWidth},
	} {
		if f.v > f.max {
			return fmt.Errorf("gpt: Config.%s = %d is above the limit of %d", f.name, f.v, f.max)
		}
	}
	return c.Validate()
}

// ModelBytes estimates the memory of a model of config c as Load or New
// make it: parameters and gradients, and with opt the optimizer's two
// moments (its decay spans are a few per layer, not counted). c must pass
// CheckLimits (the estimate is exact arithmetic on sizes that cannot
// overflow then).
func ModelBytes(c Config, opt bool) int64 {
	p := int64(c.NumParams())
	b := 2 * 4 * p
	if opt {
		b += 2 * 4 * p
	}
	return b
}

// TrainBytes estimates the memory of training a model of config c with
// batches of batch sequences on up to threads goroutines (GOMAXPROCS): the
// model with its optimizer, a gradient copy and the activations of every
// model replica (one per thread, at most batch), the attention layers'
// buffers and the batches. It errs on the high side, and saturates at
// math.MaxInt64 rather than overflowing.
func TrainBytes(c Config, batch, threads int) int64 {
	C, V, L, T, H := float64(c.Width), float64(c.Vocab), float64(c.Layers), float64(c.BlockSize), float64(max(c.Heads, 1))
	reps := float64(max(1, min(threads, batch)))
	b := float64(max(batch, 1))
	p := float64(c.NumParams())
	total := float64(ModelBytes(c, true)) + (reps-1)*4*p
	// Per replica, for its share of the batch (rounded up) of n rows.
	bi := math.Ceil(b / reps)
	n := bi * T
	floats := (L+1)*n*C + // residual stream
		L*(16*n*C+4*n) + // LayerNorms, attention output, MLP activations
		L*(4*n*C+bi*H*T*T+T*T*float64(max(threads, 1))) + // the heads' qkv and output, probabilities and scratch
		3*n*C + 2*n + n*V + // final LayerNorm, logits
		6*n*C // backward scratch
	total += reps * 4 * floats
	total += 4 * 4 * b * T // batches: x, y and the evaluation's
	return saturate(total)
}

// SampleBytes estimates the memory of sampling from a model of config c
// (the model without optimizer state, the KV caches and the sampler's
// scratch): SampleBytesWeights with float32 weights.
func SampleBytes(c Config) int64 { return SampleBytesWeights(c, WeightsF32) }

// SampleBytesWeights estimates the memory of sampling from a model of
// config c whose matrices are in format f (see InferenceBytes), with its
// KV caches (float32 ones; bf16 caches, Model.SetKVCache, hold half as
// much, and each layer adds a float32 copy of one head's cache per
// goroutine while it processes a prompt) and the sampler's scratch: per
// layer and goroutine (GOMAXPROCS) the scores of a block of 64 prompt
// rows against the context.
func SampleBytesWeights(c Config, f Weights) int64 {
	C, V, L, T := float64(c.Width), float64(c.Vocab), float64(c.Layers), float64(c.BlockSize)
	return saturate(float64(InferenceBytes(c, f)) + 4*(L*3*(T+16)*C+11*T*C+2*T+V) + drawScratchBytes(c.Vocab) + 4*decoderScores(c))
}

// decoderScores is the score workspace, in floats, of a sequence's
// decoders of config c: per layer and goroutine (GOMAXPROCS) the scores
// of a block of 64 prompt rows against the context.
func decoderScores(c Config) float64 {
	T := float64(c.BlockSize)
	return float64(c.Layers) * float64(runtime.GOMAXPROCS(0)) * math.Min(T, 64) * T
}

func saturate(x float64) int64 {
	if x >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(x)
}

// MemoryEnv names the environment variable that, for tests, sets the
// memory AvailableMemory reports: a number of bytes. Tests of the
// commands set it low to see a size refused that fits the machine.
const MemoryEnv = "SIMDGPT_TEST_MEMAVAILABLE"

// memLimit is one bound on the memory a new allocation can use: avail
// bytes, from what src names.
type memLimit struct {
	avail int64
	src   string
}

// AvailableMemory returns the memory a new allocation can use, in bytes,
// and where the figure comes from: the environment variable MemoryEnv
// when it is set to a number of bytes (for tests), else the least of the
// limits that bind the process: on Linux MemAvailable in /proc/meminfo,
// the memory cgroup's limit less its usage (cgroup v2 memory.max less
// memory.current, v1 memory.limit_in_bytes less memory.usage_in_bytes, in
// the process's cgroup and each of its parents), the soft RLIMIT_AS
// (ulimit -v) less the address space mapped and a margin for the Go
// runtime's own reservations, and the soft RLIMIT_DATA (ulimit -d) less
// the data mapped; and on every system a GOMEMLIMIT the user set, less
// the memory the Go runtime holds. Where the system reports none of its
// limits, a fixed cap of 8 GiB stands in for them. The source names the
// limit that binds, so that a refusal says what to raise.
func AvailableMemory() (int64, string) {
	if v, ok := os.LookupEnv(MemoryEnv); ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			return n, MemoryEnv + " in the environment"
		}
	}
	lims := systemLimits()
	if len(lims) == 0 {
		lims = append(lims, memLimit{fallbackMemory, "the fixed cap where the system does not report it"})
	}
	if l, ok := goMemLimit(); ok {
		lims = append(lims, l)
	}
	return leastLimit(lims)
}

// leastLimit returns the least of lims (at least one), negative figures
// (usage above a limit) taken as 0.
func leastLimit(lims []memLimit) (int64, string) {
	best := lims[0]
	for _, l := range lims[1:] {
		if l.avail < best.avail {
			best = l
		}
	}
	return max(best.avail, 0), best.src
}

// goMemLimit returns GOMEMLIMIT less the memory the Go runtime holds
// (mapped and not returned to the system), when a limit is set (by the
// environment variable or debug.SetMemoryLimit).
func goMemLimit() (memLimit, bool) {
	lim := debug.SetMemoryLimit(-1)
	if lim == math.MaxInt64 {
		return memLimit{}, false
	}
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	var held int64
	if s[0].Value.Kind() == metrics.KindUint64 && s[1].Value.Kind() == metrics.KindUint64 {
		held = int64(s[0].Value.Uint64() - s[1].Value.Uint64())
	}
	return memLimit{lim - held, "GOMEMLIMIT less the memory the Go runtime holds"}, true
}

// parseMemAvailable returns MemAvailable of /proc/meminfo's contents.
func parseMemAvailable(b []byte) (int64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == "MemAvailable:" {
			n, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil || n < 0 || n > 1<<53 {
				return 0, false
			}
			mult := int64(1)
			if len(f) >= 3 && string(f[2]) == "kB" {
				mult = 1024
			}
			return n * mult, true
		}
	}
	return 0, false
}

// CheckMemory returns an error saying what needs how much memory when need
// bytes are more than AvailableMemory reports, else nil.
func CheckMemory(what string, need int64) error {
	avail, src := AvailableMemory()
	if need > avail {
		return fmt.Errorf("%s needs about %s of memory, but only %s is available (%s)", what, FormatBytes(need), FormatBytes(avail), src)
	}
	return nil
}

// FormatBytes writes n with a binary unit: "512 B", "3.2 MiB", "17.0 GiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
