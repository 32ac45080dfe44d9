package data

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/rng"
)

func TestVocabRoundTrip(t *testing.T) {
	text := "héllo, wörld ∑ 世界\n"
	v, err := BuildVocab(text)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.Size(), len(map[rune]bool{'h': true, 'é': true, 'l': true, 'o': true, ',': true, ' ': true, 'w': true, 'ö': true, 'r': true, 'd': true, '∑': true, '世': true, '界': true, '\n': true}); got != want {
		t.Fatalf("Size = %d, want %d", got, want)
	}
	ids, err := v.Encode(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len([]rune(text)) {
		t.Fatalf("%d ids for %d characters", len(ids), len([]rune(text)))
	}
	if got := v.Decode(ids); got != text {
		t.Fatalf("Decode(Encode) = %q, want %q", got, text)
	}
	v2, err := ParseVocab(v.String())
	if err != nil {
		t.Fatal(err)
	}
	ids2, _ := v2.Encode(text)
	if !equalU16(ids, ids2) {
		t.Fatal("vocabulary rebuilt from String encodes differently")
	}
	if _, err := v.Encode("hollq"); err == nil || !strings.Contains(err.Error(), "'q'") {
		t.Fatalf("unknown character: err = %v, want one naming 'q'", err)
	}
	if got := v.Decode([]uint16{uint16(v.Size())}); got != "\uFFFD" {
		t.Fatalf("Decode of an out-of-range id = %q", got)
	}
}

func TestVocabErrors(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"empty", "", "empty"},
		{"invalid", "ab\xffc", "UTF-8"},
	} {
		if _, err := BuildVocab(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
	if _, err := ParseVocab("aba"); err == nil {
		t.Error("ParseVocab with a repeated character: no error")
	}
}

func equalU16(a, b []uint16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTokenFiles(t *testing.T) {
	toks := []uint16{0, 1, 65535, 300, 7}
	for _, llmc := range []bool{false, true} {
		b := EncodeTokens(toks, llmc)
		if IsLLMC(b) != llmc {
			t.Fatalf("llmc=%v: IsLLMC = %v", llmc, IsLLMC(b))
		}
		if llmc && len(b) != 1024+10 {
			t.Fatalf("llm.c file of 5 tokens is %d bytes, want 1034", len(b))
		}
		got, err := ParseTokens(b)
		if err != nil {
			t.Fatal(err)
		}
		if !equalU16(got, toks) {
			t.Fatalf("llmc=%v: round trip %v, want %v", llmc, got, toks)
		}
	}
	// llm.c header fields are checked.
	good := EncodeTokens(toks, true)
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"truncated header", good[:100], "header"},
		{"truncated body", good[:len(good)-2], "header says 5 tokens"},
		{"bad version", func() []byte { b := bytes.Clone(good); b[4] = 9; return b }(), "version 9"},
		{"odd raw", []byte{1, 2, 3}, "odd length"},
	} {
		if _, err := ParseTokens(c.b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to contain %q", c.name, err, c.want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	text := strings.Repeat("the quick brown fox jumps over the lazy dog. ", 20)
	d, err := Load(write("t.txt", []byte(text)), 16)
	if err != nil {
		t.Fatal(err)
	}
	if d.Vocab == nil || d.VocabSize != d.Vocab.Size() {
		t.Fatalf("text dataset: vocab %v size %d", d.Vocab, d.VocabSize)
	}
	n := len([]rune(text))
	if len(d.Train)+len(d.Val) != n || len(d.Val) != int(float64(n)*ValFraction) {
		t.Fatalf("split %d+%d of %d tokens", len(d.Train), len(d.Val), n)
	}
	if got := d.Vocab.Decode(d.Train) + d.Vocab.Decode(d.Val); got != text {
		t.Fatal("train+val do not decode to the text")
	}

	toks := make([]uint16, 1000)
	for i := range toks {
		toks[i] = uint16(i % 300)
	}
	for _, c := range []struct {
		name string
		llmc bool
	}{{"raw.bin", false}, {"llmc.dat", true}} {
		d, err := Load(write(c.name, EncodeTokens(toks, c.llmc)), 32)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d.Vocab != nil || d.VocabSize != 300 || len(d.Train) != 900 || !equalU16(append(d.Train[:900:900], d.Val...), toks) {
			t.Fatalf("%s: vocab size %d, %d+%d tokens", c.name, d.VocabSize, len(d.Train), len(d.Val))
		}
	}

	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty.txt", nil, "empty"},
		{"latin1.txt", []byte("caf\xe9 au lait, caf\xe9 au lait, caf\xe9 au lait"), "not valid UTF-8 text (invalid byte 0xe9 at offset 3)"},
		{"short.txt", []byte(strings.Repeat("abc", 20)), "too short"},
		{"short.bin", EncodeTokens(toks[:100], false), "too short"},
	} {
		p := write(c.name, c.b)
		_, err := Load(p, 16)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: err = %v, want it to name the file and contain %q", c.name, err, c.want)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing.txt"), 16); err == nil {
		t.Error("missing file: no error")
	}
}

func TestBatch(t *testing.T) {
	toks := make([]uint16, 500)
	for i := range toks {
		toks[i] = uint16(i)
	}
	const b, tt = 4, 8
	x, y := make([]int32, b*tt), make([]int32, b*tt)
	Batch(rng.New(1), toks, b, tt, x, y)
	for i := 0; i < b; i++ {
		for j := 0; j < tt; j++ {
			xi, yi := x[i*tt+j], y[i*tt+j]
			if yi != xi+1 || (j > 0 && xi != x[i*tt+j-1]+1) {
				t.Fatalf("row %d is not a window with its next tokens: x=%v y=%v", i, x[i*tt:(i+1)*tt], y[i*tt:(i+1)*tt])
			}
		}
	}
	x2, y2 := make([]int32, b*tt), make([]int32, b*tt)
	Batch(rng.New(1), toks, b, tt, x2, y2)
	for i := range x {
		if x[i] != x2[i] || y[i] != y2[i] {
			t.Fatal("same seed gave different batches")
		}
	}
	Batch(rng.New(2), toks, b, tt, x2, y2)
	same := true
	for i := range x {
		same = same && x[i] == x2[i]
	}
	if same {
		t.Fatal("seeds 1 and 2 gave the same batch")
	}
	// The last window (starting at len-t-1) is reachable and none overruns.
	r := rng.New(3)
	x1, y1 := make([]int32, tt), make([]int32, tt)
	short := toks[:tt+1]
	Batch(r, short, 1, tt, x1, y1)
	if x1[0] != 0 || y1[tt-1] != int32(tt) {
		t.Fatalf("only window of a t+1 stream: x=%v y=%v", x1, y1)
	}
}

func TestSynthetic(t *testing.T) {
	s := Synthetic(20000, 1)
	if s != Synthetic(20000, 1) {
		t.Fatal("Synthetic is not deterministic")
	}
	if s == Synthetic(20000, 2) {
		t.Fatal("seeds 1 and 2 give the same corpus")
	}
	v, err := BuildVocab(s)
	if err != nil || v.Size() != 27 {
		t.Fatalf("vocabulary: %v, size %d, want 27", err, v.Size())
	}
	// The fraction of symbols that follow the rule is 1-noise (+ noise/27 by
	// chance); count it directly from the definition.
	idx := func(c byte) int { return strings.IndexByte(SyntheticSymbols, c) }
	follow := 0
	for i := 8; i < len(s); i++ {
		want := idx(s[i-2])/9*9 + idx(s[i-4])/3%3*3 + idx(s[i-8])%3
		if idx(s[i]) == want {
			follow++
		}
	}
	frac := float64(follow) / float64(len(s)-8)
	if want := 1 - SyntheticNoise + SyntheticNoise/27; frac < want-0.01 || frac > want+0.01 {
		t.Fatalf("%.3f of symbols follow the rule, want about %.3f", frac, want)
	}
}

func ExampleVocab() {
	v, _ := BuildVocab("hello")
	ids, _ := v.Encode("hole")
	fmt.Println(v.String(), ids, v.Decode(ids))
	// Output: ehlo [1 3 2 0] hole
}
