package bpe

import (
	"strings"
	"sync"
)

// EndOfText is the text of GPT-2's end-of-text token (id 50256).
const EndOfText = "<|endoftext|>"

// A Tokenizer encodes text to GPT-2 token ids and decodes them back. It is
// built by Load or LoadDir from a vocabulary and its merges, and is safe
// for concurrent use. The zero value has no vocabulary: Encode panics.
type Tokenizer struct {
	dec    Decoder
	ids    map[string]int32 // token bytes -> id
	byteID [256]int32       // the id of each single-byte token
	merges map[uint64]merge // (left id, right id) -> the merge
	cache  wordCache
	states sync.Pool // *mergeState
}

// merge is one line of vocab.bpe: its rank (line order, lowest first) and
// the id of the token it makes.
type merge struct {
	rank, result int32
}

func pairKey(left, right int32) uint64 { return uint64(uint32(left))<<32 | uint64(uint32(right)) }

// Decoder returns the tokenizer's decoding half.
func (t *Tokenizer) Decoder() *Decoder { return &t.dec }

// VocabSize returns the number of tokens: the ids are 0..VocabSize()-1.
func (t *Tokenizer) VocabSize() int { return t.dec.VocabSize() }

// EOT returns the id of the end-of-text token "<|endoftext|>" (50256 in
// GPT-2), or -1 when the vocabulary has none.
func (t *Tokenizer) EOT() int { return t.dec.eot }

// Token returns the bytes of token id; ok is false when id is not a token
// id.
func (t *Tokenizer) Token(id int) (token string, ok bool) { return t.dec.Token(id) }

// ID returns the id of the token whose bytes are token; ok is false when
// no token has them.
func (t *Tokenizer) ID(token string) (id int, ok bool) {
	v, ok := t.ids[token]
	return int(v), ok
}

// Decode returns the concatenated bytes of the tokens ids; see
// Decoder.Decode. For every string s, Decode(Encode(s)) returns the bytes
// of s.
func (t *Tokenizer) Decode(ids []int) ([]byte, error) { return t.dec.Decode(ids) }

// Encode returns the GPT-2 token ids of text, as OpenAI's encoder.py does:
// text is split into pre-tokens (see Pieces) and each pre-token's UTF-8
// bytes into tokens by applying the merges of vocab.bpe, lowest rank
// first. Any string is accepted, invalid UTF-8 included: every byte has a
// token, so Decode(Encode(text)) gives text back.
//
// The text "<|endoftext|>" is ordinary text here (as in encoder.py, and
// tiktoken's encode_ordinary): it becomes several tokens, never EOT();
// EncodeWithSpecial maps it to the end-of-text token.
func (t *Tokenizer) Encode(text string) []int {
	return t.AppendEncode(make([]int, 0, len(text)/4+1), text)
}

// AppendEncode appends the token ids of text (as Encode) to dst and
// returns the extended slice.
func (t *Tokenizer) AppendEncode(dst []int, text string) []int {
	if t.dec.off == nil {
		panic("bpe: Encode: the Tokenizer has no vocabulary (make it with Load or LoadDir)")
	}
	var st *mergeState
	for i := 0; i < len(text); {
		j := pieceEnd(text, i)
		piece := text[i:j]
		i = j
		if len(piece) == 1 {
			dst = append(dst, int(t.byteID[piece[0]]))
			continue
		}
		if ids, ok := t.cache.get(piece); ok {
			for _, id := range ids {
				dst = append(dst, int(id))
			}
			continue
		}
		if st == nil {
			st = t.getState()
		}
		start := len(dst)
		dst = t.bpe(st, piece, dst)
		t.cache.put(piece, dst[start:])
	}
	if st != nil {
		t.putState(st)
	}
	return dst
}

// EncodeWithSpecial is Encode, except that each occurrence of the text
// "<|endoftext|>" becomes the end-of-text token EOT() (like tiktoken's
// encode with allowed_special="all" for GPT-2): the text between them is
// encoded on its own, so "hello <|endoftext|>" is "hello", " ", EOT. With
// a vocabulary that has no end-of-text token it is Encode.
func (t *Tokenizer) EncodeWithSpecial(text string) []int {
	if t.dec.eot < 0 {
		return t.Encode(text)
	}
	dst := make([]int, 0, len(text)/4+1)
	for {
		k := strings.Index(text, EndOfText)
		if k < 0 {
			return t.AppendEncode(dst, text)
		}
		dst = t.AppendEncode(dst, text[:k])
		dst = append(dst, t.dec.eot)
		text = text[k+len(EndOfText):]
	}
}
