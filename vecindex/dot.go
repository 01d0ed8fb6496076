package vecindex

// dotGeneric is the dot product of a and b (len(b) >= len(a)) in plain Go.
// Four accumulators let the CPU overlap the additions; on amd64 four
// measured faster than eight.
func dotGeneric(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x, y := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// dotInt8Generic is the dot product of the float32 values q and the int8
// codes c (len(c) >= len(q)) in plain Go.
func dotInt8Generic(q []float32, c []int8) float32 {
	c = c[:len(q)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(q); i += 4 {
		x, y := q[i:i+4:i+4], c[i:i+4:i+4]
		s0 += x[0] * float32(y[0])
		s1 += x[1] * float32(y[1])
		s2 += x[2] * float32(y[2])
		s3 += x[3] * float32(y[3])
	}
	for ; i < len(q); i++ {
		s0 += q[i] * float32(c[i])
	}
	return (s0 + s1) + (s2 + s3)
}
