package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
)

// tensor is one float32 tensor, row-major.
type tensor struct {
	name  string
	shape []int
	data  []float32
}

// filled returns a tensor of the given shape with every value set to v.
func filled(name string, v float32, shape ...int) tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	data := make([]float32, n)
	for i := range data {
		data[i] = v
	}
	return tensor{name: name, shape: shape, data: data}
}

// safetensors encodes tensors in the safetensors format: an 8-byte
// little-endian header length, a JSON header mapping each name to its dtype,
// shape and byte range, then the raw little-endian data. The header is padded
// with spaces to a multiple of 8 bytes, as the format recommends.
func safetensors(ts []tensor) ([]byte, error) {
	type entry struct {
		DType       string   `json:"dtype"`
		Shape       []int    `json:"shape"`
		DataOffsets [2]int64 `json:"data_offsets"`
	}
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var off int64
	for _, t := range ts {
		n := 1
		for _, d := range t.shape {
			n *= d
		}
		if n != len(t.data) {
			return nil, fmt.Errorf("tensor %s: shape %v wants %d values, have %d", t.name, t.shape, n, len(t.data))
		}
		if _, dup := header[t.name]; dup {
			return nil, fmt.Errorf("tensor %s: duplicate name", t.name)
		}
		end := off + 4*int64(n)
		header[t.name] = entry{DType: "F32", Shape: t.shape, DataOffsets: [2]int64{off, end}}
		off = end
	}
	h, err := json.Marshal(header) // map keys are sorted: the output is deterministic
	if err != nil {
		return nil, err
	}
	if pad := len(h) % 8; pad != 0 {
		h = append(h, bytes.Repeat([]byte(" "), 8-pad)...)
	}

	buf := make([]byte, 0, 8+len(h)+int(off))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(h)))
	buf = append(buf, h...)
	for _, t := range ts {
		for _, v := range t.data {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
	}
	return buf, nil
}
