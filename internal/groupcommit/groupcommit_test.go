package groupcommit

import (
	"sync"
	"testing"
)

// TestRun: every request sent reaches commit once, in groups of at most
// max, those waiting while a commit runs in the next group together; Run
// returns once done is closed.
func TestRun(t *testing.T) {
	reqs, done := make(chan int), make(chan struct{})
	release := make(chan struct{})
	var got [][]int
	finished := make(chan struct{})
	first := true
	go func() {
		defer close(finished)
		Run(done, reqs, 4, func(b []int) {
			got = append(got, append([]int(nil), b...))
			if first {
				first = false
				<-release // the others queue up behind this commit
			}
		})
	}()
	reqs <- 0
	var wg sync.WaitGroup
	for i := 1; i <= 6; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); reqs <- i }()
	}
	// Six senders wait on the unbuffered channel until the first commit
	// ends; then they go in groups of at most four.
	close(release)
	wg.Wait()
	close(done)
	<-finished
	seen := map[int]bool{}
	for _, b := range got {
		if len(b) == 0 || len(b) > 4 {
			t.Fatalf("a group of %d: %v", len(b), got)
		}
		for _, r := range b {
			if seen[r] {
				t.Fatalf("request %d committed twice: %v", r, got)
			}
			seen[r] = true
		}
	}
	if len(seen) != 7 || len(got) > 7 {
		t.Fatalf("committed %v", got)
	}
}
