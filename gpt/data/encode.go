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
	// Bytes returns an upper bound on the memory Encode(text) takes at
	// its peak, the tokens included, counting text and the file's bytes
	// it was made from as live; nil when unknown. A caller can refuse a
	// text with it before encoding it.
	Bytes func(text string) int64
}

// CharEncoding returns the encoding of a character vocabulary: a character
// outside it is an error naming it.
func CharEncoding(v *Vocab) Encoding {
	return Encoding{Name: fmt.Sprintf("the vocabulary of %d characters", v.Size()), Size: v.Size(), Encode: v.Encode, Vocab: v, Bytes: charBytes}
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
		return encodeBPE(t, text), nil
	}, Bytes: bpeBytes}, nil
}

// bpeChunk is the length of text (in bytes, whole pre-tokens, at least
// one) that encodeBPE encodes at a time.
const bpeChunk = 1 << 16

// encodeBPE is t.EncodeWithSpecial(text) as uint16 ids. It encodes runs of
// whole pre-tokens of about bpeChunk bytes at a time, which gives the same
// tokens (a pre-token ends where it does whatever follows the run, and
// starts where the run does), so that only one run's ids are ever held as
// ints.
func encodeBPE(t *bpe.Tokenizer, text string) []uint16 {
	out := make([]uint16, 0, len(text)/4+1)
	var ids []int
	encode := func(s string) {
		start, end := 0, 0
		for p := range bpe.Pieces(s) {
			if end += len(p); end-start >= bpeChunk {
				ids = t.AppendEncode(ids[:0], s[start:end])
				out = appendU16(out, ids)
				start = end
			}
		}
		if end > start {
			ids = t.AppendEncode(ids[:0], s[start:end])
			out = appendU16(out, ids)
		}
	}
	eot := t.EOT()
	for eot >= 0 {
		k := strings.Index(text, bpe.EndOfText)
		if k < 0 {
			break
		}
		encode(text[:k])
		out = append(out, uint16(eot))
		text = text[k+len(bpe.EndOfText):]
	}
	encode(text)
	return out
}

func appendU16(out []uint16, ids []int) []uint16 {
	for _, id := range ids {
		out = append(out, uint16(id))
	}
	return out
}

// bpeBytes bounds the memory encodeBPE(t, text) takes at its peak, with
// text and the bytes it was read from (2·len(text)) live: the uint16 ids
// (at most one per byte) while they grow, one run's ids as ints (a run is
// less than bpeChunk bytes plus its last pre-token) while they grow, the
// merge loop's space and the word cache (bpe.ScratchBytes), with the
// garbage collector's slack (heapBytes).
func bpeBytes(text string) int64 {
	n := int64(len(text))
	return heapBytes(2*n + growBytes(n, 2) + growBytes(bpeChunk+int64(bpe.LongestPiece(text)), 8) + bpe.ScratchBytes(text))
}

// charBytes bounds the memory a character vocabulary's Encode takes for a
// text of n bytes, with text and its bytes live: at most one uint16 per
// byte, allocated at once.
func charBytes(text string) int64 {
	n := int64(len(text))
	return heapBytes(2*n + 2*n)
}

// TextBytes returns an upper bound on the memory that reading a data file
// of size bytes takes (Load, ReadEncoded, LoadEncoded) before a fixed
// vocabulary's Encode runs (see Encoding.Bytes), and all it takes for a
// token file or a text tokenized by its characters: the bytes while they
// are read, then the bytes, the text as a string, the uint16 tokens (at
// most one per byte) and the set of characters seen (at most every
// Unicode character), with the garbage collector's slack (GOGC=100: the
// heap may grow to twice the data live at the last collection before the
// next one frees anything, and never has a goal below 4 MiB).
func TextBytes(size int64) int64 {
	size = max(size, 0)
	return heapBytes(max(growBytes(size, 1), 4*size+maxCharSetBytes))
}

// Memory bounds shared by the estimates.
const (
	growPad         = 1 << 14  // bytes of rounding when append grows a slice
	gcMinHeap       = 4 << 20  // the garbage collector's smallest heap goal
	maxCharSetBytes = 64 << 20 // a map of every Unicode character, and their list
)

// growBytes bounds the memory a slice of k elements of size bytes each
// takes while append grows it: the old array and the new one, the new
// one a quarter larger, rounded up.
func growBytes(k, size int64) int64 { return (k*size*9+3)/4 + growPad }

// heapBytes bounds the heap that live data of live bytes takes with Go's
// default garbage-collector pacing.
func heapBytes(live int64) int64 { return 2*live + gcMinHeap }

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
