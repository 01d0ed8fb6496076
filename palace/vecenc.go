package palace

import (
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/x448/float16"
	"modernc.org/sqlite"
)

// Vectors are stored on disk as unit vectors of IEEE 754 half-precision
// values (binary16, little-endian): 2 bytes a dimension where float32 took
// 4, so that a 512-dimension row and its key fit three to a 4 KB page where
// a float32 row took a page of its own. Recall compares directions only, so
// the length a vector was written with is not kept; rounding a unit vector's
// components to half precision (11 significant bits) moves its cosine with
// any other vector by less than 0.001, far below what separates two texts.

// vecBytes is the size on disk of a vector of dim dimensions.
func vecBytes(dim int) int { return 2 * dim }

// appendVector appends unit, a unit vector, to dst as stored on disk.
func appendVector(dst []byte, unit []float32) []byte {
	for _, x := range unit {
		dst = binary.LittleEndian.AppendUint16(dst, uint16(float16.Fromfloat32(x)))
	}
	return dst
}

// decodeVector decodes a stored vector, raw, into dst (len(dst) values).
func decodeVector(dst []float32, raw []byte) {
	for i := range dst {
		dst[i] = float16.Frombits(binary.LittleEndian.Uint16(raw[2*i:])).Float32()
	}
}

// storedUnit decodes a stored vector, raw, into dst and normalises it: the
// unit vector that the matrix holds and queries score. False when it has no
// direction (the doctor reports such a row).
func storedUnit(dst []float32, raw []byte) bool {
	decodeVector(dst, raw)
	return normalize(dst, dst)
}

// halfUnitFunc is the SQL function engram_half_unit(vec), with which
// migration 0012 converts the vectors of an existing palace in place: vec,
// little-endian float32 values as engram stored them before, becomes the
// unit vector in half precision. A vector that has no direction (all zeros,
// a value that is not finite) is converted as it is, so that the doctor
// still reports it.
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
	return appendVector(make([]byte, 0, 2*len(v)), v), nil
}

func init() {
	if err := sqlite.RegisterDeterministicScalarFunction("engram_half_unit", 1, halfUnitFunc); err != nil {
		panic(err) // registered twice: a programming error
	}
}
