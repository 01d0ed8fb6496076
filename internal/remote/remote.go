// Package remote holds what engram's adapters over a server share, so that
// each keeps only what is its server's: the HTTP transport (ollama, openai,
// chroma); the error that tells a person what to do about a failed request,
// and which failures a retry may cure (ollama, openai); an embedder's
// batches, dimension check and probe (ollama, openai).
package remote

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	engram "github.com/engram-dev/engram"
)

// NewTransport returns a copy of http.DefaultTransport whose connecting
// gives up after dial, or after timeout when that is shorter, so that an
// address where nothing answers fails fast even when a request may take
// minutes.
func NewTransport(dial, timeout time.Duration) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: min(dial, timeout), KeepAlive: 30 * time.Second}).DialContext
	return t
}

// NoAnswer reports whether err means the server gave no answer: it could
// not be reached (refused during a restart, reset), hung up mid-reply or
// did not answer in time. Sending the request again may succeed.
func NoAnswer(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// Unavailable returns an EUNAVAILABLE error whose message is msg whole,
// hint included, and which unwraps to err for errors.Is and errors.As.
func Unavailable(msg string, err error) error {
	// msg sits in engram.Error's Err with an empty Message, so that the text
	// a client sees (engram.ErrorMessage) is the whole of it.
	return &engram.Error{Code: engram.EUNAVAILABLE, Err: &describedError{msg: msg, err: err}}
}

// describedError carries a complete message for the user and the cause for
// errors.Is and errors.As.
type describedError struct {
	msg string
	err error
}

func (e *describedError) Error() string { return e.msg }
func (e *describedError) Unwrap() error { return e.err }

// Cause drops the *url.Error wrapper ("Post \"http://...\": ") that repeats
// the address a message already names.
func Cause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
