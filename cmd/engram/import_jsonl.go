package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/engram-dev/engram/importer"
)

// mappingFlag collects --map, which may be given more than once.
type mappingFlag struct {
	m   importer.Mapping
	set []string
}

func (f *mappingFlag) String() string { return strings.Join(f.set, ",") }

func (f *mappingFlag) Set(s string) error {
	f.set = append(f.set, s)
	return nil
}

func runImportJSONL(ctx context.Context, m *Main, args []string) error {
	const cmd = "import jsonl"
	fs := m.newFlagSet(cmd, cmd+" --map content=PATH[,ts=PATH,session=PATH,role=PATH,speaker=PATH,id=PATH,namespace=PATH,meta=PATH] [--namespace N] [--quiet] FILE|-\n\n"+
		"Archives one turn per line of FILE, any JSON Lines log, taking each field from a gjson path\n"+
		"(https://github.com/tidwall/gjson/blob/master/SYNTAX.md): nested (msg.text), array elements\n"+
		"(messages.0.role) or arrays (parts.#.text, joined by newlines). content is required. The id is\n"+
		"jsonl-<the mapped id>, else a hash of the file's name, the line number and the content, so\n"+
		"importing again adds nothing. ts: RFC 3339, common layouts or Unix seconds/milliseconds;\n"+
		"role: user, assistant, system, tool or a synonym (human, ai, function...); session: default the\n"+
		"file's name. Bad lines are reported by line number and skipped; good lines are kept.")
	var mf mappingFlag
	fs.Var(&mf, "map", "FIELD=PATH,... (may be repeated)")
	ns := fs.String("namespace", "", "namespace for lines that map none (default \"default\")")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &usageError{cmd: cmd, msg: "want exactly one FILE, or - for standard input"}
	}
	if len(mf.set) == 0 {
		return &usageError{cmd: cmd, msg: "want --map content=PATH (and the other fields' paths)"}
	}
	for _, s := range mf.set {
		if err := mf.m.Parse(s); err != nil && !errors.Is(err, importer.ErrNoContentPath) {
			return &usageError{cmd: cmd, msg: "--map: " + err.Error()}
		}
	}
	if mf.m.Content == "" {
		return &usageError{cmd: cmd, msg: "--map: " + importer.ErrNoContentPath.Error()}
	}
	in, name, err := m.openInput(cmd, pos[0])
	if err != nil {
		return err
	}
	defer in.Close()
	j := &importer.JSONL{Map: mf.m, Source: name, Namespace: *ns}
	return m.importRecords(ctx, cmd, *quiet, "lines", func(record func(importer.Record) error) (string, error) {
		lines, err := j.Read(in, record)
		return fmt.Sprintf("%s: %d lines", name, lines), err
	})
}
