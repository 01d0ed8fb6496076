package vecindex

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotInt8: the kernel agrees with plain Go on every length (the 32-,
// 8- and 1-wide tails) and on extreme codes.
func TestDotInt8(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n <= 70; n++ {
		q := make([]float32, n)
		c := make([]int8, n)
		for i := range q {
			q[i] = float32(rng.NormFloat64())
			c[i] = int8(rng.IntN(256) - 128)
		}
		if n > 0 {
			c[0], c[n-1] = -128, 127
		}
		want := dotInt8Generic(q, c)
		got := dotInt8(q, c)
		if math.Abs(float64(got-want)) > 1e-3*(1+math.Abs(float64(want))) {
			t.Errorf("n=%d: %v, want %v", n, got, want)
		}
	}
}

func TestDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	for _, n := range []int{0, 1, 3, 4, 7, 8, 9, 15, 16, 31, 32, 33, 63, 64, 65, 100, 384, 512, 768, 1024, 1027} {
		a, b := make([]float32, n), make([]float32, n+5)
		var want float64
		for i := range a {
			a[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			want += float64(a[i]) * float64(b[i])
		}
		tol := 1e-5 * float64(n+1)
		if got := float64(dot(a, b)); math.Abs(got-want) > tol {
			t.Errorf("dot, n=%d: %v, want %v", n, got, want)
		}
		if got := float64(dotGeneric(a, b)); math.Abs(got-want) > tol {
			t.Errorf("dotGeneric, n=%d: %v, want %v", n, got, want)
		}
	}
	t.Logf("AVX2 kernel: %v", useAVX2)
}
