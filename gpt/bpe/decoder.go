package bpe

import "fmt"

// A Decoder turns token ids back into bytes. It is what llm.c's
// gpt2_tokenizer.bin holds (LoadLlmc), and the decoding half of a
// Tokenizer. It is immutable and safe for concurrent use. The zero value
// has no tokens.
type Decoder struct {
	data string   // the bytes of every token, in id order
	off  []uint32 // token id's bytes are data[off[id]:off[id+1]]
	eot  int      // the end-of-text token's id, or -1
}

// VocabSize returns the number of tokens: the ids are 0..VocabSize()-1.
func (d *Decoder) VocabSize() int { return max(len(d.off)-1, 0) }

// EOT returns the id of the end-of-text token <|endoftext|> (50256 in
// GPT-2), or -1 when the vocabulary has none.
func (d *Decoder) EOT() int { return d.eot }

// Token returns the bytes of token id (which need not be valid UTF-8: a
// token can hold part of a character); ok is false when id is not a token
// id.
func (d *Decoder) Token(id int) (token string, ok bool) {
	if id < 0 || id >= d.VocabSize() {
		return "", false
	}
	return d.data[d.off[id]:d.off[id+1]], true
}

// Decode returns the concatenated bytes of the tokens ids. The
// end-of-text token decodes to the text "<|endoftext|>". An id that is not
// a token id is an error naming its index; the bytes of the tokens before
// it are returned with it.
func (d *Decoder) Decode(ids []int) ([]byte, error) {
	return d.AppendDecode(nil, ids)
}

// AppendDecode appends the bytes of the tokens ids to dst and returns the
// extended slice, as Decode does.
func (d *Decoder) AppendDecode(dst []byte, ids []int) ([]byte, error) {
	n := d.VocabSize()
	for i, id := range ids {
		if id < 0 || id >= n {
			return dst, fmt.Errorf("bpe: Decode: ids[%d] = %d is not a token id (the vocabulary has %d tokens)", i, id, n)
		}
		dst = append(dst, d.data[d.off[id]:d.off[id+1]]...)
	}
	return dst, nil
}
