package kwindex

import "encoding/binary"

// postings lists the docs holding a term, in doc order, with the term's
// frequency in each (first column count << 8 | second column count, each
// at most 255; a first column count of 255 or more is bigTF, the count in
// the index's bigTF), packed into bytes: a posting is the uvarint of its
// doc's gap from the one before (the first's from doc 0) shifted left
// once, the low bit set when the frequency is the usual one (oneTF: one
// match in the first column, none in the second), else followed by the
// uvarint of the frequency with its halves swapped (second count << 8 |
// first count: one byte for a first count under 128 and no match in the
// second). Most terms are rare and most matches single, so a posting takes
// one to three bytes where a doc number and a frequency took six
// (docs/benchmarks.md has what it saves).
type postings struct {
	enc  []byte
	last uint32 // the last posting's doc
	df   int64  // live docs among them, when ver is the index's
	ver  uint64 // the index's ver df was counted at
}

// oneTF is the frequency of one match in the first column and none in the
// second.
const oneTF = 1 << 8

// bigTF is the first column count a posting's frequency holds for a count
// of bigTF or more, which the index's bigTF holds.
const bigTF = 0xff

// bigKey is the key of term id's count in doc d in the index's bigTF.
func bigKey(id, d uint32) uint64 { return uint64(id)<<32 | uint64(d) }

// appendPosting appends doc d (after the last) with frequency tf.
func (p *postings) appendPosting(d uint32, tf uint16) {
	gap := uint64(d - p.last)
	if tf == oneTF {
		p.enc = binary.AppendUvarint(p.enc, gap<<1|1)
	} else {
		p.enc = binary.AppendUvarint(p.enc, gap<<1)
		p.enc = binary.AppendUvarint(p.enc, uint64(tf>>8)|uint64(tf&0xff)<<8)
	}
	p.last = d
}

// nextPosting decodes the posting at enc[i:] that follows doc prev (0 for
// the first): its doc, its frequency, and where the next one starts. The
// ranking (score) decodes the usual postings inline and calls it for the
// others.
func nextPosting(enc []byte, i int, prev uint32) (d uint32, tf uint16, next int) {
	v, n := uint64(enc[i]), 1
	if v >= 0x80 {
		v, n = binary.Uvarint(enc[i:])
	}
	d, i = prev+uint32(v>>1), i+n
	if v&1 == 1 {
		return d, oneTF, i
	}
	f, n := uint64(enc[i]), 1
	if f >= 0x80 {
		f, n = binary.Uvarint(enc[i:])
	}
	return d, uint16(f&0xff)<<8 | uint16(f>>8), i + n
}
