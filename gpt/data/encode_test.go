package data

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/gpt/bpe"
)

// smallBPE returns a tokenizer whose ids 0..255 are the single bytes,
// 256 is "he", 257 "hel", 258 "hell", 259 "hello", 260 the end-of-text
// token.
func smallBPE(t *testing.T) *bpe.Tokenizer {
	t.Helper()
	vocab := map[string]int{}
	for b := range 256 {
		vocab[string(bpe.ByteRune(byte(b)))] = b
	}
	for i, tok := range []string{"he", "hel", "hell", "hello", bpe.EndOfText} {
		vocab[tok] = 256 + i
	}
	ej, _ := json.Marshal(vocab)
	tok, err := bpe.Load(strings.NewReader(string(ej)), strings.NewReader("#version: 0.2\nh e\nhe l\nhel l\nhell o\n"))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestReadEncoded(t *testing.T) {
	dir := t.TempDir()
	tok := smallBPE(t)
	bpeEnc, err := BPEEncoding(tok)
	if err != nil {
		t.Fatal(err)
	}
	chars, err := ParseVocab("ehlo ")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name    string
		file    string
		enc     Encoding
		want    []uint16
		wantErr string
	}{
		{"bpe text", write("a.txt", []byte("hello he<|endoftext|>x")), bpeEnc, []uint16{259, ' ', 256, 260, 'x'}, ""},
		{"chars text", write("b.txt", []byte("hello oh")), CharEncoding(chars), []uint16{1, 0, 2, 2, 3, 4, 3, 1}, ""},
		{"chars outside", write("c.txt", []byte("help")), CharEncoding(chars), nil, "'p'"},
		{"token file", write("d.tok", EncodeTokens([]uint16{3, 260, 0}, false)), bpeEnc, []uint16{3, 260, 0}, ""},
		{"llm.c tokens", write("e.dat", EncodeTokens([]uint16{7, 8}, true)), bpeEnc, []uint16{7, 8}, ""},
		{"token outside", write("f.bin", EncodeTokens([]uint16{3, 261}, false)), bpeEnc, nil, "token 261 at position 1 is outside the BPE tokenizer of 261 tokens"},
		{"not UTF-8", write("g.txt", []byte("caf\xe9")), bpeEnc, nil, "not valid UTF-8"},
		{"empty", write("h.txt", nil), bpeEnc, nil, "empty"},
		{"missing", filepath.Join(dir, "none.txt"), bpeEnc, nil, "no such file"},
	} {
		got, err := ReadEncoded(c.file, c.enc)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), c.file) {
				t.Errorf("%s: error %v, want one naming the file with %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v %v, want %v", c.name, got, err, c.want)
		}
	}
	// LoadEncoded splits like Load and keeps the encoding's vocabulary.
	p := write("long.txt", []byte(strings.Repeat("hello ", 200)))
	d, err := LoadEncoded(p, 8, bpeEnc)
	if err != nil || d.VocabSize != 261 || d.Vocab != nil || len(d.Train)+len(d.Val) != 400 || len(d.Val) != 40 {
		t.Fatalf("LoadEncoded: %+v %v", d, err)
	}
	d, err = LoadEncoded(write("long2.txt", []byte(strings.Repeat("hello ", 20))), 8, CharEncoding(chars))
	if err != nil || d.Vocab != chars || d.VocabSize != 5 || len(d.Train)+len(d.Val) != 120 {
		t.Fatalf("LoadEncoded with characters: %+v %v", d, err)
	}
	if _, err := LoadEncoded(write("short.txt", []byte("hello")), 8, bpeEnc); err == nil || !strings.Contains(err.Error(), "too short") {
		t.Errorf("short file: %v", err)
	}
}
