package engram

import (
	"errors"
	"fmt"
)

// Application error codes. Each maps to one HTTP status in httpapi.
const (
	EINVALID      = "invalid"                // the request is malformed or a field is bad (400)
	EUNAUTHORIZED = "unauthorized"           // missing or wrong token (401)
	EFORBIDDEN    = "forbidden"              // a Host or Origin engram does not answer (403)
	EMEDIATYPE    = "unsupported_media_type" // a body that is not application/json (415)
	ETIMEOUT      = "timeout"                // the request did not arrive in time (408)
	ENOTFOUND     = "not_found"              // the thing asked for does not exist (404)
	ECONFLICT     = "conflict"               // the state does not allow the operation (409)
	ETOOLARGE     = "too_large"              // a body or field exceeds its limit (413)
	EUNAVAILABLE  = "unavailable"            // a dependency is down or the store is closing (503)
	ENOSPACE      = "no_space"               // the disk is full; nothing was acknowledged (507)
	EINTERNAL     = "internal"               // a bug or an unexpected failure (500)
	ELOCKED       = "locked"                 // another process owns the home (409 at the API, exit 1 in the CLI)
	EUNSUPPORTED  = "not_supported"          // the operation is not available in this configuration
)

// Error is engram's application error: a code callers branch on, a message
// written for the person who sent the request, and, for validation errors,
// the field at fault (for example "turns[2].session").
type Error struct {
	Code    string
	Field   string
	Message string
	Err     error // the underlying cause, if any
}

// Error implements the error interface.
func (e *Error) Error() string {
	msg := e.Message
	if e.Field != "" {
		msg = e.Field + ": " + msg
	}
	if e.Err != nil {
		if msg == "" {
			return e.Err.Error()
		}
		return msg + ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FieldError returns an EINVALID error that names the field at fault.
func FieldError(field, format string, args ...any) *Error {
	return &Error{Code: EINVALID, Field: field, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for
// any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorField returns the field named by the first *Error in err's chain.
func ErrorField(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}

// ErrorMessage returns the message a client should see: the *Error's text for
// application errors, and a generic text for internal ones, so that internal
// details (paths, SQL) never leak through the API.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Code != EINTERNAL {
		if e.Message == "" && e.Err != nil {
			return e.Err.Error()
		}
		return e.Message
	}
	return "internal error"
}

// ErrorText is err as the operator reading a terminal or a log sees it: an
// application error as its message (with the field), anything else, an
// internal error included, in full.
func ErrorText(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Code != EINTERNAL {
		return e.Error()
	}
	return err.Error()
}
