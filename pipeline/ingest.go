package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/engram-dev/engram"
)

// DefaultIngestWait bounds how long Ingest waits for the index after the
// archive has acknowledged a write.
const DefaultIngestWait = 2 * time.Second

// Ingester archives turns and waits briefly for the index. It implements
// engram.IngestService for the HTTP API and the CLI.
type Ingester struct {
	Archive engram.Archive
	Indexer *Indexer // nil: do not wait for the index
	// Wait bounds how long Ingest waits for the index after the archive
	// acknowledged the write.
	Wait time.Duration
}

var _ engram.IngestService = (*Ingester)(nil)

// Ingest archives turns durably and then waits up to Wait for the indexer,
// so that the turns are searchable when Ingest returns. An error means
// nothing was acknowledged; a slow or failing index only adds a warning,
// because the turns are already safe in the archive.
func (g *Ingester) Ingest(ctx context.Context, turns []engram.Turn) (engram.IngestResult, error) {
	a, ix, wait := g.Archive, g.Indexer, g.Wait
	if wait <= 0 {
		wait = DefaultIngestWait
	}
	appended, err := a.Append(ctx, turns)
	if err != nil {
		return engram.IngestResult{}, err
	}
	res := engram.IngestResult{Turns: appended}
	if ix == nil {
		return res, nil
	}
	var maxSeq int64
	for _, t := range appended {
		maxSeq = max(maxSeq, t.Seq)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := ix.Wait(wctx, maxSeq); err != nil {
		msg := "the turns are archived but not yet searchable: the index is behind"
		if ierr := ix.Err(); ierr != nil {
			msg = fmt.Sprintf("the turns are archived but not yet searchable: indexing failed (%v); it will be retried", ierr)
		} else if !errors.Is(err, context.DeadlineExceeded) {
			msg = "the turns are archived; the request ended before they were indexed"
		}
		res.Warnings = append(res.Warnings, msg)
	}
	return res, nil
}
