package data

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/bpe"
	"github.com/simdgpt/simdgpt/internal/memtest"
)

// TestEncodeBPERuns checks that encoding runs of whole pre-tokens gives
// EncodeWithSpecial's tokens, on random texts several runs long whose
// pre-tokens (white space before letters, long runs) straddle the runs'
// ends.
func TestEncodeBPERuns(t *testing.T) {
	tok := smallBPE(t)
	r := rand.New(rand.NewPCG(1, 2))
	parts := []string{"hello", " ", "  ", "\n", "\t", "h", "e", "l", "!", "7", "é", bpe.EndOfText, strings.Repeat(" ", 300), strings.Repeat("hel", 200), "'s", "\xff"}
	for i := range 6 {
		var b strings.Builder
		for b.Len() < 3*bpeChunk+i*1000 {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		text := b.String()
		want := tok.EncodeWithSpecial(text)
		got := encodeBPE(tok, text)
		if len(got) != len(want) || !slices.EqualFunc(got, want, func(a uint16, b int) bool { return int(a) == b }) {
			t.Fatalf("text %d (%d bytes): encoding runs gives %d tokens unlike EncodeWithSpecial's %d", i, len(text), len(got), len(want))
		}
	}
}

// TestReadMemoryBound measures the memory reading a data file takes at
// its peak, for adversarial texts tokenized with BPE and by characters,
// and checks it against the estimates: TextBytes of the file's size for
// reading it (all it takes by characters), Encoding.Bytes of its text
// for encoding it.
func TestReadMemoryBound(t *testing.T) {
	n := 1 << 20
	r := rand.New(rand.NewPCG(3, 4))
	random := func(alphabet []string) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	dir := t.TempDir()
	bpeEnc, err := BPEEncoding(smallBPE(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"one letter":      strings.Repeat("h", n),
		"one digit":       strings.Repeat("7", n),
		"spaces":          strings.Repeat(" ", n),
		"punctuation":     strings.Repeat("!", n),
		"random letters":  random([]string{"h", "e", "l", "o"}),
		"short words":     random([]string{"h", "e", "l", "o", " ", "\n", "é", "!", "7"}),
		"many characters": random([]string{"a", "é", "ж", "中", "😀", "\u00a0", " "}),
	} {
		path := filepath.Join(dir, "data.txt")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		size := int64(len(text))
		var toks []uint16
		grew := memtest.PeakGrowth(func() { toks, err = ReadEncoded(path, bpeEnc) })
		if est := max(TextBytes(size), bpeEnc.Bytes(text)); err != nil || grew > est {
			t.Errorf("%s, BPE: %d tokens (%v); the memory grew by %d bytes at its peak, above the estimate of %d", name, len(toks), err, grew, est)
		}
		var d *Dataset
		grew = memtest.PeakGrowth(func() { d, err = Load(path, 8) })
		if est := TextBytes(size); err != nil || grew > est {
			t.Errorf("%s, characters: %v; the memory grew by %d bytes at its peak, above TextBytes' %d", name, err, grew, est)
		}
		if err == nil {
			grew = memtest.PeakGrowth(func() { toks, err = ReadEncoded(path, CharEncoding(d.Vocab)) })
			if est := max(TextBytes(size), charBytes(text)); err != nil || grew > est {
				t.Errorf("%s, a fixed character vocabulary: %v; the memory grew by %d bytes at its peak, above the estimate of %d", name, err, grew, est)
			}
		}
	}
}
