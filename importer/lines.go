package importer

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/engram-dev/engram"
)

// ReadLines reads engram's own turns, one JSON object per line
// (engram.DecodeTurnInput: the fields of POST /v1/turns), as `engram
// ingest` does: it passes emit a Record for each non-blank line, the turn
// (with namespace where the line names none) or why the line is none, and
// returns the lines read, with emit's error or r's. An Importer validates,
// batches and archives the records, as it does an import's.
func ReadLines(r io.Reader, namespace string, emit func(Record) error) (int, error) {
	return eachLine(r, emit, func(_ int, line []byte) (engram.TurnInput, error) {
		in, err := engram.DecodeTurnInput(line, "")
		if err != nil {
			if engram.ErrorField(err) == "body" {
				return in, errors.New("the line " + engram.ErrorMessage(err)) // the "body" is the line itself
			}
			return in, errors.New(engram.ErrorText(err))
		}
		if in.Namespace == "" {
			in.Namespace = namespace
		}
		return in, nil
	})
}

// eachLine passes emit the record turn makes of each non-blank line of r,
// numbered from 1 (blank lines count), and returns the non-blank lines
// read, with emit's error or r's.
func eachLine(r io.Reader, emit func(Record) error, turn func(lineNo int, line []byte) (engram.TurnInput, error)) (int, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	lineNo, lines := 0, 0
	for {
		line, rerr := br.ReadBytes('\n')
		if len(line) > 0 {
			lineNo++
			if len(bytes.TrimSpace(line)) > 0 {
				lines++
				in, err := turn(lineNo, line)
				rec := Record{Where: "line " + strconv.Itoa(lineNo), Turn: in, Err: err}
				if err != nil {
					rec.Turn = engram.TurnInput{}
				}
				if err := emit(rec); err != nil {
					return lines, err
				}
			}
		}
		if errors.Is(rerr, io.EOF) {
			return lines, nil
		}
		if rerr != nil {
			return lines, rerr
		}
	}
}
