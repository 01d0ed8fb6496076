//go:build !purego

package vecindex

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2/FMA kernel. A variable, not a constant, so that
// the tests can run the plain Go kernel too.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dot is the dot product of a and b (len(b) >= len(a)). The AVX2 kernel
// scans about twice as fast as dotGeneric (BenchmarkVectorQuery): the scan becomes
// bound by memory bandwidth rather than by the CPU.
func dot(a, b []float32) float32 {
	if useAVX2 && len(a) > 0 {
		_ = b[len(a)-1]
		return dotAVX2(&a[0], &b[0], len(a))
	}
	return dotGeneric(a, b)
}

// dotAVX2 is the dot product of the n float32 values at a and b.
//
//go:noescape
func dotAVX2(a, b *float32, n int) float32

// dotInt8 is the dot product of the float32 values q and the int8 codes c
// (len(c) >= len(q)): the scan of the quantised matrix.
func dotInt8(q []float32, c []int8) float32 {
	if useAVX2 && len(q) > 0 {
		_ = c[len(q)-1]
		return dotInt8AVX2(&q[0], &c[0], len(q))
	}
	return dotInt8Generic(q, c)
}

// dotInt8AVX2 is the dot product of the n float32 values at q and the n
// int8 codes at c.
//
//go:noescape
func dotInt8AVX2(q *float32, c *int8, n int) float32
