// Package data turns text and token files into the token streams TinyGPT
// trains on: a character vocabulary built from a UTF-8 text, uint16
// token-id files (raw, or with llm.c's 256-word header), a train/validation
// split, random batches, and a built-in synthetic corpus.
package data

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// MaxVocab is the largest vocabulary a uint16 token id can address.
const MaxVocab = 1 << 16

// Vocab maps the characters of a text to token ids, in increasing code-point
// order (so the same text always gives the same vocabulary).
type Vocab struct {
	chars []rune
	index map[rune]uint16
	// bytes[i] is the UTF-8 encoding of chars[i], kept so decoding while
	// sampling allocates nothing.
	bytes [][]byte
}

// BuildVocab returns the vocabulary of the distinct characters of text.
// It fails if text is empty, not valid UTF-8, or has more than MaxVocab
// distinct characters.
func BuildVocab(text string) (*Vocab, error) {
	if len(text) == 0 {
		return nil, fmt.Errorf("data: empty text has no vocabulary")
	}
	if !utf8.ValidString(text) {
		return nil, fmt.Errorf("data: text is not valid UTF-8")
	}
	seen := map[rune]bool{}
	for _, r := range text {
		seen[r] = true
	}
	chars := make([]rune, 0, len(seen))
	for r := range seen {
		chars = append(chars, r)
	}
	sort.Slice(chars, func(i, j int) bool { return chars[i] < chars[j] })
	return newVocab(chars)
}

// ParseVocab rebuilds a vocabulary from the string returned by its String
// method (its characters in id order), as saved with a checkpoint.
func ParseVocab(s string) (*Vocab, error) {
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("data: vocabulary is not valid UTF-8")
	}
	chars := []rune(s)
	if len(chars) == 0 {
		return nil, fmt.Errorf("data: empty vocabulary")
	}
	return newVocab(chars)
}

func newVocab(chars []rune) (*Vocab, error) {
	if len(chars) > MaxVocab {
		return nil, fmt.Errorf("data: %d distinct characters, more than the %d a uint16 token id can address", len(chars), MaxVocab)
	}
	v := &Vocab{chars: chars, index: make(map[rune]uint16, len(chars)), bytes: make([][]byte, len(chars))}
	for i, r := range chars {
		if _, dup := v.index[r]; dup {
			return nil, fmt.Errorf("data: vocabulary repeats the character %q", r)
		}
		v.index[r] = uint16(i)
		v.bytes[i] = []byte(string(r))
	}
	return v, nil
}

// Size is the number of tokens in the vocabulary.
func (v *Vocab) Size() int { return len(v.chars) }

// String returns the vocabulary's characters in id order; ParseVocab
// inverts it.
func (v *Vocab) String() string { return string(v.chars) }

// Encode returns the token ids of s; a character outside the vocabulary is
// an error naming it.
func (v *Vocab) Encode(s string) ([]uint16, error) {
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("data: text is not valid UTF-8")
	}
	ids := make([]uint16, 0, len(s))
	for i, r := range s {
		id, ok := v.index[r]
		if !ok {
			return nil, fmt.Errorf("data: character %q at byte %d is not in the vocabulary", r, i)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// Decode returns the text of ids; an id outside the vocabulary becomes
// U+FFFD.
func (v *Vocab) Decode(ids []uint16) string {
	var b strings.Builder
	for _, id := range ids {
		b.Write(v.Token(int(id)))
	}
	return b.String()
}

// Token returns the UTF-8 bytes of one token (U+FFFD's for an id outside the
// vocabulary). The caller must not modify them.
func (v *Vocab) Token(id int) []byte {
	if id < 0 || id >= len(v.bytes) {
		return []byte(string(utf8.RuneError))
	}
	return v.bytes[id]
}
