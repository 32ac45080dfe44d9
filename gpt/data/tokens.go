package data

import (
	"encoding/binary"
	"fmt"

	"github.com/simdgpt/simdgpt/internal/atomicfile"
)

// llm.c's token file header: 256 little-endian int32 words, the magic
// number, the version and the token count, then the tokens as uint16.
const (
	LLMCMagic      = 20240520
	LLMCVersion    = 1
	llmcHeaderInts = 256
	llmcHeaderLen  = llmcHeaderInts * 4
)

// llm.c's other file types, told apart by their magic numbers.
var llmcOtherMagic = map[uint32]string{
	20240326: "an llm.c model checkpoint (GPT-2 weights)",
	20240327: "an llm.c model checkpoint (bfloat16 GPT-2 weights)",
	20240415: "an llm.c debug state file",
}

// wrongMagic returns an error when b, read as raw tokens, is in fact one of
// llm.c's files: another type (its magic number says which), or a token
// file with a wrong magic number (its header's version and token count
// match the length).
func wrongMagic(b []byte) error {
	if IsLLMC(b) || len(b) < 12 {
		return nil
	}
	magic := binary.LittleEndian.Uint32(b)
	if what, ok := llmcOtherMagic[magic]; ok {
		return fmt.Errorf("data: magic number %d: this is %s, not a token file", magic, what)
	}
	version := binary.LittleEndian.Uint32(b[4:])
	count := int64(int32(binary.LittleEndian.Uint32(b[8:])))
	if len(b) >= llmcHeaderLen && version == LLMCVersion && count >= 0 && int64(len(b)-llmcHeaderLen) == 2*count {
		return fmt.Errorf("data: looks like an llm.c token file (version %d, %d tokens after a %d-byte header, as the header says) but its magic number is %d, not %d; refusing to read it as raw tokens", version, count, llmcHeaderLen, magic, LLMCMagic)
	}
	return nil
}

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

// WriteTokens replaces path with a token file of tokens (see
// EncodeTokens), atomically (the old file or the new one, never a part);
// path must be a regular file, a link to one or new. A file Load would
// refuse, above MaxFileBytes, is not written.
func WriteTokens(path string, tokens []uint16, llmc bool) error {
	n := 2 * int64(len(tokens))
	if llmc {
		n += llmcHeaderLen
	}
	if n > MaxFileBytes {
		return fmt.Errorf("write %s: %d tokens make %d bytes, more than the limit of %d a token file is read with", path, len(tokens), n, MaxFileBytes)
	}
	return atomicfile.Write(path, EncodeTokens(tokens, llmc))
}
