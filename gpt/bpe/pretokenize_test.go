package bpe

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// pieceCases are GPT-2 pre-tokenizations of tricky strings. The expected
// pieces are what Python's regex module (2026.5.9) returns for
// re.findall(GPT-2's pattern, s); for invalid UTF-8, for the bytes decoded
// with surrogateescape (and the pieces encoded back the same way).
var pieceCases = []struct {
	in   string
	want []string
}{
	{"", nil},
	{"Hello world", []string{"Hello", " world"}},
	{"  hello", []string{" ", " hello"}},
	{"   hello", []string{"  ", " hello"}},
	{"hello ", []string{"hello", " "}},
	{"hello   ", []string{"hello", "   "}},
	{" ", []string{" "}},
	{"   ", []string{"   "}},
	{"a  b", []string{"a", " ", " b"}},
	{"a\tb", []string{"a", "\t", "b"}},
	{"a\t\tb", []string{"a", "\t", "\t", "b"}},
	{"a \tb", []string{"a", " ", "\t", "b"}},
	{"a\n\nb", []string{"a", "\n", "\n", "b"}},
	{"x\n\n", []string{"x", "\n\n"}},
	{"\n\n\n", []string{"\n\n\n"}},
	{" \n \n x", []string{" \n \n", " x"}},
	{"\t\t\nx", []string{"\t\t", "\n", "x"}},
	{"it's", []string{"it", "'s"}},
	{"I'M", []string{"I", "'", "M"}},
	{"we're they've I'll he'd", []string{"we", "'re", " they", "'ve", " I", "'ll", " he", "'d"}},
	{"'S", []string{"'", "S"}},
	{"'still", []string{"'s", "till"}},
	{"x''s", []string{"x", "''", "s"}},
	{"''s", []string{"''", "s"}},
	{"don't!", []string{"don", "'t", "!"}},
	{"'", []string{"'"}},
	{"'r", []string{"'", "r"}},
	{"' s", []string{"'", " s"}},
	{"'ll've", []string{"'ll", "'ve"}},
	{"1234567", []string{"1234567"}},
	{"3.14", []string{"3", ".", "14"}},
	{"x1y2", []string{"x", "1", "y", "2"}},
	{" 42 ", []string{" 42", " "}},
	{"١٢٣ Ⅻ ½", []string{"١٢٣", " Ⅻ", " ½"}},
	{"abc123def", []string{"abc", "123", "def"}},
	{"!!!", []string{"!!!"}},
	{"hello, world!", []string{"hello", ",", " world", "!"}},
	{" ...!?", []string{" ...!?"}},
	{"--flag=value", []string{"--", "flag", "=", "value"}},
	{"a_b", []string{"a", "_", "b"}},
	{"(x)", []string{"(", "x", ")"}},
	{"请考试我的软件！12345", []string{"请考试我的软件", "！", "12345"}},
	{"日本語 です。", []string{"日本語", " です", "。"}},
	{"Привет, мир!", []string{"Привет", ",", " мир", "!"}},
	{"naïve café", []string{"naïve", " café"}},
	{"e\u0301", []string{"e", "\u0301"}},
	{"👋 world 🌍", []string{"👋", " world", " 🌍"}},
	{" 👨\u200d👩\u200d👧", []string{" 👨\u200d👩\u200d👧"}},
	{"\u00a0x", []string{"\u00a0", "x"}},
	{"a\u2003\u2003b", []string{"a", "\u2003", "\u2003", "b"}},
	{"a\u3000b", []string{"a", "\u3000", "b"}},
	{"\u001c\u001fa", []string{"\u001c\u001f", "a"}},
	{"a\u000bb", []string{"a", "\u000b", "b"}},
	{"a\u0085b", []string{"a", "\u0085", "b"}},
	// Invalid UTF-8: every byte is a character of class other.
	{"a\xffb", []string{"a", "\xff", "b"}},
	{" \xff\xfe!", []string{" \xff\xfe!"}},
	{"\xe2\x82", []string{"\xe2\x82"}},
	{"x \x80", []string{"x", " \x80"}},
	{"'\xffs", []string{"'\xff", "s"}},
	{"\ufffd\xff", []string{"\ufffd\xff"}},
	{"\xed\xa0\x80a", []string{"\xed\xa0\x80", "a"}},
	{"\xc0\xafz", []string{"\xc0\xaf", "z"}},
	{"  \xff", []string{" ", " \xff"}},
}

func TestPieces(t *testing.T) {
	for _, c := range pieceCases {
		got := slices.Collect(Pieces(c.in))
		if !slices.Equal(got, c.want) {
			t.Errorf("Pieces(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPiecesStopsEarly(t *testing.T) {
	var got []string
	for p := range Pieces("one two three") {
		got = append(got, p)
		if len(got) == 2 {
			break
		}
	}
	if want := []string{"one", " two"}; !slices.Equal(got, want) {
		t.Errorf("first two pieces %q, want %q", got, want)
	}
}

// White space as Python's regex module matches \s: Unicode's White_Space.
const whiteSpaceClass = `\t-\r \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}`

// oracleHead matches the alternatives of GPT-2's pattern before the
// white-space ones, in order (Go's regexp prefers the first alternative
// that matches, as a backtracking engine does; it reads each byte of
// invalid UTF-8 as U+FFFD, which is of class other like the byte).
var (
	oracleHead  = regexp.MustCompile(`^(?:'s|'t|'re|'ve|'m|'ll|'d| ?\pL+| ?\pN+| ?[^` + whiteSpaceClass + `\pL\pN]+)`)
	oracleSpace = regexp.MustCompile(`^[` + whiteSpaceClass + `]+`)
)

// oraclePieces pre-tokenizes s with regexps, doing the lookahead of
// \s+(?!\S) by hand: an independent check of pieceEnd's scanner.
func oraclePieces(s string) []string {
	var out []string
	for s != "" {
		n := len(oracleHead.FindString(s))
		if n == 0 {
			run := oracleSpace.FindString(s)
			n = len(run)
			if n < len(s) {
				// Followed by a non-space: give back the last character
				// unless it is the only one.
				if _, last := lastRune(run); last < n {
					n -= last
				}
			}
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// lastRune returns the start and length of the last character of s.
func lastRune(s string) (start, size int) {
	r := []rune(s)
	size = len(string(r[len(r)-1]))
	return len(s) - size, size
}

// randomText returns text drawn from characters that exercise every
// branch of the pre-tokenizer, and raw bytes.
func randomText(r *rand.Rand, n int) string {
	parts := []string{" ", " ", "  ", "\t", "\n", "\r\n", "\v", "\u00a0", "\u3000", "\u2028", "\x1c",
		"'", "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "s", "r", "e", "l", "v",
		"a", "Z", "é", "中", "ß", "1", "٣", "½", "Ⅻ", "!", ".", "_", "\u0301", "👋", "\u200d",
		"\xff", "\x80", "\xe2\x82", "\xed\xa0\x80", "\ufffd", "<|endoftext|>"}
	var b strings.Builder
	for range n {
		if r.IntN(8) == 0 {
			b.WriteByte(byte(r.IntN(256)))
		} else {
			b.WriteString(parts[r.IntN(len(parts))])
		}
	}
	return b.String()
}

func TestPiecesOracle(t *testing.T) {
	for _, c := range pieceCases {
		if got := oraclePieces(c.in); !slices.Equal(got, c.want) {
			t.Fatalf("the oracle itself is wrong: oraclePieces(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		s := randomText(r, r.IntN(30))
		got, want := slices.Collect(Pieces(s)), oraclePieces(s)
		if !slices.Equal(got, want) {
			t.Fatalf("case %d: Pieces(%q) = %q, the regexp oracle gives %q", i, s, got, want)
		}
	}
}

// TestClasses pins down the character classes where Go's unicode package
// and Python's notions differ or could be confused.
func TestClasses(t *testing.T) {
	cases := []struct {
		r    rune
		want uint8
		why  string
	}{
		{' ', classSpace, "space"},
		{'\v', classSpace, "vertical tab is White_Space"},
		{0x85, classSpace, "NEL is White_Space"},
		{0xa0, classSpace, "NBSP is White_Space"},
		{0x1c, classOther, "U+001C is str.isspace() in Python but not \\s in the regex module"},
		{0x1f, classOther, "U+001F likewise"},
		{0x200b, classOther, "zero-width space is not White_Space"},
		{0x180e, classOther, "Mongolian vowel separator left White_Space in Unicode 6.3"},
		{'_', classOther, "underscore is punctuation, not a letter"},
		{0x2164, classNumber, "Roman numeral five is Nl"},
		{0xbd, classNumber, "one half is No"},
		{0x2b0, classLetter, "modifier letters (Lm) are \\p{L}"},
		{0x301, classOther, "combining marks (Mn) are not \\p{L}"},
		{0xfffd, classOther, "the replacement character is So"},
	}
	for _, c := range cases {
		if got := runeClass(c.r); got != c.want {
			t.Errorf("runeClass(%U) = %d, want %d: %s", c.r, got, c.want, c.why)
		}
	}
}
