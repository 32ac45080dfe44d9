package bpe

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/simdgpt/simdgpt/internal/readfile"
)

// Limits on the files the loaders accept, checked before allocating.
const (
	// MaxFileSize is the largest encoder.json or vocab.bpe Load reads
	// (GPT-2's are 1.0 MB and 0.46 MB).
	MaxFileSize = 64 << 20
	// MaxVocabSize is the largest vocabulary the loaders accept (GPT-2's
	// has 50257 tokens).
	MaxVocabSize = 1 << 22
)

// readAll reads r to its end, failing past MaxFileSize bytes.
func readAll(r io.Reader, name string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("bpe: reading %s: %w", name, err)
	}
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("bpe: %s is larger than %d bytes", name, MaxFileSize)
	}
	return b, nil
}

// Load builds a Tokenizer from GPT-2's two files: encoder.json, a JSON
// object from each token (written in GPT-2's byte alphabet, see ByteRune)
// to its id, and vocab.bpe, the merges, one a line ("Ġ t": the two tokens
// whose concatenation is a new token), highest priority first, after a
// "#version" line. Hugging Face's vocab.json and merges.txt for GPT-2 are
// the same files under other names.
//
// Load is stricter than encoder.py, so that Encode can never fail: the
// ids must be exactly 0..n-1, one token each; every token must be written
// in the byte alphabet; all 256 single bytes must be tokens; both halves
// of every merge and their concatenation must be tokens; a merge may not
// appear twice. Lines of vocab.bpe may end in "\r"; blank lines are
// skipped, and the last line counts even without a final newline (which
// encoder.py would drop). If the vocabulary has the token "<|endoftext|>",
// it is the end-of-text token (EOT).
func Load(encoderJSON, vocabBPE io.Reader) (*Tokenizer, error) {
	ej, err := readAll(encoderJSON, "encoder.json")
	if err != nil {
		return nil, err
	}
	vb, err := readAll(vocabBPE, "vocab.bpe")
	if err != nil {
		return nil, err
	}
	t, err := parseEncoder(ej)
	if err != nil {
		return nil, err
	}
	if err := t.parseMerges(vb); err != nil {
		return nil, err
	}
	return t, nil
}

// parseEncoder reads encoder.json into a Tokenizer without merges.
func parseEncoder(data []byte) (*Tokenizer, error) {
	var vocab map[string]int
	if err := json.Unmarshal(data, &vocab); err != nil {
		return nil, fmt.Errorf("bpe: encoder.json: %w", err)
	}
	n := len(vocab)
	if n == 0 {
		return nil, errors.New("bpe: encoder.json has no tokens")
	}
	if n > MaxVocabSize {
		return nil, fmt.Errorf("bpe: encoder.json has %d tokens, more than %d", n, MaxVocabSize)
	}
	tokens := make([][]byte, n)
	size := 0
	for text, id := range vocab {
		if id < 0 || id >= n {
			return nil, fmt.Errorf("bpe: encoder.json: token %q has id %d, outside 0..%d (the ids must be 0..n-1 for n tokens)", text, id, n-1)
		}
		if tokens[id] != nil {
			return nil, fmt.Errorf("bpe: encoder.json: id %d is given to two tokens", id)
		}
		if text == "" {
			return nil, fmt.Errorf("bpe: encoder.json: the empty string is a token (id %d)", id)
		}
		b, r, ok := fromAlphabet(text)
		if !ok {
			return nil, fmt.Errorf("bpe: encoder.json: token %q (id %d) has the character %U, which is not in GPT-2's byte alphabet", text, id, r)
		}
		tokens[id] = b
		size += len(b)
	}
	t := &Tokenizer{ids: make(map[string]int32, n), merges: map[uint64]merge{}}
	t.dec = buildDecoder(tokens, size, -1)
	for id := range tokens {
		tok, _ := t.dec.Token(id)
		t.ids[tok] = int32(id)
	}
	for b := range 256 {
		id, ok := t.ids[string([]byte{byte(b)})]
		if !ok {
			return nil, fmt.Errorf("bpe: encoder.json has no token for the byte 0x%02x (%q)", b, byteRunes[b])
		}
		t.byteID[b] = id
	}
	if id, ok := t.ids[EndOfText]; ok {
		t.dec.eot = int(id)
	}
	return t, nil
}

// buildDecoder packs tokens (of size bytes in all) into a Decoder.
func buildDecoder(tokens [][]byte, size, eot int) Decoder {
	var sb strings.Builder
	sb.Grow(size)
	off := make([]uint32, 0, len(tokens)+1)
	off = append(off, 0)
	for _, tok := range tokens {
		sb.Write(tok)
		off = append(off, uint32(sb.Len()))
	}
	return Decoder{data: sb.String(), off: off, eot: eot}
}

// parseMerges reads vocab.bpe into t's merges.
func (t *Tokenizer) parseMerges(data []byte) error {
	if !utf8.Valid(data) {
		return errors.New("bpe: vocab.bpe is not valid UTF-8")
	}
	lines := strings.Split(string(data), "\n")
	// The maps are sized for every line at once: growing them a merge at
	// a time was a third of loading GPT-2's tokenizer. line[r] is the
	// line of the merge of rank r.
	t.merges = make(map[uint64]merge, len(lines))
	line := make([]int, 0, len(lines))
	for i, text := range lines {
		text = strings.TrimSuffix(text, "\r")
		if i == 0 && strings.HasPrefix(text, "#version") {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return fmt.Errorf("bpe: vocab.bpe line %d: %q is not two tokens separated by a space", i+1, text)
		}
		var ids [2]int32
		var whole []byte
		for k, f := range fields {
			b, r, ok := fromAlphabet(f)
			if !ok {
				return fmt.Errorf("bpe: vocab.bpe line %d: %q has the character %U, which is not in GPT-2's byte alphabet", i+1, f, r)
			}
			id, ok := t.ids[string(b)]
			if !ok {
				return fmt.Errorf("bpe: vocab.bpe line %d: %q is not a token of encoder.json", i+1, f)
			}
			ids[k] = id
			whole = append(whole, b...)
		}
		result, ok := t.ids[string(whole)]
		if !ok {
			return fmt.Errorf("bpe: vocab.bpe line %d: the merge of %q and %q, %q, is not a token of encoder.json", i+1, fields[0], fields[1], fields[0]+fields[1])
		}
		key := pairKey(ids[0], ids[1])
		if prev, dup := t.merges[key]; dup {
			return fmt.Errorf("bpe: vocab.bpe line %d: the merge %q repeats line %d", i+1, text, line[prev.rank])
		}
		t.merges[key] = merge{rank: int32(len(t.merges)), result: result}
		line = append(line, i+1)
	}
	return nil
}

// LoadDir loads a Tokenizer (see Load) from the directory dir, which holds
// either OpenAI's encoder.json and vocab.bpe or Hugging Face's vocab.json
// and merges.txt.
func LoadDir(dir string) (*Tokenizer, error) {
	for _, names := range [][2]string{{"encoder.json", "vocab.bpe"}, {"vocab.json", "merges.txt"}} {
		vocabPath, mergesPath := filepath.Join(dir, names[0]), filepath.Join(dir, names[1])
		if !exists(vocabPath) || !exists(mergesPath) {
			continue
		}
		vf, _, err := readfile.Open(vocabPath, MaxFileSize)
		if err != nil {
			return nil, fmt.Errorf("bpe: LoadDir: %w", err)
		}
		defer vf.Close()
		mf, _, err := readfile.Open(mergesPath, MaxFileSize)
		if err != nil {
			return nil, fmt.Errorf("bpe: LoadDir: %w", err)
		}
		defer mf.Close()
		t, err := Load(vf, mf)
		if err != nil {
			return nil, fmt.Errorf("%w (in %s)", err, dir)
		}
		return t, nil
	}
	return nil, fmt.Errorf("bpe: LoadDir: %s holds neither encoder.json and vocab.bpe nor vocab.json and merges.txt", dir)
}

func exists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir()
}

// The header of llm.c's tokenizer file.
const (
	llmcMagic       = 20240328
	llmcHeaderWords = 256
	gpt2VocabSize   = 50257
	gpt2EOT         = 50256
)

// LoadLlmc reads llm.c's tokenizer file gpt2_tokenizer.bin, which is for
// decoding only (it has no merges): a header of 256 little-endian uint32
// (the magic number 20240328, the version 1 or 2, the vocabulary size n,
// and in version 2 the end-of-text token's id; version 1 implies GPT-2's
// 50257 tokens and 50256), then for each of the n tokens in id order its
// length in one byte (1..255) and its bytes. Bytes after the last token
// are an error.
func LoadLlmc(r io.Reader) (*Decoder, error) {
	br := bufio.NewReader(r)
	var header [llmcHeaderWords]uint32
	if err := binary.Read(br, binary.LittleEndian, &header); err != nil {
		return nil, fmt.Errorf("bpe: LoadLlmc: reading the %d-byte header: %w", 4*llmcHeaderWords, noEOF(err))
	}
	if header[0] != llmcMagic {
		return nil, fmt.Errorf("bpe: LoadLlmc: magic number %d, want %d (not an llm.c tokenizer file)", header[0], llmcMagic)
	}
	n := header[2]
	var eot uint32
	switch header[1] {
	case 1:
		if n != gpt2VocabSize {
			return nil, fmt.Errorf("bpe: LoadLlmc: version 1 with %d tokens; version 1 is GPT-2's %d", n, gpt2VocabSize)
		}
		eot = gpt2EOT
	case 2:
		eot = header[3]
	default:
		return nil, fmt.Errorf("bpe: LoadLlmc: version %d, want 1 or 2", header[1])
	}
	if n == 0 || n > MaxVocabSize {
		return nil, fmt.Errorf("bpe: LoadLlmc: vocabulary size %d, want 1..%d", n, MaxVocabSize)
	}
	if eot >= n {
		return nil, fmt.Errorf("bpe: LoadLlmc: end-of-text token %d outside a vocabulary of %d tokens", eot, n)
	}
	// Grow as tokens arrive rather than trusting n for the allocation.
	off := make([]uint32, 1, min(int(n), 1<<16)+1)
	var data []byte
	var buf [255]byte
	for i := range n {
		length, err := br.ReadByte()
		if err != nil {
			return nil, fmt.Errorf("bpe: LoadLlmc: token %d of %d: reading its length: %w", i, n, noEOF(err))
		}
		if length == 0 {
			return nil, fmt.Errorf("bpe: LoadLlmc: token %d has length 0", i)
		}
		if _, err := io.ReadFull(br, buf[:length]); err != nil {
			return nil, fmt.Errorf("bpe: LoadLlmc: token %d of %d: reading its %d bytes: %w", i, n, length, noEOF(err))
		}
		data = append(data, buf[:length]...)
		off = append(off, uint32(len(data)))
	}
	if _, err := br.ReadByte(); err != io.EOF {
		if err != nil {
			return nil, fmt.Errorf("bpe: LoadLlmc: after the last token: %w", err)
		}
		return nil, fmt.Errorf("bpe: LoadLlmc: bytes after the last of the %d tokens", n)
	}
	return &Decoder{data: string(data), off: off, eot: int(eot)}, nil
}

// noEOF turns a bare end of file into io.ErrUnexpectedEOF: inside a file
// whose header announced more, any end is unexpected.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
