package bpe

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoadErrors(t *testing.T) {
	ej, vb := handmadeFiles(testMerges, EndOfText)
	// byteVocab is encoder.json for the 256 bytes alone, ids 0..255,
	// with the JSON text of one more entry (or "") before the brace.
	byteVocab := func(extra string) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range 256 {
			fmt.Fprintf(&b, "%q: %d, ", string(ByteRune(byte(i))), i)
		}
		if extra == "" {
			return strings.TrimSuffix(b.String(), ", ") + "}"
		}
		return b.String() + extra + "}"
	}
	cases := []struct {
		name, encoderJSON, vocabBPE, wantErr string
	}{
		{"not JSON", "encoder", vb, "bpe: encoder.json: invalid character"},
		{"not an object", "[1, 2]", vb, "bpe: encoder.json: json: cannot unmarshal array"},
		{"fractional id", `{"a": 1.5}`, vb, "bpe: encoder.json: json: cannot unmarshal number 1.5"},
		{"no tokens", "{}", vb, "bpe: encoder.json has no tokens"},
		{"id past the end", byteVocab(`"ab": 300`), "", `token "ab" has id 300, outside 0..256`},
		{"negative id", byteVocab(`"ab": -1`), "", `token "ab" has id -1, outside 0..256`},
		{"id twice", byteVocab(`"ab": 7, "cd": 7`), "", "two tokens"},
		{"empty token", byteVocab(`"": 256`), "", "the empty string is a token (id 256)"},
		{"character outside the alphabet", byteVocab(`"a b": 256`), "", `token "a b" (id 256) has the character U+0020, which is not in GPT-2's byte alphabet`},
		{"a byte missing", `{"a": 0}`, "", "encoder.json has no token for the byte 0x00"},
		{"merges not UTF-8", ej, "#version: 0.2\n\xff\n", "bpe: vocab.bpe is not valid UTF-8"},
		{"three fields", ej, "#version: 0.2\nh e\nl l l\n", `vocab.bpe line 3: "l l l" is not two tokens separated by a space`},
		{"one field", ej, "h\n", `vocab.bpe line 1: "h" is not two tokens`},
		{"half not a token", ej, "#version: 0.2\nhe x\n", `vocab.bpe line 2: the merge of "he" and "x", "hex", is not a token`},
		{"unknown half", ej, "#version: 0.2\nxy z\n", `vocab.bpe line 2: "xy" is not a token of encoder.json`},
		{"half outside the alphabet", ej, "#version: 0.2\nh \u0144\n", `vocab.bpe line 2: "ń" has the character U+0144, which is not in GPT-2's byte alphabet`},
		{"repeated merge", ej, "#version: 0.2\nh e\nl l\nh e\n", `vocab.bpe line 4: the merge "h e" repeats line 2`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tok, err := Load(strings.NewReader(c.encoderJSON), strings.NewReader(c.vocabBPE))
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("Load: error %v, want one containing %q", err, c.wantErr)
			}
			if tok != nil {
				t.Fatal("Load returned a tokenizer with its error")
			}
		})
	}
	if _, err := Load(strings.NewReader(byteVocab("")), strings.NewReader("")); err != nil {
		t.Errorf("the 256 bytes and no merges: %v", err)
	}
}

// spaces reads as an endless run of spaces.
type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// failing fails every read.
type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestLoadReaders(t *testing.T) {
	ej, vb := handmadeFiles(testMerges)
	if _, err := Load(failing{}, strings.NewReader(vb)); err == nil || !strings.Contains(err.Error(), "bpe: reading encoder.json: io: read/write on closed pipe") {
		t.Errorf("a failing reader: %v", err)
	}
	if testing.Short() {
		t.Skip("-short: not reading 64 MiB")
	}
	if _, err := Load(strings.NewReader(ej), spaces{}); err == nil || !strings.Contains(err.Error(), "vocab.bpe is larger than") {
		t.Errorf("an endless vocab.bpe: %v", err)
	}
}

// TestLoadVariants: the forms of vocab.bpe that Load accepts give the same
// tokenizer.
func TestLoadVariants(t *testing.T) {
	ej, vb := handmadeFiles(testMerges, EndOfText)
	text := "hello world it's 123 中 aaaaaaaaa"
	want := newTestTokenizer(t).Encode(text)
	variants := map[string]string{
		"CRLF":               strings.ReplaceAll(vb, "\n", "\r\n"),
		"no final newline":   strings.TrimSuffix(vb, "\n"),
		"no #version line":   strings.TrimPrefix(vb, "#version: 0.2\n"),
		"blank lines":        strings.ReplaceAll(vb, "\n", "\n\n"),
		"tabs between":       strings.ReplaceAll(vb, " ", "\t"),
		"Hugging Face title": strings.Replace(vb, "#version: 0.2", "#version: 0.2 - Trained by `huggingface/tokenizers`", 1),
	}
	for name, v := range variants {
		tok, err := Load(strings.NewReader(ej), strings.NewReader(v))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := tok.Encode(text); !slices.Equal(got, want) {
			t.Errorf("%s: Encode(%q) = %v, want %v", name, text, got, want)
		}
	}
}

func TestLoadDir(t *testing.T) {
	ej, vb := handmadeFiles(testMerges, EndOfText)
	text := "hello world"
	want := newTestTokenizer(t).Encode(text)
	for _, names := range [][2]string{{"encoder.json", "vocab.bpe"}, {"vocab.json", "merges.txt"}} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, names[0]), []byte(ej), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, names[1]), []byte(vb), 0o644); err != nil {
			t.Fatal(err)
		}
		tok, err := LoadDir(dir)
		if err != nil {
			t.Fatalf("LoadDir with %s: %v", names, err)
		}
		if got := tok.Encode(text); !slices.Equal(got, want) {
			t.Errorf("LoadDir with %s: Encode = %v, want %v", names, got, want)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "encoder.json"), []byte(ej), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "holds neither encoder.json and vocab.bpe nor vocab.json and merges.txt") {
		t.Errorf("LoadDir without vocab.bpe: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "vocab.bpe"), []byte("x y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "vocab.bpe line 1") || !strings.Contains(err.Error(), dir) {
		t.Errorf("LoadDir with a bad vocab.bpe: %v", err)
	}
}

func TestLoadLlmc(t *testing.T) {
	tok := newTestTokenizer(t)
	d, err := LoadLlmc(bytes.NewReader(llmcOf(tok)))
	if err != nil {
		t.Fatal(err)
	}
	if d.VocabSize() != tok.VocabSize() || d.EOT() != tok.EOT() {
		t.Fatalf("VocabSize %d, EOT %d; want %d, %d", d.VocabSize(), d.EOT(), tok.VocabSize(), tok.EOT())
	}
	for id := range tok.VocabSize() {
		got, _ := d.Token(id)
		want, _ := tok.Token(id)
		if got != want {
			t.Fatalf("Token(%d) = %q, want %q", id, got, want)
		}
	}
	text := "hello world " + EndOfText + "\xff"
	if got, err := d.Decode(tok.EncodeWithSpecial(text)); err != nil || string(got) != text {
		t.Errorf("Decode = %q, %v", got, err)
	}

	// Version 1: GPT-2's size and end-of-text token implied.
	v1 := make([]string, gpt2VocabSize)
	for i := range v1 {
		v1[i] = fmt.Sprint(i)
	}
	d, err = LoadLlmc(bytes.NewReader(llmcFile(1, gpt2VocabSize, 0, v1)))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := d.Token(12345); d.EOT() != gpt2EOT || d.VocabSize() != gpt2VocabSize || s != "12345" {
		t.Errorf("version 1: EOT %d, size %d, Token(12345) = %q", d.EOT(), d.VocabSize(), s)
	}

	three := []string{"a", "bc", "\xff"}
	valid := llmcFile(2, 3, 2, three)
	badMagic := slices.Clone(valid)
	badMagic[0]++
	cases := []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"empty", nil, "reading the 1024-byte header: unexpected EOF"},
		{"short header", valid[:1000], "reading the 1024-byte header: unexpected EOF"},
		{"bad magic", badMagic, "magic number 20240329, want 20240328"},
		{"version 0", llmcFile(0, 3, 2, three), "version 0, want 1 or 2"},
		{"version 3", llmcFile(3, 3, 2, three), "version 3, want 1 or 2"},
		{"version 1 not GPT-2", llmcFile(1, 3, 0, three), "version 1 with 3 tokens"},
		{"no tokens", llmcFile(2, 0, 0, nil), "vocabulary size 0"},
		{"too many tokens", llmcFile(2, MaxVocabSize+1, 0, nil), fmt.Sprintf("vocabulary size %d, want 1..%d", MaxVocabSize+1, MaxVocabSize)},
		{"end of text outside", llmcFile(2, 3, 3, three), "end-of-text token 3 outside a vocabulary of 3 tokens"},
		{"huge and empty", llmcFile(2, MaxVocabSize, 0, nil), fmt.Sprintf("token 0 of %d: reading its length: unexpected EOF", MaxVocabSize)},
		{"empty token", llmcFile(2, 3, 0, []string{"a", "", "c"}), "token 1 has length 0"},
		{"truncated in a length", valid[:len(valid)-2], "token 2 of 3: reading its length: unexpected EOF"},
		{"truncated in a token", valid[:len(valid)-1], "token 2 of 3: reading its 1 bytes: unexpected EOF"},
		{"trailing bytes", append(slices.Clone(valid), 1, 'x'), "bytes after the last of the 3 tokens"},
	}
	for _, c := range cases {
		d, err := LoadLlmc(bytes.NewReader(c.data))
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.wantErr)
		}
		if d != nil {
			t.Errorf("%s: a decoder with the error", c.name)
		}
	}
}
