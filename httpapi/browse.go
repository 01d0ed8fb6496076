package httpapi

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram"
)

func (s *Server) browse() (engram.BrowseService, error) {
	if s.Browse == nil {
		return nil, engram.Errorf(engram.EUNSUPPORTED, "listing turns and entities is not available on this server")
	}
	return s.Browse, nil
}

// getTurns lists stored turns: the timeline, newest first, paged with
// before; or one session's turns in order, paged with after.
func (s *Server) getTurns(c echo.Context) error {
	bs, err := s.browse()
	if err != nil {
		return err
	}
	p, err := s.queryParams(c, "namespace", "session", "before", "after", "limit")
	if err != nil {
		return err
	}
	q := engram.TurnQuery{
		Namespace: p.namespace(true),
		Session:   p.name("session"),
		Before:    p.seq("before"),
		After:     p.seq("after"),
		Limit:     p.limit(),
	}
	switch {
	case p.err != nil:
		return p.err
	case q.Session == "" && q.After != 0:
		return engram.FieldError("after", "after pages a session's turns; give session too (the timeline pages with before)")
	case q.Session != "" && q.Before != 0:
		return engram.FieldError("before", "before pages the timeline; a session's turns page with after")
	}
	turns, err := bs.ListTurns(c.Request().Context(), q)
	if err != nil {
		return err
	}
	// next is the cursor of the following page, 0 when this one is the last.
	var next int64
	if n := len(turns); n > 0 && n == limitOr(q.Limit, defaultListLimit) {
		next = turns[n-1].Seq // the last turn of the page: where the next one starts
	}
	return c.JSON(http.StatusOK, map[string]any{"turns": nonNil(turns), "next": next})
}

// getEntities lists the knowledge graph's entities, those with the most
// triples first.
func (s *Server) getEntities(c echo.Context) error {
	bs, err := s.browse()
	if err != nil {
		return err
	}
	p, err := s.queryParams(c, "namespace", "prefix", "limit")
	if err != nil {
		return err
	}
	q := engram.EntityQuery{Namespace: p.namespace(true), Prefix: p.name("prefix"), Limit: p.limit()}
	if p.err != nil {
		return p.err
	}
	es, err := bs.Entities(c.Request().Context(), q)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"entities": nonNil(es)})
}

// getDocs lists the documents of one vault (its folder) or of every vault.
func (s *Server) getDocs(c echo.Context) error {
	if s.VaultDocs == nil {
		return engram.Errorf(engram.EUNSUPPORTED, "vault documents are not available on this server")
	}
	p, err := s.queryParams(c, "vault")
	if err != nil {
		return err
	}
	vault := p.name("vault")
	if p.err != nil {
		return p.err
	}
	docs, err := s.VaultDocs.Docs(c.Request().Context(), vault)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"docs": nonNil(docs)})
}

// defaultListLimit is the page size of the list routes when no limit is
// given (the palace's default).
const defaultListLimit = 50

func limitOr(n, def int) int {
	if n == 0 {
		return def
	}
	return n
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
