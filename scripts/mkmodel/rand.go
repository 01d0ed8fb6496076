package main

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
)

// rng returns a generator seeded from key, so that a token's vector depends
// on the token alone (not on its id or on the rest of the vocabulary).
func rng(key string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(key))
	return rand.New(rand.NewPCG(h.Sum64(), 0x656e6772616d)) // "engram"
}

// unitZeroMean returns n Gaussian values shifted to mean 0 and scaled to
// length 1, drawn from rng(key).
func unitZeroMean(key string, n int) []float64 {
	r := rng(key)
	v := make([]float64, n)
	var sum float64
	for i := range v {
		v[i] = r.NormFloat64()
		sum += v[i]
	}
	var norm float64
	for i := range v {
		v[i] -= sum / float64(n)
		norm += v[i] * v[i]
	}
	norm = math.Sqrt(norm)
	for i := range v {
		v[i] /= norm
	}
	return v
}

// gaussian returns n values drawn from N(0, std²) by r.
func gaussian(r *rand.Rand, n int, std float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * std)
	}
	return v
}
