package vectortest

import (
	"math/rand/v2"
	"strconv"
	"time"

	engram "github.com/engram-dev/engram"
)

// Clusters generates clustered vectors for the benchmarks of the vector
// indexes (packages vecindex and chroma): each is one of a set of random
// centres plus Gaussian noise of about the centre's length, so that a query
// has a few dozen close neighbours and a long tail, as embeddings of
// conversation do. The same seed gives the same vectors.
type Clusters struct {
	dim     int
	rng     *rand.Rand
	centres [][]float32
}

// NewClusters returns the generator of seed for vectors of dimension dim
// around n centres.
func NewClusters(seed uint64, dim, n int) *Clusters {
	c := &Clusters{dim: dim, rng: rand.New(rand.NewPCG(seed, 0xfeed))}
	for range n {
		c.centres = append(c.centres, c.Noise(1))
	}
	return c
}

// Noise returns a vector of Gaussian noise, of standard deviation scale in
// each dimension.
func (c *Clusters) Noise(scale float64) []float32 {
	v := make([]float32, c.dim)
	for i := range v {
		v[i] = float32(c.rng.NormFloat64() * scale)
	}
	return v
}

// Vector returns a centre plus noise of about the centre's length.
func (c *Clusters) Vector() []float32 {
	v := c.Noise(0.8)
	centre := c.centres[c.rng.IntN(len(c.centres))]
	for i := range v {
		v[i] += centre[i]
	}
	return v
}

// T0 is the base time of RandomItems' vectors.
var T0 = time.Date(2026, 5, 1, 12, 0, 0, 123456789, time.UTC)

// RandomItems returns n items of dimension dim with ids prefix0, prefix1...
// over three namespaces and two kinds, a minute apart from T0; every
// seventh has a zero time.
func RandomItems(rng *rand.Rand, prefix string, n, dim int) []engram.VectorItem {
	items := make([]engram.VectorItem, n)
	for i := range items {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		items[i] = engram.VectorItem{
			ID:        prefix + strconv.Itoa(i),
			Kind:      []string{engram.KindTurn, "memory"}[i%2],
			Namespace: []string{"default", "work", ""}[i%3],
			TS:        T0.Add(time.Duration(i) * time.Minute),
			Vector:    v,
		}
		if i%7 == 0 {
			items[i].TS = time.Time{}
		}
	}
	return items
}
