package data

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadRefuses: files Load must refuse with a message naming them
// rather than read (a device or a FIFO), or read as something they are not
// (an llm.c file with a wrong magic number as raw tokens).
func TestLoadRefuses(t *testing.T) {
	dir := t.TempDir()
	toks := make([]uint16, 1000)
	for i := range toks {
		toks[i] = uint16(i % 50)
	}
	badMagic := EncodeTokens(toks, true)
	binary.LittleEndian.PutUint32(badMagic, 20240521)
	model := EncodeTokens(toks, true)
	binary.LittleEndian.PutUint32(model, 20240326)
	huge := filepath.Join(dir, "huge.txt")
	if err := os.WriteFile(huge, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, MaxFileBytes+1); err != nil { // sparse: no disk used
		t.Skipf("cannot make a sparse file: %v", err)
	}
	cases := []struct {
		name string
		b    []byte // nil: the path exists already
		want string
	}{
		{"bad_magic.bin", badMagic, "looks like an llm.c token file (version 1, 1000 tokens"},
		{"bad_magic.tok", badMagic, "magic number is 20240521, not 20240520"},
		{"model.bin", model, "llm.c model checkpoint"},
		{"model.dat", model, ""}, // not .bin/.tok: read as text, which it is not
		{"subdir", nil, "not a regular file (a directory)"},
		{"huge.txt", nil, "more than the limit"},
	}
	if err := os.Mkdir(filepath.Join(dir, "subdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		p := filepath.Join(dir, c.name)
		if c.b != nil {
			if err := os.WriteFile(p, c.b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		d, err := Load(p, 16)
		if err == nil || d != nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), p+": ") {
			t.Errorf("%s: Load = %v; want an error starting with the path and containing %q", c.name, err, c.want)
		}
	}
	// A raw token file whose first tokens happen not to look like a header
	// still loads.
	if _, err := Load(filepath.Join(dir, "raw.bin"), 16); err == nil {
		t.Error("missing file: no error")
	}
	raw := filepath.Join(dir, "raw.bin")
	os.WriteFile(raw, EncodeTokens(toks, false), 0o644)
	if d, err := Load(raw, 16); err != nil || d.VocabSize != 50 {
		t.Errorf("raw token file: %v", err)
	}
}

// FuzzParse feeds arbitrary bytes as every kind of data file: never a
// panic, and a dataset is only returned with both splits long enough and
// every token inside its vocabulary.
func FuzzParse(f *testing.F) {
	toks := make([]uint16, 200)
	for i := range toks {
		toks[i] = uint16(i * 7 % 31)
	}
	bad := EncodeTokens(toks, true)
	binary.LittleEndian.PutUint32(bad, 1)
	f.Add(EncodeTokens(toks, true), "a.dat")
	f.Add(EncodeTokens(toks, false), "a.bin")
	f.Add(bad, "a.bin")
	f.Add(EncodeTokens(toks[:3], true), "a.tok")
	f.Add([]byte(strings.Repeat("hello, world ", 10)), "a.txt")
	f.Add([]byte("caf\xe9"), "a.txt")
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		const block = 4
		d, err := Parse(b, name, block)
		if err != nil {
			if d != nil {
				t.Fatal("dataset and error")
			}
			return
		}
		if len(d.Train) < block+1 || len(d.Val) < block+1 || d.VocabSize < 1 || d.VocabSize > MaxVocab {
			t.Fatalf("%d+%d tokens, vocabulary %d", len(d.Train), len(d.Val), d.VocabSize)
		}
		for _, s := range [][]uint16{d.Train, d.Val} {
			for _, tok := range s {
				if int(tok) >= d.VocabSize {
					t.Fatalf("token %d outside the vocabulary of %d", tok, d.VocabSize)
				}
			}
		}
		if d.Vocab != nil && d.Vocab.Decode(d.Train)+d.Vocab.Decode(d.Val) != string(b) {
			t.Fatal("text does not decode back")
		}
	})
}

// FuzzParseTokens: never a panic; what decodes encodes back to the same
// bytes.
func FuzzParseTokens(f *testing.F) {
	f.Add(EncodeTokens([]uint16{1, 2, 3}, true))
	f.Add(EncodeTokens([]uint16{1, 2, 3}, false))
	f.Add([]byte{0x58, 0xf0, 0x34, 0x01, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		toks, err := ParseTokens(b)
		if err != nil {
			return
		}
		// llm.c's header: the words after the token count are not kept.
		if got := EncodeTokens(toks, IsLLMC(b)); IsLLMC(b) && (string(got[:12]) != string(b[:12]) || string(got[llmcHeaderLen:]) != string(b[llmcHeaderLen:])) || !IsLLMC(b) && string(got) != string(b) {
			t.Fatalf("%d tokens do not encode back to the %d bytes", len(toks), len(b))
		}
	})
}
