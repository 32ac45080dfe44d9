package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/simdgpt/simdgpt/gpt"
	"github.com/simdgpt/simdgpt/gpt/bpe"
	"github.com/simdgpt/simdgpt/gpt/data"
	"github.com/simdgpt/simdgpt/internal/readfile"
)

// How a model's text becomes tokens and back: a character vocabulary (our
// checkpoints trained on text, saved in their "vocab" metadata), GPT-2's
// byte-level BPE (encoder.json and vocab.bpe, or Hugging Face's vocab.json
// and merges.txt), or llm.c's gpt2_tokenizer.bin, which only decodes.
//
// A checkpoint of ours trained on BPE tokens embeds the tokenizer's files
// in its metadata (covered by its checksum, so a resumed run, sample and
// eval find exactly the tokenizer it was trained with, wherever the
// checkpoint is moved):
//
//	tinygpt.tokenizer               "gpt2-bpe" or "llmc"
//	tinygpt.tokenizer.encoder_json  encoder.json's bytes (gpt2-bpe)
//	tinygpt.tokenizer.vocab_bpe     vocab.bpe's bytes (gpt2-bpe)
//	tinygpt.tokenizer.llmc_base64   gpt2_tokenizer.bin in base64 (llmc)
const (
	metaTokenizer   = "tinygpt.tokenizer"
	metaEncoderJSON = "tinygpt.tokenizer.encoder_json"
	metaVocabBPE    = "tinygpt.tokenizer.vocab_bpe"
	metaLlmc        = "tinygpt.tokenizer.llmc_base64"
	kindBPE         = "gpt2-bpe"
	kindLlmc        = "llmc"
	llmcTokenizer   = "gpt2_tokenizer.bin"
)

// tokenizer is a model's text vocabulary; a nil *tokenizer is a model of
// token ids.
type tokenizer struct {
	chars *data.Vocab    // a character vocabulary, or
	bpe   *bpe.Tokenizer // a BPE tokenizer (with dec its decoder), or
	dec   *bpe.Decoder   // llm.c's decoder alone
	meta  map[string]string
	from  string // where it was found, for messages
}

// size returns the number of tokens.
func (t *tokenizer) size() int {
	if t.chars != nil {
		return t.chars.Size()
	}
	return t.dec.VocabSize()
}

// encodes reports whether t can turn text into tokens.
func (t *tokenizer) encodes() bool { return t.chars != nil || t.bpe != nil }

// describe says what t is and where it comes from.
func (t *tokenizer) describe() string {
	switch {
	case t.chars != nil:
		return fmt.Sprintf("a vocabulary of %d characters", t.chars.Size())
	case t.bpe != nil:
		return fmt.Sprintf("GPT-2 BPE of %d tokens from %s", t.size(), t.from)
	}
	return fmt.Sprintf("llm.c's decoder of %d tokens from %s", t.size(), t.from)
}

// token returns the bytes of token id (U+FFFD for an id outside t).
func (t *tokenizer) token(id int) []byte {
	if t.chars != nil {
		return t.chars.Token(id)
	}
	s, ok := t.dec.Token(id)
	if !ok {
		return []byte(string(utf8.RuneError))
	}
	return []byte(s)
}

// errDecodeOnly explains why text cannot be tokenized with llm.c's file.
func (t *tokenizer) errDecodeOnly(what string) error {
	return fmt.Errorf("%s needs a tokenizer that encodes, but %s only decodes: put encoder.json and vocab.bpe (or vocab.json and merges.txt) there or give their directory with --tokenizer_dir", what, t.from)
}

// encoding returns how data files are tokenized for a model of vocab
// tokens with tokenizer t (nil: token files only).
func encoding(t *tokenizer, vocab int) (data.Encoding, error) {
	switch {
	case t == nil:
		return data.Encoding{Name: fmt.Sprintf("the model's vocabulary of %d token ids", vocab), Size: vocab, Encode: func(string) ([]uint16, error) {
			return nil, errors.New("text, but the model has no tokenizer (it was trained on token ids): give a token file (.bin, .tok or llm.c's format)")
		}}, nil
	case t.chars != nil:
		return data.CharEncoding(t.chars), nil
	case t.bpe != nil:
		enc, err := data.BPEEncoding(t.bpe)
		if err != nil {
			return enc, err
		}
		encode := enc.Encode
		enc.Encode = func(text string) ([]uint16, error) {
			// A text's longest pre-token sets the merge loop's memory:
			// checked once the text is read, before it is encoded.
			if err := gpt.CheckMemory(fmt.Sprintf("tokenizing %s of text with GPT-2 BPE", gpt.FormatBytes(int64(len(text)))), enc.Bytes(text)); err != nil {
				return nil, err
			}
			return encode(text)
		}
		return enc, nil
	}
	return data.Encoding{Name: t.describe(), Size: t.size(), Encode: func(string) ([]uint16, error) {
		return nil, t.errDecodeOnly("text")
	}}, nil
}

// readSmall reads a tokenizer file: a regular file of at most
// bpe.MaxFileSize bytes.
func readSmall(path string) ([]byte, error) {
	return readfile.Read(path, bpe.MaxFileSize)
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

// findTokenizer returns the tokenizer in dir: encoder.json and vocab.bpe,
// or vocab.json and merges.txt, or else gpt2_tokenizer.bin (decoding
// only); nil when dir holds none of them.
func findTokenizer(dir string) (*tokenizer, error) {
	for _, names := range [][2]string{{"encoder.json", "vocab.bpe"}, {"vocab.json", "merges.txt"}} {
		vp, mp := filepath.Join(dir, names[0]), filepath.Join(dir, names[1])
		if !isFile(vp) || !isFile(mp) {
			continue
		}
		vb, err := readSmall(vp)
		if err != nil {
			return nil, err
		}
		mb, err := readSmall(mp)
		if err != nil {
			return nil, err
		}
		t, err := bpeTokenizer(vb, mb, dir)
		if err != nil {
			return nil, fmt.Errorf("%v (in %s)", err, dir)
		}
		return t, nil
	}
	p := filepath.Join(dir, llmcTokenizer)
	if !isFile(p) {
		return nil, nil
	}
	b, err := readSmall(p)
	if err != nil {
		return nil, err
	}
	t, err := llmcDecoder(b, p)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p, err)
	}
	return t, nil
}

// bpeTokenizer loads a BPE tokenizer from its two files' bytes, keeping
// them for a checkpoint's metadata.
func bpeTokenizer(encoderJSON, vocabBPE []byte, from string) (*tokenizer, error) {
	if !utf8.Valid(encoderJSON) {
		return nil, errors.New("bpe: encoder.json is not valid UTF-8")
	}
	what := fmt.Sprintf("loading the BPE tokenizer of %s (%s of files)", from, gpt.FormatBytes(int64(len(encoderJSON)+len(vocabBPE))))
	if err := gpt.CheckMemory(what, bpe.LoadBytes(int64(len(encoderJSON)), int64(len(vocabBPE)))); err != nil {
		return nil, err
	}
	bt, err := bpe.Load(bytes.NewReader(encoderJSON), bytes.NewReader(vocabBPE))
	if err != nil {
		return nil, err
	}
	if bt.VocabSize() > data.MaxVocab {
		return nil, fmt.Errorf("the BPE vocabulary has %d tokens, more than the %d a uint16 token id can address", bt.VocabSize(), data.MaxVocab)
	}
	return &tokenizer{bpe: bt, dec: bt.Decoder(), from: from, meta: map[string]string{
		metaTokenizer: kindBPE, metaEncoderJSON: string(encoderJSON), metaVocabBPE: string(vocabBPE)}}, nil
}

// llmcDecoder loads llm.c's gpt2_tokenizer.bin from its bytes.
func llmcDecoder(b []byte, from string) (*tokenizer, error) {
	d, err := bpe.LoadLlmc(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return &tokenizer{dec: d, from: from, meta: map[string]string{
		metaTokenizer: kindLlmc, metaLlmc: base64.StdEncoding.EncodeToString(b)}}, nil
}

// tokenizerFromMeta returns the tokenizer a checkpoint's metadata embeds,
// or nil when it has none.
func tokenizerFromMeta(meta map[string]string, path string) (*tokenizer, error) {
	from := "the checkpoint " + path
	switch kind := meta[metaTokenizer]; kind {
	case "":
		return nil, nil
	case kindBPE:
		return bpeTokenizer([]byte(meta[metaEncoderJSON]), []byte(meta[metaVocabBPE]), from)
	case kindLlmc:
		b, err := base64.StdEncoding.DecodeString(meta[metaLlmc])
		if err != nil {
			return nil, fmt.Errorf("%s metadata: %v", metaLlmc, err)
		}
		return llmcDecoder(b, from)
	default:
		return nil, fmt.Errorf("%s metadata %q: want %q or %q", metaTokenizer, kind, kindBPE, kindLlmc)
	}
}

// utf8Stream writes the bytes of tokens as they come, holding back the
// bytes of a character a token ends in the middle of (byte-level BPE
// splits characters) until the next tokens complete it; bytes that can
// never form a character are written as they are.
type utf8Stream struct {
	w       io.Writer
	pending []byte
}

// write adds b to the stream and writes every complete character.
func (s *utf8Stream) write(b []byte) error {
	s.pending = append(s.pending, b...)
	n := completeUTF8(s.pending)
	if n == 0 {
		return nil
	}
	_, err := s.w.Write(s.pending[:n])
	s.pending = s.pending[:copy(s.pending, s.pending[n:])]
	return err
}

// flush writes what is held back (an incomplete character at the end).
func (s *utf8Stream) flush() error {
	if len(s.pending) == 0 {
		return nil
	}
	_, err := s.w.Write(s.pending)
	s.pending = s.pending[:0]
	return err
}

// completeUTF8 returns the length of the longest prefix of p that does
// not end in the first bytes of a character still incomplete.
func completeUTF8(p []byte) int {
	for i := len(p) - 1; i >= 0 && i > len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if utf8.FullRune(p[i:]) {
				return len(p)
			}
			return i
		}
	}
	return len(p)
}
