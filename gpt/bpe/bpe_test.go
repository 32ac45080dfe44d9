package bpe

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestByteAlphabet(t *testing.T) {
	cases := []struct {
		b byte
		r rune
	}{
		{'!', '!'}, {'A', 'A'}, {'~', '~'}, {0xa1, '¡'}, {0xac, '¬'}, {0xae, '®'}, {0xff, 'ÿ'},
		{0x00, 0x100}, {'\n', 'Ċ'}, {' ', 'Ġ'}, {0x7f, 0x121}, {0x80, 0x122}, {0xa0, 0x142}, {0xad, 0x143},
	}
	for _, c := range cases {
		if got := ByteRune(c.b); got != c.r {
			t.Errorf("ByteRune(%#x) = %U, want %U", c.b, got, c.r)
		}
	}
	seen := map[rune]bool{}
	for b := range 256 {
		r := ByteRune(byte(b))
		if seen[r] {
			t.Fatalf("ByteRune(%#x) = %U twice", b, r)
		}
		seen[r] = true
		if back, ok := RuneByte(r); !ok || back != byte(b) {
			t.Errorf("RuneByte(ByteRune(%#x)) = %#x, %v", b, back, ok)
		}
	}
	for _, r := range []rune{-1, ' ', '\n', 0x7f, 0xa0, 0xad, 0x144, 0x10ffff} {
		if b, ok := RuneByte(r); ok {
			t.Errorf("RuneByte(%U) = %#x, true; want false", r, b)
		}
	}
}

func TestEncodeHandmade(t *testing.T) {
	tok := newTestTokenizer(t)
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"hello world", []string{"hello", " world"}},
		{"hello  world", []string{"hello", " ", " world"}},
		{"help", []string{"he", "l", "p"}},
		{"hellohello", []string{"hello", "hello"}},
		{"Hello", []string{"H", "e", "ll", "o"}},
		{"it's", []string{"i", "t", "'s"}},
		{"It'S", []string{"I", "t", "'", "S"}},
		{"123123 12", []string{"123", "123", " ", "12"}},
		{"中文", []string{"中", "\xe6", "\x96", "\x87"}},
		{"aaaaaaaaa", []string{"aaaaaaaa", "a"}},
		{"a\xffhello", []string{"a", "\xff", "hello"}},
		{"\n\n hello", []string{"\n", "\n", " hello"}},
		{EndOfText, []string{"<", "|", "e", "n", "d", "o", "f", "t", "e", "x", "t", "|", ">"}},
	}
	for _, c := range cases {
		ids := tok.Encode(c.in)
		if got := tokens(t, tok, ids); !slices.Equal(got, c.want) {
			t.Errorf("Encode(%q) = %q, want %q", c.in, got, c.want)
		}
		if back, err := tok.Decode(ids); err != nil || string(back) != c.in {
			t.Errorf("Decode(Encode(%q)) = %q, %v", c.in, back, err)
		}
	}
}

// TestMergeOrder checks the merge loop against encoder.py's semantics on
// vocabularies made for each case.
func TestMergeOrder(t *testing.T) {
	cases := []struct {
		name   string
		merges [][2]string
		in     string
		want   []string
	}{
		{"lower rank first", [][2]string{{"a", "b"}, {"b", "c"}}, "abc", []string{"ab", "c"}},
		{"lower rank first, swapped", [][2]string{{"b", "c"}, {"a", "b"}}, "abc", []string{"a", "bc"}},
		{"overlapping pairs merge left to right", [][2]string{{"a", "a"}}, "aaa", []string{"aa", "a"}},
		{"rounds double", [][2]string{{"a", "a"}, {"aa", "aa"}}, "aaaaaaa", []string{"aaaa", "aa", "a"}},
		{"a new pair of lower rank comes next", [][2]string{{"ab", "c"}, {"a", "b"}}, "abc", []string{"abc"}},
		// encoder.py merges every "a b" of the word before it looks at
		// "ab a", even though "ab a" ranks lower: not "aba", "b".
		{"every occurrence of a pair in one round", [][2]string{{"ab", "a"}, {"a", "b"}}, "abab", []string{"ab", "ab"}},
		{"no merge applies", [][2]string{{"x", "y"}}, "abc", []string{"a", "b", "c"}},
		{"merges stay inside a pre-token", [][2]string{{"a", " "}, {"a", "b"}}, "a b", []string{"a", " ", "b"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tok := newHandmade(t, c.merges)
			got := tokens(t, tok, tok.Encode(c.in))
			if !slices.Equal(got, c.want) {
				t.Errorf("Encode(%q) = %q, want %q", c.in, got, c.want)
			}
			if ref := refEncode(c.in, c.merges); !slices.Equal(ref, c.want) {
				t.Errorf("the reference gives %q, want %q", ref, c.want)
			}
		})
	}
}

// randomMerges makes n merges over the letters of alphabet, each joining
// two tokens that exist already, in a random rank order (so a merge can
// rank below the merges that make its halves).
func randomMerges(r *rand.Rand, alphabet string, n int) [][2]string {
	toks := strings.Split(alphabet, "")
	have := map[string]bool{}
	seen := map[[2]string]bool{}
	var merges [][2]string
	for tries := 0; len(merges) < n && tries < 100*n; tries++ {
		m := [2]string{toks[r.IntN(len(toks))], toks[r.IntN(len(toks))]}
		if seen[m] || len(m[0])+len(m[1]) > 8 {
			continue
		}
		seen[m] = true
		merges = append(merges, m)
		if w := m[0] + m[1]; !have[w] {
			have[w] = true
			toks = append(toks, w)
		}
	}
	r.Shuffle(len(merges), func(i, j int) { merges[i], merges[j] = merges[j], merges[i] })
	return merges
}

// TestMergeMatchesReference compares Encode with the literal merge loop of
// encoder.py on random vocabularies and words.
func TestMergeMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for v := range 40 {
		merges := randomMerges(r, "abc", 5+r.IntN(40))
		tok := newHandmade(t, merges)
		for range 100 {
			var b strings.Builder
			for range 1 + r.IntN(40) {
				b.WriteByte("abc"[r.IntN(3)])
			}
			word := b.String()
			got, want := tokens(t, tok, tok.Encode(word)), refEncode(word, merges)
			if !slices.Equal(got, want) {
				t.Fatalf("vocabulary %d %q: Encode(%q) = %q, encoder.py's loop gives %q", v, merges, word, got, want)
			}
		}
	}
}

// TestLongWord encodes single pre-tokens of 256 KiB: the merge loop is
// O(n log n), where encoder.py's is quadratic.
func TestLongWord(t *testing.T) {
	tok := newTestTokenizer(t)
	n := 1 << 18
	if testing.Short() {
		n = 1 << 14
	}
	ids := tok.Encode(strings.Repeat("a", n))
	if len(ids) != n/8 {
		t.Fatalf("%d a's: %d tokens, want %d", n, len(ids), n/8)
	}
	for i, s := range tokens(t, tok, ids) {
		if s != "aaaaaaaa" {
			t.Fatalf("token %d is %q", i, s)
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	word := make([]byte, n)
	for i := range word {
		word[i] = "helo"[r.IntN(4)]
	}
	ids = tok.Encode(string(word))
	if back, err := tok.Decode(ids); err != nil || !bytes.Equal(back, word) {
		t.Fatalf("a random word of %d bytes does not round-trip (%v)", n, err)
	}
	short := string(word[:3000])
	if got, want := tokens(t, tok, tok.Encode(short)), refEncode(short, testMerges); !slices.Equal(got, want) {
		t.Fatalf("a random word of 3000 bytes: Encode differs from encoder.py's loop")
	}
}

func TestEncodeWithSpecial(t *testing.T) {
	tok := newTestTokenizer(t)
	eot := tok.EOT()
	if s, ok := tok.Token(eot); !ok || s != EndOfText {
		t.Fatalf("Token(EOT()=%d) = %q, %v", eot, s, ok)
	}
	hello, world := tok.Encode("hello"), tok.Encode(" world")
	cases := []struct {
		in   string
		want []int
	}{
		{"", nil},
		{EndOfText, []int{eot}},
		{EndOfText + EndOfText, []int{eot, eot}},
		{"hello" + EndOfText + " world", slices.Concat(hello, []int{eot}, world)},
		{"hello <|endoftext", slices.Concat(hello, tok.Encode(" <|endoftext"))},
	}
	for _, c := range cases {
		got := tok.EncodeWithSpecial(c.in)
		if !slices.Equal(got, c.want) {
			t.Errorf("EncodeWithSpecial(%q) = %v, want %v", c.in, got, c.want)
		}
		if back, err := tok.Decode(got); err != nil || string(back) != c.in {
			t.Errorf("Decode(EncodeWithSpecial(%q)) = %q, %v", c.in, back, err)
		}
		if slices.Contains(tok.Encode(c.in), eot) {
			t.Errorf("Encode(%q) holds the end-of-text token", c.in)
		}
	}
	// Without an end-of-text token EncodeWithSpecial is Encode.
	plain := newHandmade(t, testMerges)
	if plain.EOT() != -1 {
		t.Fatalf("EOT() = %d without <|endoftext|>, want -1", plain.EOT())
	}
	if got, want := plain.EncodeWithSpecial(EndOfText), plain.Encode(EndOfText); !slices.Equal(got, want) {
		t.Errorf("EncodeWithSpecial without EOT = %v, Encode = %v", got, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	tok := newTestTokenizer(t)
	n := tok.VocabSize()
	cases := []struct {
		ids     []int
		want    string
		wantErr string
	}{
		{nil, "", ""},
		{[]int{'h', 'i'}, "hi", ""},
		{[]int{'h', -1, 'i'}, "h", "ids[1] = -1 is not a token id"},
		{[]int{'h', 'i', n}, "hi", fmt.Sprintf("ids[2] = %d is not a token id (the vocabulary has %d tokens)", n, n)},
	}
	for _, c := range cases {
		got, err := tok.Decode(c.ids)
		if string(got) != c.want {
			t.Errorf("Decode(%v) = %q, want %q", c.ids, got, c.want)
		}
		if (err == nil) != (c.wantErr == "") || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("Decode(%v) error %v, want %q", c.ids, err, c.wantErr)
		}
	}
	if got, err := tok.Decoder().AppendDecode([]byte("say "), []int{'h', 'i'}); err != nil || string(got) != "say hi" {
		t.Errorf("AppendDecode = %q, %v", got, err)
	}
	for _, id := range []int{-1, n, math.MaxInt} {
		if s, ok := tok.Token(id); ok {
			t.Errorf("Token(%d) = %q, true", id, s)
		}
	}
	if id, ok := tok.ID("hello"); !ok || tokens(t, tok, []int{id})[0] != "hello" {
		t.Errorf("ID(hello) = %d, %v", id, ok)
	}
	if _, ok := tok.ID("hellos"); ok {
		t.Error("ID(hellos) found a token")
	}
}

func TestCacheBounded(t *testing.T) {
	tok := newTestTokenizer(t)
	long := strings.Repeat("hel", cacheMaxWord)
	tok.Encode(long)
	if _, ok := tok.cache.get(long); ok {
		t.Errorf("a word of %d bytes was cached", len(long))
	}
	var b strings.Builder
	for i := range 2*cacheEntries + 10 {
		fmt.Fprintf(&b, " hello%x", i)
	}
	text := b.String()
	first := tok.Encode(text)
	if n := len(tok.cache.m); n > cacheEntries || n == 0 {
		t.Errorf("the cache holds %d words, want 1..%d", n, cacheEntries)
	}
	if again := tok.Encode(text); !slices.Equal(again, first) {
		t.Error("encoding again (from the cache) gives other tokens")
	}
	if got, want := tokens(t, tok, first[:3]), []string{" hello", "0", " hello"}; !slices.Equal(got, want) {
		t.Errorf("tokens %q, want %q", got, want)
	}
}

func TestConcurrentEncode(t *testing.T) {
	tok := newTestTokenizer(t)
	r := rand.New(rand.NewPCG(7, 8))
	texts := make([]string, 200)
	want := make([][]int, len(texts))
	for i := range texts {
		texts[i] = randomText(r, 50)
		want[i] = newTestTokenizer(t).Encode(texts[i])
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for g := range 4 {
		wg.Go(func() {
			for k := range texts {
				i := (k + 50*g) % len(texts)
				if got := tok.Encode(texts[i]); !slices.Equal(got, want[i]) {
					errs <- fmt.Sprintf("goroutine %d: Encode(%q) = %v, want %v", g, texts[i], got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestZeroValues(t *testing.T) {
	var d Decoder
	if d.VocabSize() != 0 {
		t.Errorf("zero Decoder: VocabSize %d", d.VocabSize())
	}
	if _, ok := d.Token(0); ok {
		t.Error("zero Decoder: Token(0) found")
	}
	if _, err := d.Decode([]int{0}); err == nil || !strings.Contains(err.Error(), "ids[0] = 0 is not a token id (the vocabulary has 0 tokens)") {
		t.Errorf("zero Decoder: Decode error %v", err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "bpe: Encode: the Tokenizer has no vocabulary") {
			t.Errorf("zero Tokenizer: Encode panicked with %v", r)
		}
	}()
	var tok Tokenizer
	tok.Encode("x")
}
