package vectortest

import (
	"slices"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/vecrow"
)

// AsStored returns v as a store of vecrow's format returns it once
// written: its unit vector, rounded to the codes of vecrow.Encode.
func AsStored(v []float32) []float32 {
	out := make([]float32, len(v))
	vecrow.Decode(out, vecrow.Encode(nil, v))
	return out
}

// SameItem reports whether stored is written as such a store keeps it.
func SameItem(stored, written engram.VectorItem) bool {
	return stored.ID == written.ID && stored.Kind == written.Kind && stored.Namespace == written.Namespace &&
		stored.TS.Equal(written.TS) && slices.Equal(stored.Vector, AsStored(written.Vector))
}
