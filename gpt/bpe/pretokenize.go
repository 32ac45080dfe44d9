package bpe

import (
	"iter"
	"unicode"
	"unicode/utf8"
)

// Character classes of GPT-2's pre-tokenization pattern.
const (
	classOther  = iota // [^\s\p{L}\p{N}], and every byte of invalid UTF-8
	classLetter        // \p{L}
	classNumber        // \p{N}
	classSpace         // \s
)

// asciiClass is the class of each ASCII character.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := range t {
		t[r] = runeClass(rune(r))
	}
	return t
}()

// runeClass is the class of a valid character. Go's unicode.IsSpace is
// Unicode's White_Space property, which is what Python's regex module
// matches with \s in a str pattern (not Python's str.isspace, which adds
// U+001C..U+001F); unicode.IsLetter and unicode.IsNumber are the general
// categories L and N, as \p{L} and \p{N}.
func runeClass(r rune) uint8 {
	switch {
	case unicode.IsSpace(r):
		return classSpace
	case unicode.IsLetter(r):
		return classLetter
	case unicode.IsNumber(r):
		return classNumber
	}
	return classOther
}

// charAt returns the class and the length in bytes of the character that
// starts at s[i] (i < len(s)). A byte that does not start valid UTF-8 is a
// character of its own, of class other.
func charAt(s string, i int) (class uint8, size int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && n == 1 {
		return classOther, 1
	}
	return runeClass(r), n
}

// runEnd returns the end of the run of characters of class c that starts
// at s[i].
func runEnd(s string, i int, c uint8) int {
	for i < len(s) {
		k, n := charAt(s, i)
		if k != c {
			break
		}
		i += n
	}
	return i
}

// pieceEnd returns the end of the pre-token that starts at s[i] (i <
// len(s)): the match of GPT-2's pattern
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// at i, the alternatives tried in order as a backtracking regexp does.
func pieceEnd(s string, i int) int {
	if s[i] == '\'' && i+1 < len(s) {
		// Contractions: lowercase ASCII only, after U+0027 only.
		switch s[i+1] {
		case 's', 't', 'm', 'd':
			return i + 2
		}
		if i+2 < len(s) {
			switch s[i+1 : i+3] {
			case "re", "ve", "ll":
				return i + 3
			}
		}
	}
	c, n := charAt(s, i)
	if s[i] == ' ' && i+1 < len(s) {
		// " ?" takes the space when a letter, number or other follows.
		if k, m := charAt(s, i+1); k != classSpace {
			return runEnd(s, i+1+m, k)
		}
	}
	if c != classSpace {
		return runEnd(s, i+n, c)
	}
	// \s+(?!\S): the whole run of white space when it ends the text (or,
	// trivially, when more white space follows, which cannot happen at the
	// end of a maximal run); otherwise the run less its last character,
	// which starts the next pre-token. A single white-space character
	// before a non-space fails that alternative and matches \s+ alone.
	end, last := i+n, i
	for end < len(s) {
		k, m := charAt(s, end)
		if k != classSpace {
			break
		}
		last = end
		end += m
	}
	if end < len(s) && last > i {
		return last
	}
	return end
}

// Pieces returns the pre-tokens of text, in order: the successive matches
// of GPT-2's pattern
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// as Python's regex module finds them (re.findall in OpenAI's encoder.py),
// which Encode then splits into tokens one by one. The pieces concatenate
// to text. Invalid UTF-8 is split as if each of its bytes were a
// character of class other (neither white space, letter nor number), as
// Python would with the bytes decoded by the surrogateescape handler.
func Pieces(text string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for i := 0; i < len(text); {
			j := pieceEnd(text, i)
			if !yield(text[i:j]) {
				return
			}
			i = j
		}
	}
}
