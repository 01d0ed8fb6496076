package vecindex

import (
	"fmt"
	"testing"
)

// Dot is the float32 dot product, for the tests outside the package.
var Dot = dot

// UseGeneric makes the index use the plain Go kernels until the test ends.
func UseGeneric(tb testing.TB) {
	saved := useAVX2
	useAVX2 = false
	tb.Cleanup(func() { useAVX2 = saved })
}

// Rows returns the rows of x's matrix by id, each as text; nil when it is
// not loaded.
func Rows(x *Index) map[string]string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.mem == nil {
		return nil
	}
	return matrixRows(x.mem)
}

// matrixRows returns the rows of m by id, each as text.
func matrixRows(m *matrix) map[string]string {
	nsName := make(map[uint32]string)
	for s, c := range m.nsCode {
		nsName[c] = s
	}
	out := make(map[string]string, m.len())
	for i := range m.len() {
		id := m.ids.ID(i)
		if r, ok := m.ids.Row(id); !ok || r != i {
			out[id] = "row map broken"
			continue
		}
		out[id] = fmt.Sprint(nsName[m.ns[i]], m.kindNames[m.kinds[i]], m.ts[i], m.scale[i], m.code(i))
	}
	if len(m.codes) != (m.len()+chunkRows-1)/chunkRows || len(m.scale) != m.len() {
		out[""] = "sizes differ"
	}
	return out
}
