package httpapi

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram"
)

// The plumbing every JSON route shares, written once: is the route's
// service set, read the request, call the service, answer with JSON. A
// handler names its service, how its request is read and what answers it.

// serve answers c: EUNSUPPORTED with the message unsupported when the
// route's service svc is not set (501), else the request that read makes of
// c (its errors are the client's), answered by call on svc and sent as JSON
// with status.
func serve[S, Req, Resp any](c echo.Context, status int, svc S, unsupported string,
	read func(echo.Context) (Req, error), call func(S, context.Context, Req) (Resp, error)) error {
	if any(svc) == nil {
		return engram.Errorf(engram.EUNSUPPORTED, "%s", unsupported)
	}
	return answer(c, status, read, func(ctx context.Context, req Req) (Resp, error) { return call(svc, ctx, req) })
}

// answer is serve for a service that is always set.
func answer[Req, Resp any](c echo.Context, status int, read func(echo.Context) (Req, error),
	call func(context.Context, Req) (Resp, error)) error {
	req, err := read(c)
	if err != nil {
		return err
	}
	resp, err := call(c.Request().Context(), req)
	if err != nil {
		return err
	}
	return c.JSON(status, resp)
}

// fromQuery reads a request from the query string (checkQuery let through
// only the route's parameters, as openapi.json names them): build takes
// them from p, and the first bad value it met (p.err) is the error before
// any of build's own.
func fromQuery[Req any](s *Server, build func(p *params) (Req, error)) func(echo.Context) (Req, error) {
	return func(c echo.Context) (Req, error) {
		var zero Req
		p, err := s.queryParams(c)
		if err != nil {
			return zero, err
		}
		req, err := build(p)
		if p.err != nil {
			return zero, p.err
		}
		return req, err
	}
}

// fromBody reads a request from the JSON body, up to the size limit, with
// decode.
func fromBody[Req any](s *Server, decode func(body []byte) (Req, error)) func(echo.Context) (Req, error) {
	return func(c echo.Context) (Req, error) {
		body, err := s.readBody(c)
		if err != nil {
			var zero Req
			return zero, err
		}
		return decode(body)
	}
}

// list answers with the list f returns as the member key of an object,
// [] when there is none (never null).
func list[S, Req, T any](key string, f func(S, context.Context, Req) ([]T, error)) func(S, context.Context, Req) (map[string]any, error) {
	return func(svc S, ctx context.Context, req Req) (map[string]any, error) {
		l, err := f(svc, ctx, req)
		if err != nil {
			return nil, err
		}
		return map[string]any{key: nonNil(l)}, nil
	}
}

// noQuery is the request of a route that reads none.
func noQuery(echo.Context) (struct{}, error) { return struct{}{}, nil }

// positiveOr returns v, or def when v is zero or negative.
func positiveOr[T ~int | ~int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
