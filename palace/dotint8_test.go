package palace

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
