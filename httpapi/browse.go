package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram"
)

// noBrowse is the error of the list routes without a BrowseService.
const noBrowse = "listing turns and entities is not available on this server"

// getTurns lists stored turns: the timeline, newest first, paged with
// before; one session's turns in order, paged with after; or the turns of
// ids (the web view shows a memory's sources by them).
func (s *Server) getTurns(c echo.Context) error {
	return serve(c, http.StatusOK, s.Browse, noBrowse, fromQuery(s, func(p *params) (engram.TurnQuery, error) {
		q := engram.TurnQuery{
			Namespace: p.namespace(true),
			IDs:       p.ids("ids"),
			Session:   p.name("session"),
			Before:    p.seq("before"),
			After:     p.seq("after"),
			Limit:     p.limit(),
		}
		if p.v.Has("ids") {
			for _, k := range []string{"session", "before", "after", "limit"} {
				if p.v.Has(k) {
					return q, engram.FieldError(k, "ids names the turns to list; %s does not go with it", k)
				}
			}
			return q, nil
		}
		switch {
		case q.Session == "" && q.After != 0:
			return q, engram.FieldError("after", "after pages a session's turns; give session too (the timeline pages with before)")
		case q.Session != "" && q.Before != 0:
			return q, engram.FieldError("before", "before pages the timeline; a session's turns page with after")
		}
		return q, nil
	}), func(bs engram.BrowseService, ctx context.Context, q engram.TurnQuery) (map[string]any, error) {
		turns, err := bs.ListTurns(ctx, q)
		if err != nil {
			return nil, err
		}
		// next is the cursor of the following page, 0 when this one is the last.
		var next int64
		if n := len(turns); n > 0 && n == engram.ListLimit(q.Limit) {
			next = turns[n-1].Seq // the last turn of the page: where the next one starts
		}
		return map[string]any{"turns": nonNil(turns), "next": next}, nil
	})
}

// getEntities lists the knowledge graph's entities, those with the most
// triples first.
func (s *Server) getEntities(c echo.Context) error {
	return serve(c, http.StatusOK, s.Browse, noBrowse, fromQuery(s, func(p *params) (engram.EntityQuery, error) {
		return engram.EntityQuery{Namespace: p.namespace(true), Prefix: p.name("prefix"), Limit: p.limit()}, nil
	}), list("entities", engram.BrowseService.Entities))
}

// getDocs lists the documents of one vault (its folder) or of every vault.
func (s *Server) getDocs(c echo.Context) error {
	return serve(c, http.StatusOK, s.VaultDocs, "vault documents are not available on this server",
		fromQuery(s, func(p *params) (string, error) { return p.name("vault"), nil }),
		list("docs", engram.VaultService.Docs))
}

// ids returns a comma-separated list of turn ids, 1 to MaxLayerLimit of
// them, none empty; nil when absent.
func (p *params) ids(k string) []string {
	if !p.v.Has(k) {
		return nil
	}
	list := strings.Split(p.v.Get(k), ",")
	if len(list) > MaxLayerLimit {
		p.fail(engram.FieldError(k, "%s names %d turns; at most %d at a time", k, len(list), MaxLayerLimit))
		return nil
	}
	for i, id := range list {
		switch {
		case id == "":
			p.fail(engram.FieldError(k, "%s must be turn ids separated by commas; id %d is empty", k, i+1))
			return nil
		case len(id) > p.maxField:
			p.fail(&engram.Error{Code: engram.ETOOLARGE, Field: k,
				Message: fmt.Sprintf("id %d of %s is %d bytes, over the limit of %d", i+1, k, len(id), p.maxField)})
			return nil
		case controlChar(k, id, p):
			return nil
		}
	}
	return list
}

// seq returns a sequence number (a positive integer); 0 when absent.
func (p *params) seq(k string) int64 {
	if !p.v.Has(k) {
		return 0
	}
	s := p.v.Get(k)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		p.fail(engram.FieldError(k, "%s must be a positive integer (a turn's seq), got %q", k, s))
		return 0
	}
	return n
}
