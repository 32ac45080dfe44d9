package bpe

// Memory bounds of encoding, for callers that check the memory a text
// needs before encoding it.
//
// The merge loop takes mergeStateBytes (44) bytes per byte of a pre-token
// (see merge.go), allocated once for the longest pre-token of a call and
// never grown. The word cache holds at most cacheEntries words of at most
// cacheMaxWord bytes, each with at most one token per byte; it is
// replaced, not grown, when full, so with the map it replaces it takes at
// most cacheBytes. A slice that append grows to hold k elements is, while
// it grows, the old array and the new one: at most 2.25·k elements plus a
// few pages (append grows large slices by a quarter, rounded up to whole
// pages).
const (
	cacheBytes = 2 * cacheEntries * (cacheMaxWord + 4*cacheMaxWord + 128)
	growPad    = 1 << 14 // bytes of rounding when append grows a slice
	gcMinHeap  = 4 << 20 // the garbage collector's smallest heap goal
)

// LongestPiece returns the length in bytes of the longest pre-token of
// text (see Pieces): 0 for "". It allocates nothing.
func LongestPiece(text string) int {
	longest := 0
	for i := 0; i < len(text); {
		j := pieceEnd(text, i)
		longest = max(longest, j-i)
		i = j
	}
	return longest
}

// ScratchBytes returns an upper bound on the memory that encoding text
// (Encode, AppendEncode, EncodeWithSpecial) keeps live besides the tokens
// it returns: the merge loop's space for the longest pre-token of text, 44
// bytes per byte, and the word cache's, at most about 15 MiB. The merge
// loop's memory is linear in the length of a pre-token, however long: a
// text of one repeated letter, digit or punctuation mark, or of invalid
// UTF-8, is one pre-token.
func ScratchBytes(text string) int64 {
	return int64(LongestPiece(text))*mergeStateBytes + cacheBytes
}

// growBytes returns an upper bound on the memory a slice of k elements of
// size bytes each takes while append grows it from empty or from a
// smaller capacity: the old array and the new one.
func growBytes(k, size int64) int64 {
	return (k*size*9+3)/4 + growPad
}

// heapBytes returns an upper bound on the heap that live data of live
// bytes takes with Go's default garbage-collector pacing (GOGC=100): the
// heap may grow to twice the data live at the last collection before the
// next one frees anything, and never has a goal below 4 MiB.
func heapBytes(live int64) int64 {
	return 2*live + gcMinHeap
}

// EncodeBytes returns an upper bound on the heap that Encode(text) or
// EncodeWithSpecial(text) grows by, the tokens returned included: the
// result (at most one token per byte, 8 bytes each, while it grows) and
// ScratchBytes(text), doubled for the garbage collector's default pacing
// (GOGC=100: the heap may grow to twice the data live at the last
// collection before the next one frees anything) plus its smallest heap
// goal, 4 MiB. A caller can refuse a text before encoding it when this is
// more than the memory available. Computing it reads text once and
// allocates nothing.
func EncodeBytes(text string) int64 {
	return heapBytes(growBytes(int64(len(text)), 8) + ScratchBytes(text))
}

// loadBytesPerByte bounds the memory Load allocates per byte of its two
// files, their own bytes included: files of many short tokens and merges
// cost the most per byte (a map entry and a string per token and per
// merge, and the maps' growth); TestLoadBytes measures such files at
// about 28 bytes per byte.
const loadBytesPerByte = 32

// LoadBytes returns an upper bound on the memory Load allocates for an
// encoder.json of encoderJSON bytes and a vocab.bpe of vocabBPE bytes
// (the files' own bytes included), for callers that check the memory
// before loading: 32 bytes per byte of the two, plus the garbage
// collector's smallest heap goal. TestLoadBytes holds Load to it on files
// of many short tokens and merges.
func LoadBytes(encoderJSON, vocabBPE int64) int64 {
	return loadBytesPerByte*(encoderJSON+vocabBPE) + gcMinHeap
}
