// Package groupcommit holds the loop of a writer that commits requests in
// groups: both archives (the files' and PostgreSQL's) write that way, one
// fsync or one transaction for every request that waited meanwhile.
package groupcommit

// Run takes a request from reqs, then every other one already waiting, at
// most max in all, and hands them to commit together; again until done is
// closed. A request is never taken once done is closed, so that its sender
// is answered by whoever closed it. commit must not keep the slice.
func Run[T any](done <-chan struct{}, reqs <-chan T, max int, commit func([]T)) {
	batch := make([]T, 0, max)
	for {
		select {
		case <-done:
			return
		default:
		}
		select {
		case r := <-reqs:
			batch = append(batch[:0], r)
		case <-done:
			return
		}
	collect:
		for len(batch) < max {
			select {
			case r := <-reqs:
				batch = append(batch, r)
			default:
				break collect
			}
		}
		commit(batch)
		clear(batch)
	}
}
