package httpapi

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram"
)

// errorResponse is the JSON body of every error.
type errorResponse struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// statusOf maps engram error codes to HTTP statuses, in one place.
var statusOf = map[string]int{
	engram.EINVALID:      http.StatusBadRequest,
	engram.EUNAUTHORIZED: http.StatusUnauthorized,
	engram.EFORBIDDEN:    http.StatusForbidden,
	engram.EMEDIATYPE:    http.StatusUnsupportedMediaType,
	engram.ETIMEOUT:      http.StatusRequestTimeout,
	engram.ENOTFOUND:     http.StatusNotFound,
	engram.ECONFLICT:     http.StatusConflict,
	engram.ELOCKED:       http.StatusConflict,
	engram.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	engram.EUNAVAILABLE:  http.StatusServiceUnavailable,
	engram.ENOSPACE:      http.StatusInsufficientStorage,
	engram.EUNSUPPORTED:  http.StatusNotImplemented,
	engram.EINTERNAL:     http.StatusInternalServerError,
}

func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var he *echo.HTTPError
	body := errorBody{}
	status := http.StatusInternalServerError
	switch {
	case errors.As(err, &he):
		status = he.Code
		body.Code = codeOfStatus(he.Code)
		body.Message = http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok && m != "" {
			body.Message = m
		}
	default:
		code := engram.ErrorCode(err)
		if st, ok := statusOf[code]; ok {
			status = st
		}
		body.Code, body.Message, body.Field = code, engram.ErrorMessage(err), engram.ErrorField(err)
		if code == engram.EINTERNAL {
			s.logger.Error("request failed", "method", c.Request().Method, "path", c.Path(), "err", err)
		}
	}
	if c.Request().Method == http.MethodHead {
		err = c.NoContent(status)
	} else {
		err = c.JSON(status, errorResponse{Error: body})
	}
	if err != nil {
		s.logger.Warn("write error response", "err", err)
	}
}

func codeOfStatus(status int) string {
	for code, st := range statusOf {
		if st == status && code != engram.ELOCKED {
			return code
		}
	}
	switch status {
	case http.StatusMethodNotAllowed:
		return "method_not_allowed"
	}
	return engram.EINTERNAL
}
