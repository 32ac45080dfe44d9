package data

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/simdgpt/simdgpt/gpt/bpe"
)

// Encoding is a fixed vocabulary text is tokenized with (LoadEncoded,
// ReadEncoded), instead of a character vocabulary built from the text: a
// trained model's characters, or a GPT-2 BPE tokenizer's tokens.
type Encoding struct {
	// Name says what the vocabulary is, for messages.
	Name string
	// Size is the number of tokens: ids are 0..Size-1.
	Size int
	// Encode returns the ids of text (valid UTF-8).
	Encode func(text string) ([]uint16, error)
	// Vocab is the character vocabulary behind Encode, or nil.
	Vocab *Vocab
}

// CharEncoding returns the encoding of a character vocabulary: a character
// outside it is an error naming it.
func CharEncoding(v *Vocab) Encoding {
	return Encoding{Name: fmt.Sprintf("the vocabulary of %d characters", v.Size()), Size: v.Size(), Encode: v.Encode, Vocab: v}
}

// BPEEncoding returns the encoding of a GPT-2 BPE tokenizer. Text is
// encoded with EncodeWithSpecial: the text "<|endoftext|>" is the
// end-of-text token, which separates documents in GPT-2's training data.
// A vocabulary of more than MaxVocab tokens is an error (ids are uint16).
func BPEEncoding(t *bpe.Tokenizer) (Encoding, error) {
	n := t.VocabSize()
	if n > MaxVocab {
		return Encoding{}, fmt.Errorf("data: the BPE vocabulary has %d tokens, more than the %d a uint16 token id can address", n, MaxVocab)
	}
	return Encoding{Name: fmt.Sprintf("the BPE tokenizer of %d tokens", n), Size: n, Encode: func(text string) ([]uint16, error) {
		ids := t.EncodeWithSpecial(text)
		out := make([]uint16, len(ids))
		for i, id := range ids {
			out[i] = uint16(id)
		}
		return out, nil
	}}, nil
}

// isTokenFile reports whether a file's bytes b, named name, are read as
// token ids: llm.c's magic number, or the extension .bin or .tok.
func isTokenFile(b []byte, name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return IsLLMC(b) || ext == ".bin" || ext == ".tok"
}

// ReadEncoded returns every token of the file path: a token file's ids
// (llm.c's format or raw, as Load reads them), each checked to be below
// enc.Size, or UTF-8 text tokenized by enc. The file is read as Load reads
// it (regular files of at most MaxFileBytes); errors name it.
func ReadEncoded(path string, enc Encoding) ([]uint16, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	toks, err := ParseEncoded(b, filepath.Base(path), enc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return toks, nil
}

// ParseEncoded is ReadEncoded on a file's bytes b, whose file name (for
// its extension) is name.
func ParseEncoded(b []byte, name string, enc Encoding) ([]uint16, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("file is empty")
	}
	if isTokenFile(b, name) {
		if err := wrongMagic(b); err != nil {
			return nil, err
		}
		toks, err := ParseTokens(b)
		if err != nil {
			return nil, err
		}
		for i, t := range toks {
			if int(t) >= enc.Size {
				return nil, fmt.Errorf("token %d at position %d is outside %s", t, i, enc.Name)
			}
		}
		return toks, nil
	}
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("not valid UTF-8 text (%s)", firstInvalid(b))
	}
	return enc.Encode(string(b))
}

// LoadEncoded is Load with the fixed vocabulary enc (see ReadEncoded):
// the dataset's VocabSize is enc.Size and its Vocab enc.Vocab, whatever
// tokens the file uses.
func LoadEncoded(path string, blockSize int, enc Encoding) (*Dataset, error) {
	toks, err := ReadEncoded(path, enc)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Vocab: enc.Vocab, VocabSize: enc.Size}
	if err := d.split(toks, blockSize); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}
