package gpt

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/gpt/safetensors"
)

// tinyCheckpoint returns the bytes of a checkpoint of a very small model
// after one training step, and its vocabulary.
func tinyCheckpoint(t testing.TB, extra map[string]string) []byte {
	t.Helper()
	d, err := data.FromText(strings.Repeat("abcab", 12), 2)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Config{Vocab: d.VocabSize, BlockSize: 2, Layers: 1, Heads: 1, Width: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTrainer(m, d, DefaultTrainConfig(2, 10, 1e-2, 1))
	if err != nil {
		t.Fatal(err)
	}
	tr.TrainStep()
	path := filepath.Join(t.TempDir(), CheckpointFile)
	if err := tr.SaveWith(path, d.Vocab, extra); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// skipByte reports whether the every-bit tests leave byte i of a file
// alone: under -short (CI's emulated architectures run those) they flip
// the first KiB (the header's length and most of its JSON) whole and every
// 7th byte after it.
func skipByte(i int) bool { return testing.Short() && i >= 1024 && i%7 != 0 }

// TestCheckpointEveryBitCovered flips every bit of a small checkpoint in
// turn (every 7th byte past the header under -short) (header length, config, step, vocabulary, generator state,
// training settings, tensors): each must fail to load, with an error.
func TestCheckpointEveryBitCovered(t *testing.T) {
	good := tinyCheckpoint(t, map[string]string{"tinygpt.run": `{"threads":1}`})
	if _, err := decodeCheckpoint(good); err != nil {
		t.Fatal(err)
	}
	for i := range good {
		if skipByte(i) {
			continue
		}
		for bit := 0; bit < 8; bit++ {
			b := append([]byte(nil), good...)
			b[i] ^= 1 << bit
			ck, err := decodeCheckpoint(b)
			if err == nil || ck != nil {
				t.Fatalf("byte %d (%q) bit %d flipped: loaded without error", i, good[i], bit)
			}
			// The damage is reported as such (the checksum is verified
			// while the tensors are read, its error first).
			if _, want := safetensors.Verify(b); want == nil || err.Error() != want.Error() {
				t.Fatalf("byte %d (%q) bit %d flipped: %v, want the checksum's error %v", i, good[i], bit, err, want)
			}
		}
	}
}

// rewrite decodes a checkpoint, lets edit change its metadata, and encodes
// it again with a valid checksum (a file edited by hand, or written by a
// buggy tool).
func rewrite(t *testing.T, b []byte, edit func(meta map[string]string)) []byte {
	t.Helper()
	ts, meta, err := safetensors.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	edit(meta)
	out, err := safetensors.Encode(ts, meta)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLoadChecksSizesFirst: a config or training setting edited to an
// absurd size is an error before anything of that size is allocated.
func TestLoadChecksSizesFirst(t *testing.T) {
	good := tinyCheckpoint(t, nil)
	setConfig := func(key string, v int) func(map[string]string) {
		return func(meta map[string]string) {
			var c map[string]int
			json.Unmarshal([]byte(meta[MetaConfig]), &c)
			c[key] = v
			js, _ := json.Marshal(c)
			meta[MetaConfig] = string(js)
		}
	}
	setTrain := func(key string, v int) func(map[string]string) {
		return func(meta map[string]string) {
			var c map[string]any
			json.Unmarshal([]byte(meta[MetaTrain]), &c)
			c[key] = v
			js, _ := json.Marshal(c)
			meta[MetaTrain] = string(js)
		}
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		edit func(map[string]string)
		want string
	}{
		{"width 1e9", setConfig("width", 1e9), "Config.Width = 1000000000 is above the limit of 16384"},
		{"layers 1e8", setConfig("layers", 1e8), "Config.Layers = 100000000 is above the limit of 1024"},
		{"block 1e9", setConfig("block_size", 1e9), "Config.BlockSize = 1000000000 is above the limit"},
		{"vocab 1e6", setConfig("vocab", 1e6), "Config.Vocab = 1000000 is above the limit"},
		{"width at the limit", setConfig("width", MaxWidth), `tensor "wte" has shape [3 2], the config needs [3 16384]`},
		{"layers at the limit", setConfig("layers", MaxLayers), `tensor "h.1.ln1.w" is missing`},
		{"negative width", setConfig("width", -5), "Config.Width = -5"},
		{"batch 1e9", setTrain("batch_size", 1e9), "batch size 1000000000"},
		{"max_iters 0", setTrain("max_iters", 0), "max iterations 0"},
		{"step", func(m map[string]string) { m[MetaStep] = "-1" }, "bad step"},
		{"format", func(m map[string]string) { m[MetaFormat] = "other/1" }, "not a TinyGPT checkpoint"},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
		if err := os.WriteFile(p, rewrite(t, good, c.edit), 0o644); err != nil {
			t.Fatal(err)
		}
		ck, err := Load(p)
		if err == nil || ck != nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: Load = %v; want an error naming the file and containing %q", c.name, err, c.want)
		}
	}
}

// TestLegacyCheckpoint: a checkpoint with only the data checksum of older
// versions loads, with a warning; saved again it has the full checksum.
func TestLegacyCheckpoint(t *testing.T) {
	good := tinyCheckpoint(t, nil)
	hl := binary.LittleEndian.Uint64(good)
	var header map[string]any
	if err := json.Unmarshal(good[8:8+hl], &header); err != nil {
		t.Fatal(err)
	}
	data := good[8+hl:]
	meta := header["__metadata__"].(map[string]any)
	delete(meta, safetensors.ChecksumKey)
	meta[safetensors.DataChecksumKey] = strconv.FormatUint(uint64(crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli))), 10)
	js, _ := json.Marshal(header)
	legacy := binary.LittleEndian.AppendUint64(nil, uint64(len(js)))
	legacy = append(append(legacy, js...), data...)
	ck, err := decodeCheckpoint(legacy)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ck.Warning, "older version") || ck.Step != 1 {
		t.Errorf("legacy checkpoint: warning %q step %d", ck.Warning, ck.Step)
	}
	ck2, err := decodeCheckpoint(good)
	if err != nil || ck2.Warning != "" {
		t.Errorf("current checkpoint: %v, warning %q", err, ck2.Warning)
	}
}

func TestSaveWithExtra(t *testing.T) {
	b := tinyCheckpoint(t, map[string]string{"tinygpt.run": `{"threads":3}`})
	ck, err := decodeCheckpoint(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(ck.Extra) != 1 || ck.Extra["tinygpt.run"] != `{"threads":3}` {
		t.Errorf("Extra = %v", ck.Extra)
	}
	tr, err := ck.Resume(&data.Dataset{Vocab: ck.Vocab, VocabSize: 3, Train: make([]uint16, 10), Val: make([]uint16, 10)})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{MetaStep, safetensors.ChecksumKey} {
		if err := tr.SaveWith(filepath.Join(t.TempDir(), "x"), ck.Vocab, map[string]string{k: "1"}); err == nil || !strings.Contains(err.Error(), "reserved") {
			t.Errorf("SaveWith with key %q: %v, want 'reserved'", k, err)
		}
	}
}

func TestLimitsAndMemory(t *testing.T) {
	ok := Config{Vocab: 27, BlockSize: 32, Layers: 2, Heads: 1, Width: 64}
	if err := ok.CheckLimits(); err != nil {
		t.Fatal(err)
	}
	// The default run: 105627 parameters, well under 100 MiB in all.
	if b := TrainBytes(ok, 16, 2); b < 17*int64(ok.NumParams()) || b > 100<<20 {
		t.Errorf("TrainBytes of the default run = %d", b)
	}
	huge := Config{Vocab: MaxVocab, BlockSize: MaxBlockSize, Layers: MaxLayers, Heads: MaxHeads, Width: MaxWidth}
	if err := huge.CheckLimits(); err != nil {
		t.Fatal(err)
	}
	if b := TrainBytes(huge, MaxBatch, MaxThreads); b <= 1<<50 {
		t.Errorf("TrainBytes at every limit = %d, want saturated", b)
	}
	if err := CheckMemory("this", TrainBytes(huge, MaxBatch, MaxThreads)); err == nil || !strings.Contains(err.Error(), "this needs about") {
		t.Errorf("CheckMemory: %v", err)
	}
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"MemTotal:  100 kB\nMemAvailable:    2048 kB\n", 2 << 20, true},
		{"MemTotal:  100 kB\n", 0, false},
		{"MemAvailable: x kB\n", 0, false},
	} {
		if got, ok := parseMemAvailable([]byte(c.in)); got != c.want || ok != c.ok {
			t.Errorf("parseMemAvailable(%q) = %d, %v", c.in, got, ok)
		}
	}
	for n, want := range map[int64]string{512: "512 B", 3 << 20: "3.0 MiB", 17 << 30: "17.0 GiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestLoadMemoryEstimate: the memory Load checks before reading a
// checkpoint covers what it then allocates, with or without optimizer
// state (a checkpoint without it decodes to a model twice its tensors'
// size: four times the file in all), and is not far above it; a
// checkpoint that does not fit is refused naming the file.
func TestLoadMemoryEstimate(t *testing.T) {
	cfg := Config{Vocab: 27, BlockSize: 32, Layers: 2, Heads: 2, Width: 64}
	m, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	d, err := data.FromText(strings.Repeat("abcdefghijklmnopqrstuvwxyz.", 20), cfg.BlockSize)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTrainer(m, d, DefaultTrainConfig(2, 10, 1e-2, 1))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	withOpt := filepath.Join(dir, "opt.safetensors")
	if err := tr.Save(withOpt, d.Vocab); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(withOpt)
	if err != nil {
		t.Fatal(err)
	}
	ts, meta, err := safetensors.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	var params []safetensors.Tensor
	for _, x := range ts {
		if x.Name != optMPrefix && x.Name != optVPrefix {
			params = append(params, x)
		}
	}
	delete(meta, safetensors.ChecksumKey)
	noOptBytes, err := safetensors.Encode(params, meta)
	if err != nil {
		t.Fatal(err)
	}
	noOpt := filepath.Join(dir, "noopt.safetensors")
	if err := os.WriteFile(noOpt, noOptBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path    string
		keepOpt bool // Load, else LoadForInference
	}{{withOpt, true}, {withOpt, false}, {noOpt, true}, {noOpt, false}} {
		path, name := c.path, fmt.Sprintf("%s (keepOpt %v)", filepath.Base(c.path), c.keepOpt)
		load := LoadForInference
		if c.keepOpt {
			load = Load
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		est := loadBytes(f, st.Size(), c.keepOpt)
		f.Close()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ck, err := load(path)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if (ck.Opt != nil) != (path == withOpt && c.keepOpt) {
			t.Fatalf("%s: optimizer state %v", name, ck.Opt != nil)
		}
		alloc := int64(after.TotalAlloc - before.TotalAlloc)
		// Besides what grows with the file: reading /proc/meminfo, small
		// maps.
		const fixed = 256 << 10
		if est+fixed < alloc || float64(est) > 1.1*float64(alloc) {
			t.Errorf("%s (%d bytes): estimated %d bytes, Load allocated %d", name, st.Size(), est, alloc)
		}
		t.Setenv(MemoryEnv, strconv.FormatInt(est-1, 10))
		if ck, err := load(path); ck != nil || err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "needs about") {
			t.Errorf("%s with %d bytes available: %v", name, est-1, err)
		}
		os.Unsetenv(MemoryEnv)
	}
}

// TestLoadForInference: LoadForInference returns Load's checkpoint but
// for the optimizer state, which it does not keep; a byte flipped
// anywhere, in the moments it does not keep too, is Load's error.
func TestLoadForInference(t *testing.T) {
	good := tinyCheckpoint(t, map[string]string{"tinygpt.run": `{"threads":1}`})
	dir := t.TempDir()
	path := filepath.Join(dir, "ck.safetensors")
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	full, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	inf, err := LoadForInference(path)
	if err != nil {
		t.Fatal(err)
	}
	if full.Opt == nil || inf.Opt != nil {
		t.Fatalf("optimizer state: Load %v, LoadForInference %v", full.Opt != nil, inf.Opt != nil)
	}
	if !slices.Equal(f32Bytes(full.Model.Params), f32Bytes(inf.Model.Params)) || full.Step != inf.Step ||
		full.Vocab.String() != inf.Vocab.String() || fmt.Sprint(full.Extra) != fmt.Sprint(inf.Extra) || full.Train != inf.Train {
		t.Fatal("LoadForInference's checkpoint differs from Load's")
	}
	for _, c := range []struct {
		name string
		at   int
	}{{"header", 9}, {"first parameter", len(good) - 3*4*full.Model.Config.NumParams()}, {"first moment", len(good) - 2*4*full.Model.Config.NumParams() + 5}, {"last byte", len(good) - 1}} {
		b := slices.Clone(good)
		b[c.at] ^= 0x20
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, want := Load(path)
		ck, err := LoadForInference(path)
		if want == nil || err == nil || ck != nil || err.Error() != want.Error() || !strings.Contains(err.Error(), "checksum") {
			t.Errorf("%s (byte %d) flipped: LoadForInference %v, Load %v", c.name, c.at, err, want)
		}
	}
}
