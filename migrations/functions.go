package migrations

import (
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/x448/float16"
	"golang.org/x/text/unicode/norm"
	"modernc.org/sqlite"

	"github.com/engram-dev/engram/internal/neardup"
	"github.com/engram-dev/engram/internal/vecrow"
)

// The SQL functions some migrations call, registered with SQLite when the
// package loads, so that a database opened to apply them has them:
//
//   - engram_nfkc(text): text in NFKC, as the palace indexes it; 0015 fills
//     the trigram index again from the turns with it.
//   - engram_half_unit(vec): 0012 converts the stored vectors from float32
//     to half precision (IEEE 754 binary16, little-endian), as the palace
//     stored them until 0016.
//   - engram_unit_codes(vec): 0016 converts them from half precision to
//     the codes of vecrow.Encode.
//   - engram_near_group(namespace, type, subject), engram_near_keys(key)
//     and engram_near_size(key): 0021 fills a memory's near-duplicate
//     keys (neardup) from its row.
//
// A vector with no direction is converted so that the doctor still reports
// it.

// nfkcFunc is engram_nfkc(text).
func nfkcFunc(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	s, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("engram_nfkc: want text, got %T", args[0])
	}
	return norm.NFKC.String(s), nil
}

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
	vecrow.Normalize(v, v) // leaves v as it was when it has no direction
	out := make([]byte, 0, 2*len(v))
	for _, x := range v {
		out = binary.LittleEndian.AppendUint16(out, uint16(float16.Fromfloat32(x)))
	}
	return out, nil
}

// codesFunc is engram_unit_codes(vec): a unit vector in half precision to
// its codes and scale (vecrow.Encode).
func codesFunc(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	raw, ok := args[0].([]byte)
	if !ok || len(raw)%2 != 0 {
		return nil, fmt.Errorf("engram_unit_codes: want a blob of half-precision values, got %T of %d bytes", args[0], len(raw))
	}
	v := make([]float32, len(raw)/2)
	for i := range v {
		v[i] = float16.Frombits(binary.LittleEndian.Uint16(raw[2*i:])).Float32()
	}
	return vecrow.Encode(make([]byte, 0, vecrow.Bytes(len(v))), v), nil
}

// nearGroupFunc is engram_near_group(namespace, type, subject).
func nearGroupFunc(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	var s [3]string
	for i := range s {
		v, ok := args[i].(string)
		if !ok {
			return nil, fmt.Errorf("engram_near_group: argument %d: want text, got %T", i+1, args[i])
		}
		s[i] = v
	}
	return neardup.Group(s[0], s[1], s[2]), nil
}

// nearKeysFunc is engram_near_keys(key): the near-duplicate keys of a
// memory's dedup_key, as a JSON array.
func nearKeysFunc(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	key, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("engram_near_keys: want text, got %T", args[0])
	}
	return neardup.KeysJSON(neardup.Keys(key)), nil
}

// nearSizeFunc is engram_near_size(key): the number of words of a
// memory's dedup_key.
func nearSizeFunc(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	key, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("engram_near_size: want text, got %T", args[0])
	}
	return int64(len(neardup.KeyWords(key))), nil
}

func init() {
	for name, f := range map[string]struct {
		args int
		fn   func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error)
	}{
		"engram_nfkc":       {1, nfkcFunc},
		"engram_half_unit":  {1, halfUnitFunc},
		"engram_unit_codes": {1, codesFunc},
		"engram_near_group": {3, nearGroupFunc},
		"engram_near_keys":  {1, nearKeysFunc},
		"engram_near_size":  {1, nearSizeFunc},
	} {
		if err := sqlite.RegisterDeterministicScalarFunction(name, int32(f.args), f.fn); err != nil {
			panic(err) // registered twice: a programming error
		}
	}
}
