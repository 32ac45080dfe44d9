package safetensors

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"
)

// ErrShortRead is what a Reader's error is (errors.Is) when the file
// ended before its size: it was truncated while it was read.
var ErrShortRead = errors.New("the file ended early (truncated while it was read?)")

// ChunkSize is the size of the pieces a Reader reads and checksums at a
// time: small enough that a piece is still in the CPU's cache when the
// checksum reads it again just after the read wrote it (one pass over
// memory, not two), large enough that the system calls cost nothing
// measurable. A multiple of every element size and of 32.
const ChunkSize = 256 << 10

// Reader reads a safetensors file from an io.ReaderAt in one pass, each
// tensor's bytes straight into the memory its caller gives (or handed to
// a function piece by piece), and verifies the file's checksum over the
// same bytes as they arrive, each piece while it is still in the cache:
// the checks are Verify's, in Verify's order of precedence (a damaged
// file is reported as damaged, whatever the damage would make of its
// header), at the cost of one read of the file and no copy of it.
//
// NewReader reads and checks the header; ReadData then reads the data
// and completes the checksum. A caller that refuses the file after
// NewReader (for its own reasons: a config it does not accept) calls
// Finish, whose error, when it has one, is the one to report: the
// refusal may be the damage's doing.
type Reader struct {
	r    io.ReaderAt
	size int64
	// H is the file's header, checked as Verify checks it.
	H *Header
	// whole: the file's checksum (ChecksumKey) covers every byte, its
	// digits at at (a file offset) read as the placeholder; else the
	// data section's (DataChecksumKey), want.
	whole bool
	at    int64
	sum   string
	want  uint32
	crc   uint32
	pos   int64 // the next byte the checksum covers
	buf   []byte
	done  bool
	err   error // the checksum's verdict once done
}

// NewReader reads the header of the safetensors file r of size bytes and
// checks it as Verify does. A header that is refused is reported after
// the whole file's checksum has been verified (reading the rest of the
// file): a checksum that does not match is the error then.
func NewReader(r io.ReaderAt, size int64) (*Reader, error) {
	if size < 8 {
		return nil, tooShort(size)
	}
	var pre [8]byte
	if err := readFull(r, pre[:], 0); err != nil {
		return nil, err
	}
	hl, err := headerLength(pre[:], size)
	if err != nil {
		return nil, err
	}
	hdr := make([]byte, hl)
	if err := readFull(r, hdr, 8); err != nil {
		return nil, err
	}
	at, err := findChecksum(hdr)
	if err != nil {
		return nil, err
	}
	rd := &Reader{r: r, size: size, whole: at >= 0}
	var sum string
	if rd.whole {
		rd.at = 8 + int64(at)
		sum = string(hdr[at : at+8])
		rd.sum = sum
		rd.crc = crc32.Update(0, castagnoli, pre[:])
		rd.crc = crc32.Update(rd.crc, castagnoli, hdr[:at])
		rd.crc = crc32.Update(rd.crc, castagnoli, checksumPlaceholder)
		rd.crc = crc32.Update(rd.crc, castagnoli, hdr[at+8:])
		rd.pos = 8 + hl
	}
	h, want, err := checkHeader(hdr, size, "", rd.whole, sum)
	if err != nil {
		if rd.whole {
			if cerr := rd.Finish(); cerr != nil {
				return nil, cerr
			}
		}
		return nil, err
	}
	rd.H, rd.want = h, want
	if !rd.whole {
		rd.pos = h.DataStart
	}
	return rd, nil
}

// readFull reads len(p) bytes of r at off; a file that ends first is
// ErrShortRead.
func readFull(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = ErrShortRead
	}
	return fmt.Errorf("safetensors: reading %d bytes at %d: %w", len(p), off, err)
}

// Sink is where ReadData puts one tensor's bytes: into Dst when its
// length is the tensor's (read straight into it), else to Fn when it is
// set, in order and in pieces of ChunkSize bytes but the last (off: the
// piece's offset in the tensor). A tensor with neither is only
// checksummed.
type Sink struct {
	Dst []byte
	Fn  func(off int64, p []byte) error
}

// ReadData reads the data section in file order into the sinks named by
// tensor, verifying the file's checksum over every byte as it is read.
// The checksum's error comes first: when the bytes do not match it, that
// is the error, whatever a sink said of them; then a sink's first error
// (the reading went on, for the checksum, and gave no sink more
// bytes); then a read that failed or a file that ended early (its bytes
// no longer there: errors.Is(err, ErrShortRead)). Bytes given to a sink
// before the error may be from a damaged file: on an error, nothing
// filled may be used.
func (rd *Reader) ReadData(sinks map[string]Sink) error {
	if rd.done {
		return errors.New("safetensors: Reader.ReadData after the data was read")
	}
	var serr error
	for _, e := range rd.H.Tensors {
		off := rd.H.DataStart + e.Start
		n := e.End - e.Start
		s := sinks[e.Name]
		direct := int64(len(s.Dst)) == n && n > 0
		for done := int64(0); done < n; {
			c := min(n-done, ChunkSize)
			var p []byte
			if direct {
				p = s.Dst[done : done+c]
			} else {
				p = rd.scratch(c)
			}
			if err := readFull(rd.r, p, off+done); err != nil {
				rd.done, rd.err = true, err
				return err
			}
			rd.update(p, off+done)
			if !direct && s.Fn != nil && serr == nil {
				serr = s.Fn(done, p)
			}
			done += c
		}
	}
	if err := rd.Finish(); err != nil {
		return err
	}
	return serr
}

// Finish completes the checksum over whatever of the file has not been
// read (all of it past the header when ReadData was not called) and
// returns its error: the checksum's, or a read's.
func (rd *Reader) Finish() error {
	if rd.done {
		return rd.err
	}
	rd.done = true
	for rd.pos < rd.size {
		p := rd.scratch(min(rd.size-rd.pos, ChunkSize))
		if err := readFull(rd.r, p, rd.pos); err != nil {
			rd.err = err
			return err
		}
		rd.update(p, rd.pos)
	}
	switch {
	case rd.whole && rd.crc != rd.parsedSum():
		rd.err = fileChecksumError(rd.crc, rd.sum)
	case !rd.whole && rd.crc != rd.want:
		rd.err = dataChecksumError(rd.crc, rd.want)
	}
	return rd.err
}

// parsedSum is the whole-file checksum the header states (findChecksum
// checked its eight digits).
func (rd *Reader) parsedSum() uint32 {
	v, _ := strconv.ParseUint(rd.sum, 16, 32)
	return uint32(v)
}

// update adds p, the file's bytes at off, to the checksum: the bytes are
// read in order, so off is rd.pos.
func (rd *Reader) update(p []byte, off int64) {
	if off != rd.pos {
		panic(fmt.Sprintf("safetensors: internal error: bytes at %d checksummed at %d", off, rd.pos))
	}
	rd.crc = crc32.Update(rd.crc, castagnoli, p)
	rd.pos += int64(len(p))
}

// scratch returns n <= ChunkSize bytes of the Reader's own buffer.
func (rd *Reader) scratch(n int64) []byte {
	if rd.buf == nil {
		rd.buf = make([]byte, ChunkSize)
	}
	return rd.buf[:n]
}
