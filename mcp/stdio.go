package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-dev/engram/internal/lockedio"
)

// JSON-RPC error codes of the lines the stdio transport refuses.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// The SDK's stdio transport decodes stdin as one stream of JSON and ends
// the connection (and `engram mcp` with it) at the first value it cannot
// decode: a line of garbage, a raw NUL in a string, nesting deeper than
// encoding/json takes. lineFilter stands between stdin and it, a line at a
// time (the MCP stdio transport delimits messages by newlines): a line that
// is one JSON-RPC message goes on to the SDK; any other is answered with a
// JSON-RPC error of id null (-32700 for what is not JSON, -32600 for JSON
// that is no message, a batch, which MCP has dropped, or a line over the
// limit) and skipped, as /mcp over HTTP answers such a body with a 400 and
// goes on serving.
type lineFilter struct {
	in    io.ReadCloser
	br    *bufio.Reader
	out   *lockedWriter
	limit int
	buf   []byte // what is left of the line handed on
	err   error  // the input's error, returned once buf is handed on
}

// lockedWriter serializes the writes of the SDK's transport (one Write per
// message) and of the filter's error answers.
type lockedWriter struct{ *lockedio.Writer }

// Close leaves the writer open: ServeIO never closes its out.
func (lockedWriter) Close() error { return nil }

func newLineFilter(in io.ReadCloser, out *lockedWriter, limit int) *lineFilter {
	if limit <= 0 {
		limit = sdk.DefaultMaxLineLength
	}
	return &lineFilter{in: in, br: bufio.NewReaderSize(in, 64<<10), out: out, limit: limit}
}

// Close closes the input, which unblocks a read in progress.
func (f *lineFilter) Close() error { return f.in.Close() }

// Read hands on the lines that are JSON-RPC messages, each trimmed and
// ended by a newline, and answers the others.
func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.buf) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, err := f.readLine()
		tooLong := errors.Is(err, errLineTooLong)
		if err != nil && !tooLong {
			f.err = err // after the line read with it
		}
		if !tooLong && len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		msg, code, why := check(line, tooLong)
		if code != 0 {
			if werr := f.answer(code, why); werr != nil {
				return 0, werr
			}
			continue
		}
		f.buf = append(msg, '\n')
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	return n, nil
}

// errLineTooLong is a line over the limit, skipped to its end.
var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its newline. A line over the
// limit is read to its end and dropped: errLineTooLong.
func (f *lineFilter) readLine() ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := f.br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > f.limit+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, errLineTooLong
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

// check returns the line as the SDK will decode it, or the code and reason
// of the error that answers it.
func check(line []byte, tooLong bool) (msg []byte, code int, why string) {
	if tooLong {
		return nil, codeInvalidRequest, "the message is longer than the limit of a line"
	}
	line = bytes.TrimSpace(line)
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v) // says where the JSON breaks
		if err == nil {
			err = errors.New("not one JSON value")
		}
		return nil, codeParseError, "Parse error: " + err.Error()
	}
	if line[0] == '[' {
		return nil, codeInvalidRequest, "Invalid Request: batches of messages are not supported"
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		return nil, codeInvalidRequest, "Invalid Request: " + err.Error()
	}
	return line, 0, ""
}

// answer writes a JSON-RPC error response of id null.
func (f *lineFilter) answer(code int, message string) error {
	b, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": code, "message": message},
	})
	if err != nil {
		return fmt.Errorf("mcp: encode an error answer: %w", err)
	}
	_, err = f.out.Write(append(b, '\n'))
	return err
}
