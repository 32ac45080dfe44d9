package bpe_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/simdgpt/simdgpt/gpt/bpe"
)

// alphabet writes raw bytes in GPT-2's byte alphabet, as its files do.
func alphabet(s string) string {
	var b strings.Builder
	for i := range len(s) {
		b.WriteRune(bpe.ByteRune(s[i]))
	}
	return b.String()
}

// A hand-made vocabulary: the 256 single bytes, and the tokens made by six
// merges.
func Example() {
	vocab := map[string]int{}
	for b := range 256 {
		vocab[string(bpe.ByteRune(byte(b)))] = b
	}
	merges := [][2]string{{"l", "o"}, {"lo", "w"}, {" ", "low"}, {"e", "r"}, {" low", "er"}, {"s", "t"}}
	vocabBPE := "#version: 0.2\n"
	for i, m := range merges {
		vocab[alphabet(m[0]+m[1])] = 256 + i
		vocabBPE += alphabet(m[0]) + " " + alphabet(m[1]) + "\n"
	}
	encoderJSON, err := json.Marshal(vocab)
	if err != nil {
		panic(err)
	}
	tok, err := bpe.Load(strings.NewReader(string(encoderJSON)), strings.NewReader(vocabBPE))
	if err != nil {
		panic(err)
	}

	text := "lower  lowest\xff"
	fmt.Printf("pre-tokens %q\n", slices.Collect(bpe.Pieces(text)))
	ids := tok.Encode(text)
	fmt.Println("ids", ids)
	var toks []string
	for _, id := range ids {
		s, _ := tok.Token(id)
		toks = append(toks, s)
	}
	fmt.Printf("tokens %q\n", toks)
	back, err := tok.Decode(ids)
	fmt.Printf("decoded %q, error %v\n", back, err)
	// Output:
	// pre-tokens ["lower" " " " lowest" "\xff"]
	// ids [257 259 32 258 101 261 255]
	// tokens ["low" "er" " " " low" "e" "st" "\xff"]
	// decoded "lower  lowest\xff", error <nil>
}
