//go:build !amd64 || purego

package vecindex

// useAVX2 is false where there is no AVX2 kernel.
var useAVX2 = false

// dot is the dot product of a and b (len(b) >= len(a)).
func dot(a, b []float32) float32 { return dotGeneric(a, b) }

// dotInt8 is the dot product of q and the codes c (len(c) >= len(q)).
func dotInt8(q []float32, c []int8) float32 { return dotInt8Generic(q, c) }
