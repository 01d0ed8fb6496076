package recall

import (
	"context"
	"fmt"

	"github.com/engram-dev/engram"
)

// maxResultTimes bounds the expressions of time resolved per result.
const maxResultTimes = 8

// annotateTimes gives each result the expressions of time in its text
// resolved against when it was said, and each turn result its session's
// start. A failing lookup of the session starts only warns.
func (s *Service) annotateTimes(ctx context.Context, results []engram.Result, warn func(string)) {
	var keys []engram.SessionKey
	for i := range results {
		r := &results[i]
		if r.Kind == engram.KindDoc || r.TS.IsZero() {
			continue
		}
		for _, t := range FindTimeExprs(r.Text, r.TS, maxResultTimes) {
			r.Times = append(r.Times, engram.TimeRange{From: t.From, To: t.To, Expr: t.Expr})
		}
		if r.Kind == engram.KindTurn && r.Session != "" {
			keys = append(keys, engram.SessionKey{Namespace: r.Namespace, Session: r.Session})
		}
	}
	if s.Units == nil || len(keys) == 0 {
		return
	}
	starts, err := s.Units.SessionStarts(ctx, keys)
	if err != nil {
		if ctx.Err() == nil {
			warn(fmt.Sprintf("the sessions' dates could not be read (%s)", engram.ErrorMessage(err)))
		}
		return
	}
	for i := range results {
		r := &results[i]
		if r.Kind == engram.KindTurn {
			r.SessionStart = starts[engram.SessionKey{Namespace: r.Namespace, Session: r.Session}]
		}
	}
}
