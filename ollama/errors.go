package ollama

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/ollama/ollama/api"

	"github.com/engram-dev/engram/internal/remote"
)

// transient reports whether a request that failed with err may succeed if
// sent again: the server was unreachable (refused during a restart, reset),
// hung up mid-reply, timed out, was busy (429) or failed (5xx). Any other
// 4xx is the request's or the configuration's fault and is not retried.
func transient(err error) bool {
	var se api.StatusError
	if errors.As(err, &se) {
		return se.StatusCode >= 500 || se.StatusCode == http.StatusTooManyRequests
	}
	var ae api.AuthorizationError
	if errors.As(err, &ae) {
		return false
	}
	return remote.NoAnswer(err)
}

// describe turns the last error of a request into an EUNAVAILABLE error that
// says what to do about it.
func (e *Embedder) describe(err error, attempts int) error {
	tries := ""
	if attempts > 1 {
		tries = fmt.Sprintf(" (%d attempts)", attempts)
	}
	var se api.StatusError
	var ae api.AuthorizationError
	var msg string
	switch {
	case errors.As(err, &se) && se.StatusCode == http.StatusNotFound:
		msg = fmt.Sprintf("model %q is not available on the ollama server at %s; run: ollama pull %s", e.cfg.Model, e.base, e.cfg.Model)
	case errors.As(err, &se):
		msg = fmt.Sprintf("ollama server at %s answered %d %s%s: %s", e.base, se.StatusCode, http.StatusText(se.StatusCode), tries, statusText(se))
	case errors.As(err, &ae):
		msg = fmt.Sprintf("ollama server at %s refused access: %d %s", e.base, ae.StatusCode, http.StatusText(ae.StatusCode))
	case errors.Is(err, context.DeadlineExceeded):
		msg = fmt.Sprintf("ollama server at %s did not answer within %s%s (the first request loads the model: raise the timeout if the machine is slow)", e.base, e.cfg.Timeout, tries)
	case remote.NoAnswer(err):
		msg = fmt.Sprintf("ollama server at %s not reachable%s: %v; start it with \"ollama serve\" or set OLLAMA_HOST", e.base, tries, remote.Cause(err))
	default:
		msg = fmt.Sprintf("unexpected reply from the ollama server at %s: %v", e.base, remote.Cause(err))
	}
	return remote.Unavailable(msg, err)
}

func statusText(se api.StatusError) string {
	if se.ErrorMessage != "" {
		return se.ErrorMessage
	}
	return "no detail"
}
