package palace

import (
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/x448/float16"
	"modernc.org/sqlite"
)

// Vectors are stored on disk as the int8 codes the in-memory matrix scans
// (see quantize), dim of them, followed by their scale as a little-endian
// float32: 516 bytes at 512 dimensions, where half precision took 1,024 and
// float32 2,048. The codes times the scale are a unit vector, so a query's
// dot product with them is its cosine with the vector as stored, and the
// matrix's scan scores exactly what is stored: there is nothing finer to
// rescore with. Rounding a unit vector to the codes moves its cosine with
// another vector by some 0.0005 (a step of the codes is its largest
// component over 127); TestQuantizedRecall measures what it costs against
// exact float32 search.

// vecBytes is the size on disk of a vector of dim dimensions.
func vecBytes(dim int) int { return dim + 4 }

// appendVector appends unit, a unit vector, to dst as stored on disk. A
// vector with no direction is stored with codes of zero and a scale of zero
// (all zeros) or NaN (a value not finite), so that the doctor reports it.
func appendVector(dst []byte, unit []float32) []byte {
	codes := make([]int8, len(unit))
	scale := quantize(codes, unit)
	for _, c := range codes {
		dst = append(dst, byte(c))
	}
	return binary.LittleEndian.AppendUint32(dst, math.Float32bits(scale))
}

// storedScale returns the scale of a stored vector, raw, of dim dimensions.
func storedScale(raw []byte, dim int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(raw[dim:]))
}

// decodeVector decodes a stored vector, raw, into dst (len(dst) values).
func decodeVector(dst []float32, raw []byte) {
	scale := storedScale(raw, len(dst))
	for i := range dst {
		dst[i] = float32(int8(raw[i])) * scale
	}
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

// Migrations 0012 and 0016 convert the stored vectors of an existing
// palace in place through SQL functions the palace registers with SQLite:
// 0012 from float32 to half precision (IEEE 754 binary16, little-endian),
// as the palace stored them until 0016, and 0016 from half precision to
// the codes above. A vector with no direction is converted so that the
// doctor still reports it.

// halfUnitFunc is engram_half_unit(vec): little-endian float32 values to
// the unit vector in half precision, a vector with no direction as it is.
func halfUnitFunc(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	raw, ok := args[0].([]byte)
	if !ok || len(raw)%4 != 0 {
		return nil, fmt.Errorf("engram_half_unit: want a blob of float32 values, got %T of %d bytes", args[0], len(raw))
	}
	v := make([]float32, len(raw)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	normalize(v, v) // leaves v as it was when it has no direction
	out := make([]byte, 0, 2*len(v))
	for _, x := range v {
		out = binary.LittleEndian.AppendUint16(out, uint16(float16.Fromfloat32(x)))
	}
	return out, nil
}

// codesFunc is engram_unit_codes(vec): a unit vector in half precision to
// its codes and scale (appendVector).
func codesFunc(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	raw, ok := args[0].([]byte)
	if !ok || len(raw)%2 != 0 {
		return nil, fmt.Errorf("engram_unit_codes: want a blob of half-precision values, got %T of %d bytes", args[0], len(raw))
	}
	v := make([]float32, len(raw)/2)
	for i := range v {
		v[i] = float16.Frombits(binary.LittleEndian.Uint16(raw[2*i:])).Float32()
	}
	normalize(v, v) // leaves v as it was when it has no direction
	return appendVector(make([]byte, 0, vecBytes(len(v))), v), nil
}

func init() {
	for name, fn := range map[string]func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error){
		"engram_half_unit":  halfUnitFunc,
		"engram_unit_codes": codesFunc,
	} {
		if err := sqlite.RegisterDeterministicScalarFunction(name, 1, fn); err != nil {
			panic(err) // registered twice: a programming error
		}
	}
}
