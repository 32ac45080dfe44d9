package bpe

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"testing"
)

var fuzzTokenizer = sync.OnceValue(func() *Tokenizer {
	ej, vb := handmadeFiles(testMerges, EndOfText)
	tok, err := Load(strings.NewReader(ej), strings.NewReader(vb))
	if err != nil {
		panic(err)
	}
	return tok
})

// FuzzEncodeRoundTrip: for any bytes, the pieces match the regexp oracle,
// the tokens match encoder.py's merge loop, and Decode gives the bytes
// back (from Encode and from EncodeWithSpecial).
func FuzzEncodeRoundTrip(f *testing.F) {
	for _, c := range pieceCases {
		f.Add(c.in)
	}
	f.Add("hello world, it's 123 中文 aaaaaaaaa " + EndOfText + "\xff")
	f.Fuzz(func(t *testing.T, s string) {
		tok := fuzzTokenizer()
		pieces := slices.Collect(Pieces(s))
		if want := oraclePieces(s); !slices.Equal(pieces, want) {
			t.Fatalf("Pieces(%q) = %q, the regexp oracle gives %q", s, pieces, want)
		}
		if strings.Join(pieces, "") != s {
			t.Fatalf("the pieces of %q do not concatenate to it", s)
		}
		ids := tok.Encode(s)
		if len(s) <= 200 {
			if got, want := tokens(t, tok, ids), refEncode(s, testMerges); !slices.Equal(got, want) {
				t.Fatalf("Encode(%q) = %q, encoder.py's loop gives %q", s, got, want)
			}
		}
		if back, err := tok.Decode(ids); err != nil || string(back) != s {
			t.Fatalf("Decode(Encode(%q)) = %q, %v", s, back, err)
		}
		if back, err := tok.Decode(tok.EncodeWithSpecial(s)); err != nil || string(back) != s {
			t.Fatalf("Decode(EncodeWithSpecial(%q)) = %q, %v", s, back, err)
		}
	})
}

// FuzzLoad: Load never panics, and a tokenizer it accepts round-trips text.
func FuzzLoad(f *testing.F) {
	ej, vb := handmadeFiles(testMerges, EndOfText)
	f.Add([]byte(ej), []byte(vb))
	f.Add([]byte(ej), []byte(strings.ReplaceAll(vb, "\n", "\r\n")))
	f.Add([]byte(ej), []byte("#version: 0.2\nh e\nh e\n"))
	f.Add([]byte(ej), []byte("h e\nl l l\n"))
	f.Add([]byte(ej), []byte("x y\n"))
	f.Add([]byte(ej), []byte("\xff"))
	small, smallMerges := handmadeFiles([][2]string{{"a", "b"}})
	f.Add([]byte(small), []byte(smallMerges))
	f.Add([]byte(strings.Replace(small, `"a":`, `"a ":`, 1)), []byte(smallMerges))
	f.Add([]byte(`{"a": 0}`), []byte(""))
	f.Add([]byte(`{"a": 1.5}`), []byte(""))
	f.Add([]byte(`{"a": 0, "b": 0}`), []byte(""))
	f.Add([]byte(`[]`), []byte(""))
	f.Add([]byte(`{}`), []byte(""))
	f.Fuzz(func(t *testing.T, encoderJSON, vocabBPE []byte) {
		tok, err := Load(bytes.NewReader(encoderJSON), bytes.NewReader(vocabBPE))
		if err != nil {
			if tok != nil {
				t.Fatal("Load returned a tokenizer with an error")
			}
			return
		}
		if tok.VocabSize() < 256 {
			t.Fatalf("accepted a vocabulary of %d tokens", tok.VocabSize())
		}
		for _, s := range []string{"hello world, it's 123 \xff" + EndOfText, string(vocabBPE)} {
			if back, err := tok.Decode(tok.EncodeWithSpecial(s)); err != nil || string(back) != s {
				t.Fatalf("Decode(EncodeWithSpecial(%q)) = %q, %v", s, back, err)
			}
		}
	})
}

// FuzzLoadLlmc: LoadLlmc never panics and a decoder it accepts has the
// header's vocabulary size and decodes every id.
func FuzzLoadLlmc(f *testing.F) {
	tok := fuzzTokenizer()
	valid := llmcOf(tok)
	f.Add(valid)
	f.Add(valid[:len(valid)-1])
	f.Add(append(slices.Clone(valid), 0))
	f.Add(valid[:1024])
	f.Add(valid[:1000])
	f.Add(llmcFile(2, 3, 1, []string{"a", "bc", "\xff"}))
	f.Add(llmcFile(2, 3, 3, []string{"a", "bc", "\xff"}))
	f.Add(llmcFile(2, 2, 0, []string{"a", ""}))
	f.Add(llmcFile(1, 3, 0, []string{"a", "bc", "\xff"}))
	f.Add(llmcFile(3, 1, 0, []string{"a"}))
	f.Add(llmcFile(2, MaxVocabSize+1, 0, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := LoadLlmc(bytes.NewReader(data))
		if err != nil {
			if d != nil {
				t.Fatal("LoadLlmc returned a decoder with an error")
			}
			return
		}
		if n := int(binary.LittleEndian.Uint32(data[8:])); d.VocabSize() != n {
			t.Fatalf("VocabSize() = %d, the header says %d", d.VocabSize(), n)
		}
		if eot := d.EOT(); eot < 0 || eot >= d.VocabSize() {
			t.Fatalf("EOT() = %d outside the vocabulary of %d", eot, d.VocabSize())
		}
		total := 0
		for id := range d.VocabSize() {
			s, ok := d.Token(id)
			if !ok || s == "" {
				t.Fatalf("Token(%d) = %q, %v", id, s, ok)
			}
			total += 1 + len(s)
		}
		if total != len(data)-1024 {
			t.Fatalf("tokens of %d bytes with their lengths, from %d bytes after the header", total, len(data)-1024)
		}
	})
}
