package bpe

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/simdgpt/simdgpt/internal/memtest"
)

// adversarialTexts returns texts of n bytes that pre-tokenize into one
// long pre-token or into many short distinct ones.
func adversarialTexts(n int) map[string]string {
	r := rand.New(rand.NewPCG(7, 8))
	random := func(alphabet string) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	bytes := make([]byte, n)
	for i := range bytes {
		bytes[i] = byte(r.Uint32())
	}
	return map[string]string{
		"one letter":       strings.Repeat("a", n),
		"one digit":        strings.Repeat("7", n),
		"random digits":    random("0123456789"),
		"spaces":           strings.Repeat(" ", n),
		"newlines":         strings.Repeat("\n", n),
		"punctuation":      strings.Repeat("!", n),
		"mixed marks":      random("!?.,;:-_()[]{}<>/\\|@#$%^&*~`\"+="),
		"random bytes":     string(bytes),
		"invalid UTF-8":    strings.Repeat("\xff", n),
		"invalid runs":     random("\x80\x81\xbf\xc0\xfe\xff"),
		"random letters":   random("helo"),
		"short words":      random("abcdefghijklmnopqrstuvwxyz      "),
		"end-of-text mark": strings.Repeat(EndOfText, n/len(EndOfText)),
	}
}

// TestEncodeBytesBound measures the memory that Encode and
// EncodeWithSpecial take at their peak on adversarial texts and checks
// that EncodeBytes bounds it.
func TestEncodeBytesBound(t *testing.T) {
	n := 1 << 20
	toks := map[string]*Tokenizer{"hand-made": newTestTokenizer(t)}
	if os.Getenv(gpt2DirEnv) != "" {
		toks["GPT-2"] = gpt2Tokenizer(t)
	}
	for tname, tok := range toks {
		for name, text := range adversarialTexts(n) {
			for _, special := range []bool{false, true} {
				if special && name != "end-of-text mark" && name != "one letter" {
					continue
				}
				var ids []int
				grew := memtest.PeakGrowth(func() {
					if special {
						ids = tok.EncodeWithSpecial(text)
					} else {
						ids = tok.Encode(text)
					}
				})
				est := EncodeBytes(text)
				t.Logf("%s, %s, special %v: peak %.1f MiB, EncodeBytes %.1f MiB", tname, name, special, float64(grew)/(1<<20), float64(est)/(1<<20))
				if grew > est {
					t.Errorf("%s, %s (%d bytes, special %v): the memory grew by %d bytes at its peak, above EncodeBytes' %d", tname, name, len(text), special, grew, est)
				}
				if len(ids) == 0 || len(ids) > len(text) {
					t.Errorf("%s, %s: %d tokens for %d bytes", tname, name, len(ids), len(text))
				}
			}
		}
	}
}

// TestMergeScratch checks that the merge loop's scratch space for a word
// of n bytes is n nodes and 3(n-1) heap entries, allocated once (never
// grown), on long adversarial words, and that the words encode as
// encoder.py's loop does.
func TestMergeScratch(t *testing.T) {
	tok := newTestTokenizer(t)
	for name, text := range adversarialTexts(3000) {
		for p := range Pieces(text) {
			if len(p) < 2 {
				continue
			}
			st := new(mergeState)
			ids := tok.bpe(st, p, nil)
			if cap(st.nodes) != len(p) || cap(st.heap) != 3*(len(p)-1) {
				t.Fatalf("%s: a word of %d bytes left scratch space of %d nodes and %d heap entries, want %d and %d", name, len(p), cap(st.nodes), cap(st.heap), len(p), 3*(len(p)-1))
			}
			if got, want := tokens(t, tok, ids), refEncode(p, testMerges); !slices.Equal(got, want) {
				t.Fatalf("%s: a word of %d bytes: Encode differs from encoder.py's loop", name, len(p))
			}
		}
	}
	for _, c := range []struct {
		text string
		want int
	}{{"", 0}, {"a", 1}, {"ab  cd", 3}, {"ab  cd!!!!\xff\xff", 6}, {"x" + strings.Repeat(" ", 9), 9}} {
		if got := LongestPiece(c.text); got != c.want {
			t.Errorf("LongestPiece(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}

// TestGPT2LongWords encodes adversarial texts with GPT-2's vocabulary
// as encoder.py's loop does, long pre-tokens included.
func TestGPT2LongWords(t *testing.T) {
	tok := gpt2Tokenizer(t)
	b, err := os.ReadFile(filepath.Join(os.Getenv(gpt2DirEnv), "vocab.bpe"))
	if err != nil {
		t.Fatal(err)
	}
	var merges [][2]string
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) != 2 {
			continue
		}
		l, _, _ := fromAlphabet(f[0])
		r, _, _ := fromAlphabet(f[1])
		merges = append(merges, [2]string{string(l), string(r)})
	}
	for name, text := range adversarialTexts(1500) {
		if got, want := tokens(t, tok, tok.Encode(text)), refEncode(text, merges); !slices.Equal(got, want) {
			t.Errorf("%s: Encode differs from encoder.py's loop", name)
		}
	}
}

// TestLoadBytes loads a vocabulary of many short tokens and as many
// merges, the files that cost the most memory per byte, and checks what
// Load allocates against LoadBytes.
func TestLoadBytes(t *testing.T) {
	for _, extra := range []int{1000, 60000} {
		var ej, vb strings.Builder
		ej.WriteByte('{')
		vb.WriteString("#version: 0.2\n")
		id := 0
		for b := 0; b < 256; b++ {
			fmt.Fprintf(&ej, "%q:%d,", string(ByteRune(byte(b))), id)
			id++
		}
		// Tokens of two and three bytes, each with its merge.
		for i := 0; i < extra; i++ {
			a, b := ByteRune(byte(i%256)), ByteRune(byte(i/256%256))
			tok := string(a) + string(b)
			if i >= 65536 {
				break
			}
			fmt.Fprintf(&ej, "%q:%d,", tok, id)
			fmt.Fprintf(&vb, "%s %s\n", string(a), string(b))
			id++
		}
		s := ej.String()
		encoder := s[:len(s)-1] + "}"
		merges := vb.String()
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		tk, err := Load(strings.NewReader(encoder), strings.NewReader(merges))
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		got := int64(after.TotalAlloc - before.TotalAlloc)
		bound := LoadBytes(int64(len(encoder)), int64(len(merges)))
		t.Logf("%d tokens: files %d bytes, Load allocated %d, bound %d", tk.VocabSize(), len(encoder)+len(merges), got, bound)
		if got > bound {
			t.Errorf("%d tokens: Load allocated %d bytes, more than LoadBytes' %d", tk.VocabSize(), got, bound)
		}
	}
}
