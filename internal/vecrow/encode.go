// Package vecrow is a vector as engram stores it, shared by the store of the
// rows (package palace, the SQLite table vectors) and the in-process index
// that loads them (package vecindex): the encoding (Encode, Decode, Bad),
// the checks of a write (Prepare), the stored time (NoTS, Range), and the
// contract between a store and the in-memory copy it keeps up to date
// (Follower). Neither package imports the other.
package vecrow

import (
	"encoding/binary"
	"fmt"
	"math"

	engram "github.com/engram-dev/engram"
)

// Vectors are stored as the int8 codes the in-memory matrix scans (see
// quantize), dim of them, followed by their scale as a little-endian
// float32: 516 bytes at 512 dimensions, where half precision took 1,024 and
// float32 2,048. The codes times the scale are a unit vector, so a query's
// dot product with them is its cosine with the vector as stored, and the
// matrix's scan scores exactly what is stored: there is nothing finer to
// rescore with. Rounding a unit vector to the codes moves its cosine with
// another vector by some 0.0005 (a step of the codes is its largest
// component over 127); TestQuantizedRecall measures what it costs against
// exact float32 search.

// Bytes is the size of a stored vector of dim dimensions.
func Bytes(dim int) int { return dim + 4 }

// Encode appends v's direction to dst as stored: the codes of its unit
// vector and their scale. A vector with no direction is stored with codes
// of zero and a scale of zero (all zeros) or NaN (a value not finite), so
// that a check (Bad) reports it.
func Encode(dst []byte, v []float32) []byte {
	unit := make([]float32, len(v))
	copy(unit, v)
	Normalize(unit, unit) // leaves unit as it was when it has no direction
	return AppendUnit(dst, unit)
}

// AppendUnit appends unit, a unit vector (or one with no direction), to
// dst as stored.
func AppendUnit(dst []byte, unit []float32) []byte {
	codes := make([]int8, len(unit))
	scale := quantize(codes, unit)
	for _, c := range codes {
		dst = append(dst, byte(c))
	}
	return binary.LittleEndian.AppendUint32(dst, math.Float32bits(scale))
}

// Scale returns the scale of a stored vector, raw, of dim dimensions.
func Scale(raw []byte, dim int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(raw[dim:]))
}

// Decode decodes a stored vector, raw, into dst (len(dst) values).
func Decode(dst []float32, raw []byte) {
	scale := Scale(raw, len(dst))
	for i := range dst {
		dst[i] = float32(int8(raw[i])) * scale
	}
}

// Bad says why raw is no usable stored vector of len(unit) dimensions: its
// size is not Bytes of that, or it holds a value that is not finite, or only
// zeros; "" when it is one. unit is a buffer it overwrites.
func Bad(raw []byte, unit []float32) string {
	if dim := len(unit); len(raw) != Bytes(dim) {
		return fmt.Sprintf("%d bytes, want %d", len(raw), Bytes(dim))
	}
	Decode(unit, raw)
	for _, x := range unit {
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			return "holds a value that is not finite"
		}
	}
	if !Normalize(unit, unit) {
		return "all zeros"
	}
	return ""
}

// quantize writes the codes of the unit vector u into dst (len(u) values)
// and returns their scale. The codes are u over a step of its largest
// magnitude over 127, rounded, so that the largest is ±127 and each is
// within half a step of its value; the scale is one over the codes' length,
// so that the codes times it are a unit vector. A vector with no direction
// gets codes of zero and a scale of zero, or NaN if a value is not finite.
func quantize(dst []int8, u []float32) float32 {
	clear(dst[:len(u)])
	var mx float32
	for _, x := range u {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return float32(math.NaN())
		}
		mx = max(mx, abs32(x))
	}
	if mx == 0 {
		return 0
	}
	inv := 127 / mx
	var sum float64
	for i, x := range u {
		c := int8(max(-127, min(127, math.Round(float64(x*inv)))))
		dst[i] = c
		sum += float64(c) * float64(c)
	}
	return float32(1 / math.Sqrt(sum))
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

// Normalize writes v scaled to unit length into dst (len(v) values) and
// reports false if v has no direction: all zeros, or a NaN or infinite
// value; dst is then left as it was.
func Normalize(dst, v []float32) bool {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return false
	}
	inv := 1 / math.Sqrt(sum)
	dst = dst[:len(v)]
	for i, x := range v {
		dst[i] = float32(float64(x) * inv)
	}
	return true
}

// Prepare checks items for a model of dim dimensions and encodes them as
// rows, in the order of the items; when an ID repeats, the last item wins.
// Every item is checked before any is encoded: an empty ID, a vector whose
// dimension is not dim (the message names both), a zero vector, one
// holding NaN or ±Inf, or a time outside what an int64 of nanoseconds
// holds fails the whole batch with EINVALID.
func Prepare(model string, dim int, items []engram.VectorItem) ([]Row, error) {
	last := make(map[string]int, len(items))
	for i, it := range items {
		if it.ID == "" {
			return nil, engram.Errorf(engram.EINVALID, "palace: vector item %d has an empty id", i)
		}
		what := fmt.Sprintf("vector item %d (id %q)", i, it.ID)
		if err := Check(model, dim, what, it.Vector); err != nil {
			return nil, err
		}
		if !it.TS.IsZero() && (!it.TS.After(minTime) || it.TS.After(maxTime)) {
			return nil, engram.Errorf(engram.EINVALID, "palace: %s: %s", what, OutsideRange(it.TS, "vector times"))
		}
		last[it.ID] = i
	}
	n := len(last)
	rows := make([]Row, 0, n)
	unit := make([]float32, dim)
	raw := make([]byte, 0, n*Bytes(dim))
	for i, it := range items {
		if last[it.ID] != i {
			continue
		}
		Normalize(unit, it.Vector)
		r := Row{ID: it.ID, Kind: it.Kind, Namespace: it.Namespace, TS: NoTS}
		if !it.TS.IsZero() {
			r.TS = it.TS.UnixNano()
		}
		start := len(raw)
		raw = AppendUnit(raw, unit)
		r.Vec = raw[start:len(raw):len(raw)]
		rows = append(rows, r)
	}
	return rows, nil
}

// Check returns EINVALID unless vec, named what in the message, has
// dimension dim, only finite values and a non-zero length (cosine needs a
// direction).
func Check(model string, dim int, what string, vec []float32) error {
	if len(vec) != dim {
		return engram.Errorf(engram.EINVALID, "palace: %s has dimension %d, vector model %q has dimension %d",
			what, len(vec), model, dim)
	}
	zero := true
	for _, x := range vec {
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			return engram.Errorf(engram.EINVALID, "palace: %s holds %v; vectors must be finite", what, x)
		}
		zero = zero && x == 0
	}
	if zero {
		return engram.Errorf(engram.EINVALID, "palace: %s is all zeros; cosine needs a non-zero vector", what)
	}
	return nil
}
