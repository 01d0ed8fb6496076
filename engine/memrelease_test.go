package engine

import "testing"

// TestMemReleaser: only the last of the layer jobs running releases, and
// only when enough heap can go.
func TestMemReleaser(t *testing.T) {
	var heap uint64 = releaseMin
	releases := 0
	r := memReleaser{reclaimable: func() uint64 { return heap }, release: func() { releases++ }}
	endA := r.begin()
	endB := r.begin()
	endA()
	if releases != 0 {
		t.Fatal("released while another layer job runs")
	}
	endB()
	if releases != 1 {
		t.Fatalf("%d releases when the last job ended, want 1", releases)
	}
	heap = releaseMin - 1
	r.begin()()
	if releases != 1 {
		t.Fatal("released with too little to give back")
	}
	if n := r.running.Load(); n != 0 {
		t.Fatalf("%d jobs running, want 0", n)
	}
}

// TestReclaimableHeap: the runtime's metrics it reads exist (a misspelt
// name reads as 0).
func TestReclaimableHeap(t *testing.T) {
	garbage := make([][]byte, 0, 256)
	for range 256 {
		garbage = append(garbage, make([]byte, 1<<20))
	}
	if n := reclaimableHeap(); n == 0 {
		t.Errorf("reclaimable heap 0 with %d MB allocated since the last collection", len(garbage))
	}
}
