package main

import (
	"github.com/engram-dev/engram/internal/termtext"
	"github.com/engram-dev/engram/internal/textutil"
)

// What the commands print holds text that clients stored, and a terminal
// acts on the control characters in it. The commands that print such text
// (recall, the layers, correct, forget, redact, doctor, jobs, vault,
// repair, the hook, errors) print it through these, which show a control
// character as an escape instead (package termtext); printJSON escapes the
// control characters JSON leaves raw.
var (
	termText     = termtext.Escape
	tprintf      = termtext.Printf
	tprintln     = termtext.Println
	jsonControls = termtext.JSON
)

// Stored text on one line, and counts in words (package textutil).
var (
	oneLine = textutil.OneLine
	plural  = textutil.Plural
	noun    = textutil.Noun
)
