package bpe

import (
	"encoding/binary"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// handmadeFiles writes encoder.json and vocab.bpe for a vocabulary whose
// ids 0..255 are the single bytes, then one id per new token made by the
// merges (raw bytes, in rank order), then the extra tokens.
func handmadeFiles(merges [][2]string, extra ...string) (encoderJSON, vocabBPE string) {
	vocab := map[string]int{}
	for b := range 256 {
		vocab[string(ByteRune(byte(b)))] = b
	}
	add := func(tok string) {
		if _, ok := vocab[tok]; !ok {
			vocab[tok] = len(vocab)
		}
	}
	var v strings.Builder
	v.WriteString("#version: 0.2\n")
	for _, m := range merges {
		l, r := toAlphabet([]byte(m[0])), toAlphabet([]byte(m[1]))
		add(l + r)
		v.WriteString(l + " " + r + "\n")
	}
	for _, e := range extra {
		add(toAlphabet([]byte(e)))
	}
	j, err := json.Marshal(vocab)
	if err != nil {
		panic(err)
	}
	return string(j), v.String()
}

// newHandmade loads the vocabulary of handmadeFiles.
func newHandmade(t testing.TB, merges [][2]string, extra ...string) *Tokenizer {
	t.Helper()
	ej, vb := handmadeFiles(merges, extra...)
	tok, err := Load(strings.NewReader(ej), strings.NewReader(vb))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return tok
}

// testMerges is the hand-made vocabulary of most tests.
var testMerges = [][2]string{
	{"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}, {" ", "hello"},
	{" ", "w"}, {"o", "r"}, {" w", "or"}, {"l", "d"}, {" wor", "ld"},
	{"'", "s"}, {"1", "2"}, {"12", "3"},
	{"\xe4", "\xb8"}, {"\xe4\xb8", "\xad"}, // 中
	{"a", "a"}, {"aa", "aa"}, {"aaaa", "aaaa"},
}

func newTestTokenizer(t testing.TB) *Tokenizer {
	return newHandmade(t, testMerges, EndOfText)
}

// tokens returns the bytes of each of ids.
func tokens(t testing.TB, tok *Tokenizer, ids []int) []string {
	t.Helper()
	out := make([]string, len(ids))
	for i, id := range ids {
		s, ok := tok.Token(id)
		if !ok {
			t.Fatalf("ids[%d] = %d is not a token", i, id)
		}
		out[i] = s
	}
	return out
}

// refBPE is the merge loop of OpenAI's encoder.py (Encoder.bpe), written
// out literally over strings: the reference for Tokenizer.bpe.
func refBPE(word []string, ranks map[[2]string]int) []string {
	word = slices.Clone(word)
	for len(word) > 1 {
		best, bestRank := [2]string{}, -1
		for i := 0; i+1 < len(word); i++ {
			p := [2]string{word[i], word[i+1]}
			if r, ok := ranks[p]; ok && (bestRank < 0 || r < bestRank) {
				best, bestRank = p, r
			}
		}
		if bestRank < 0 {
			break
		}
		var next []string
		for i := 0; i < len(word); {
			if i+1 < len(word) && word[i] == best[0] && word[i+1] == best[1] {
				next = append(next, best[0]+best[1])
				i += 2
			} else {
				next = append(next, word[i])
				i++
			}
		}
		word = next
	}
	return word
}

// refEncode encodes text with Pieces and refBPE: the reference for Encode.
func refEncode(text string, merges [][2]string) []string {
	ranks := map[[2]string]int{}
	for i, m := range merges {
		if _, dup := ranks[m]; !dup {
			ranks[m] = i
		}
	}
	var out []string
	for p := range Pieces(text) {
		word := make([]string, len(p))
		for i := range len(p) {
			word[i] = p[i : i+1]
		}
		out = append(out, refBPE(word, ranks)...)
	}
	return out
}

// llmcFile writes a tokenizer file in llm.c's format.
func llmcFile(version, n, eot uint32, toks []string) []byte {
	header := make([]uint32, 256)
	header[0], header[1], header[2] = llmcMagic, version, n
	if version == 2 {
		header[3] = eot
	}
	out := binary.LittleEndian.AppendUint32(nil, 0)[:0]
	for _, w := range header {
		out = binary.LittleEndian.AppendUint32(out, w)
	}
	for _, tok := range toks {
		out = append(out, byte(len(tok)))
		out = append(out, tok...)
	}
	return out
}

// llmcOf writes the tokens of tok in llm.c's format (version 2), as
// llm.c's train_gpt2.py does.
func llmcOf(tok *Tokenizer) []byte {
	toks := make([]string, tok.VocabSize())
	for id := range toks {
		toks[id], _ = tok.Token(id)
	}
	return llmcFile(2, uint32(len(toks)), uint32(tok.EOT()), toks)
}
