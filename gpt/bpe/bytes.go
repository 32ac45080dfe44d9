package bpe

// GPT-2 stores its tokens (in encoder.json and vocab.bpe) not as raw bytes
// but as strings over a 256-character alphabet: bytes_to_unicode in OpenAI's
// encoder.py maps every byte to a printable, non-space character. The 188
// bytes that are printable Latin-1 characters ('!'..'~', '¡'..'¬',
// '®'..'ÿ') map to themselves; the other 68 (the controls, the space, DEL,
// NBSP and the soft hyphen) map, in increasing byte order, to U+0100,
// U+0101, ... U+0143. For example the space 0x20 is 'Ġ' (U+0120) and the
// newline 0x0A is 'Ċ' (U+010A).

// byteRunes[b] is the character that stands for the byte b.
var byteRunes = makeByteRunes()

// runeBytes[r] is the byte that the character r stands for, or -1; its
// length is the first rune past the alphabet (U+0144).
var runeBytes = makeRuneBytes()

func makeByteRunes() [256]rune {
	var t [256]rune
	n := rune(0)
	for b := 0; b < 256; b++ {
		if ('!' <= b && b <= '~') || (0xA1 <= b && b <= 0xAC) || (0xAE <= b && b <= 0xFF) {
			t[b] = rune(b)
		} else {
			t[b] = 256 + n
			n++
		}
	}
	return t
}

func makeRuneBytes() []int16 {
	last := rune(0)
	for _, r := range byteRunes {
		last = max(last, r)
	}
	t := make([]int16, last+1)
	for i := range t {
		t[i] = -1
	}
	for b, r := range byteRunes {
		t[r] = int16(b)
	}
	return t
}

// ByteRune returns the character that stands for the byte b in GPT-2's
// files (bytes_to_unicode in OpenAI's encoder.py): b itself for the
// printable Latin-1 bytes, and U+0100 + k for the k-th (from 0, in byte
// order) of the other 68 bytes, for example 'Ġ' (U+0120) for the space.
func ByteRune(b byte) rune { return byteRunes[b] }

// RuneByte returns the byte that the character r stands for in GPT-2's
// files, the inverse of ByteRune; ok is false when r is not one of the 256
// characters of that alphabet.
func RuneByte(r rune) (b byte, ok bool) {
	if r < 0 || int(r) >= len(runeBytes) || runeBytes[r] < 0 {
		return 0, false
	}
	return byte(runeBytes[r]), true
}

// fromAlphabet converts a token written in GPT-2's alphabet to its bytes.
// It returns the first character outside the alphabet, if any.
func fromAlphabet(s string) ([]byte, rune, bool) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		b, ok := RuneByte(r)
		if !ok {
			return nil, r, false
		}
		out = append(out, b)
	}
	return out, 0, true
}

// toAlphabet writes the bytes of a token in GPT-2's alphabet.
func toAlphabet(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = byteRunes[c]
	}
	return string(r)
}
