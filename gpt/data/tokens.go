package data

import (
	"encoding/binary"
	"fmt"
	"os"
)

// llm.c's token file header: 256 little-endian int32 words, the magic
// number, the version and the token count, then the tokens as uint16.
const (
	LLMCMagic      = 20240520
	LLMCVersion    = 1
	llmcHeaderInts = 256
	llmcHeaderLen  = llmcHeaderInts * 4
)

// IsLLMC reports whether b starts with llm.c's token-file magic number.
func IsLLMC(b []byte) bool {
	return len(b) >= 4 && binary.LittleEndian.Uint32(b) == LLMCMagic
}

// ParseTokens decodes a token file's bytes: llm.c's format when it starts
// with the magic number (the header's version and count are checked against
// the length), raw little-endian uint16 otherwise.
func ParseTokens(b []byte) ([]uint16, error) {
	if IsLLMC(b) {
		if len(b) < llmcHeaderLen {
			return nil, fmt.Errorf("data: llm.c token file: %d bytes, shorter than its %d-byte header", len(b), llmcHeaderLen)
		}
		version := int32(binary.LittleEndian.Uint32(b[4:]))
		if version != LLMCVersion {
			return nil, fmt.Errorf("data: llm.c token file: version %d, want %d", version, LLMCVersion)
		}
		count := int64(int32(binary.LittleEndian.Uint32(b[8:])))
		body := b[llmcHeaderLen:]
		if count < 0 || int64(len(body)) != 2*count {
			return nil, fmt.Errorf("data: llm.c token file: header says %d tokens but %d bytes follow the header (want %d)", count, len(body), 2*count)
		}
		return decodeU16(body), nil
	}
	if len(b)%2 != 0 {
		return nil, fmt.Errorf("data: raw uint16 token file has an odd length (%d bytes)", len(b))
	}
	return decodeU16(b), nil
}

func decodeU16(b []byte) []uint16 {
	t := make([]uint16, len(b)/2)
	for i := range t {
		t[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return t
}

// EncodeTokens returns the bytes of a token file: llm.c's format if llmc,
// raw little-endian uint16 otherwise.
func EncodeTokens(tokens []uint16, llmc bool) []byte {
	off := 0
	if llmc {
		off = llmcHeaderLen
	}
	b := make([]byte, off+2*len(tokens))
	if llmc {
		binary.LittleEndian.PutUint32(b[0:], LLMCMagic)
		binary.LittleEndian.PutUint32(b[4:], LLMCVersion)
		binary.LittleEndian.PutUint32(b[8:], uint32(len(tokens)))
	}
	for i, t := range tokens {
		binary.LittleEndian.PutUint16(b[off+2*i:], t)
	}
	return b
}

// WriteTokens writes tokens to path (see EncodeTokens).
func WriteTokens(path string, tokens []uint16, llmc bool) error {
	return os.WriteFile(path, EncodeTokens(tokens, llmc), 0o644)
}
