package data

import (
	"fmt"
	"math"
	"path/filepath"
	"unicode/utf8"

	"github.com/simdgpt/simdgpt/gpt/rng"
	"github.com/simdgpt/simdgpt/internal/readfile"
)

// Dataset is a token stream split into training and validation parts. Vocab
// is set for text (character level) and nil for token-id files, whose
// vocabulary size is one more than their largest id.
type Dataset struct {
	Vocab     *Vocab
	VocabSize int
	Train     []uint16
	Val       []uint16
}

// ValFraction is the share of the tokens (taken from the end) held out for
// validation.
const ValFraction = 0.1

// MaxFileBytes is the largest data file Load reads (2 GiB: a billion
// uint16 tokens). The caller checks that the memory is there (TextBytes,
// and Encoding.Bytes for a fixed vocabulary).
const MaxFileBytes int64 = 2 << 30

// Load reads path as a dataset for blocks of blockSize tokens: an llm.c token
// file (recognised by its magic number), a raw uint16 token file (extension
// .bin or .tok), or UTF-8 text (anything else). Only regular files of at
// most MaxFileBytes are read (a device such as /dev/zero or a FIFO is
// refused before it is opened for reading). It fails with a message naming
// the file if it is empty, not UTF-8, too short to give both the training
// and the validation part at least one block plus its next token, or a
// .bin/.tok file that looks like llm.c's format with a wrong magic number
// (see Parse).
func Load(path string, blockSize int) (*Dataset, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	d, err := Parse(b, filepath.Base(path), blockSize)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// readFile returns the bytes of path if it is a regular file of at most
// MaxFileBytes.
func readFile(path string) ([]byte, error) {
	return readfile.Read(path, MaxFileBytes)
}

// Parse is Load on a file's bytes b, whose file name (for its extension)
// is name.
func Parse(b []byte, name string, blockSize int) (*Dataset, error) {
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
		maxID := 0
		for _, t := range toks {
			maxID = max(maxID, int(t))
		}
		d := &Dataset{VocabSize: maxID + 1}
		if err := d.split(toks, blockSize); err != nil {
			return nil, err
		}
		return d, nil
	}
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("not valid UTF-8 text (%s)", firstInvalid(b))
	}
	return FromText(string(b), blockSize)
}

func firstInvalid(b []byte) string {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return fmt.Sprintf("invalid byte 0x%02x at offset %d", b[i], i)
		}
		i += n
	}
	return "invalid encoding"
}

// FromText builds a character-level dataset from text.
func FromText(text string, blockSize int) (*Dataset, error) {
	v, err := BuildVocab(text)
	if err != nil {
		return nil, err
	}
	toks, err := v.Encode(text)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Vocab: v, VocabSize: v.Size()}
	if err := d.split(toks, blockSize); err != nil {
		return nil, err
	}
	return d, nil
}

// split keeps the last ValFraction of toks for validation.
func (d *Dataset) split(toks []uint16, blockSize int) error {
	if blockSize < 1 {
		return fmt.Errorf("block size %d must be at least 1", blockSize)
	}
	nval := int(float64(len(toks)) * ValFraction)
	// blockSize >= len(toks) first: blockSize+1 may overflow.
	if need := blockSize + 1; blockSize >= len(toks) || nval < need || len(toks)-nval < need {
		return fmt.Errorf("%d tokens is too short: training and validation (the last %.0f%%) each need at least one block of %d tokens plus one, so at least %.0f tokens in all",
			len(toks), 100*ValFraction, blockSize, math.Floor((float64(blockSize)+1)/ValFraction)+1)
	}
	d.Train, d.Val = toks[:len(toks)-nval], toks[len(toks)-nval:]
	return nil
}

// Batch fills x and y ([b*t] each) with b windows of t tokens drawn at
// random start positions of toks: y is x shifted by one token (the next
// token to predict). It panics, naming the argument, if b < 0 or t < 1,
// if toks has no t+1 tokens or if x, y are shorter than b*t.
func Batch(r *rng.RNG, toks []uint16, b, t int, x, y []int32) {
	if b < 0 || t < 1 {
		panic(fmt.Sprintf("data.Batch: b=%d t=%d, need b >= 0 and t >= 1", b, t))
	}
	if len(toks) <= t {
		panic(fmt.Sprintf("data.Batch: %d tokens, need at least t+1 = %d", len(toks), uint(t)+1))
	}
	// Divided rather than multiplied: b*t may overflow.
	if b > len(x)/t || b > len(y)/t {
		panic(fmt.Sprintf("data.Batch: len(x)=%d len(y)=%d, need b*t = %d×%d", len(x), len(y), b, t))
	}
	for i := 0; i < b; i++ {
		s := r.Intn(len(toks) - t)
		for j := 0; j < t; j++ {
			x[i*t+j] = int32(toks[s+j])
			y[i*t+j] = int32(toks[s+j+1])
		}
	}
}
