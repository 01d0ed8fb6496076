package pipeline

// YieldWaiting reports whether a Wait of y waits for a write to end.
func YieldWaiting(y *Yield) bool {
	y.mu.Lock()
	defer y.mu.Unlock()
	return y.ended != nil
}
