package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/server"
)

// parseBackupDir parses the flags of backup or restore and returns their one
// argument, the backup folder, made absolute.
func parseBackupDir(flags *flag.FlagSet, args []string) (string, error) {
	pos, err := parse(flags, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		return "", &usageError{msg: "want one argument: the backup folder"}
	}
	return filepath.Abs(pos[0])
}

func runBackup(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("backup", `backup [--force] [--json] DIR

Writes a consistent copy of the home (the archive, the palace, config.toml)
and a manifest with every file's SHA-256 into DIR, which must not exist or be
empty, while engram serve goes on serving: the server makes the copy when it
runs, this process otherwise. Restore it with `+"`engram restore DIR`.")
	force := fs.Bool("force", false, "replace an earlier backup in DIR")
	asJSON := fs.Bool("json", false, "print JSON (the HTTP API's shape)")
	dir, err := parseBackupDir(fs, args)
	if err != nil {
		return err
	}
	// A running server owns the home and copies it; the folder is on this
	// machine, where serve.json was found. No client timeout: a large home
	// takes minutes, and ^C cancels.
	cfg, be, err := m.openHome(ctx)
	if err != nil {
		return err
	}
	defer be.Close()
	rep, err := be.Backup(ctx, engram.BackupRequest{Dir: dir, Force: *force})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(m, rep)
	}
	fmt.Fprintf(m.Stdout, "backup of %s written to %s in %.1f s\n", cfg.Home, rep.Dir, rep.TookMS/1000)
	fmt.Fprintf(m.Stdout, "  archive: %d turns, last seq %d\n", rep.ArchiveTurns, rep.ArchiveSeq)
	fmt.Fprintf(m.Stdout, "  palace:  indexed to seq %d, schema version %d\n", rep.IndexedSeq, rep.SchemaVersion)
	fmt.Fprintf(m.Stdout, "  %d files, %d bytes\n", rep.Files, rep.Bytes)
	return nil
}

func runRestore(ctx context.Context, m *Main, args []string) error {
	flags := m.newFlagSet("restore", `restore [--force] [--home H] DIR

Restores the backup in DIR (made by `+"`engram backup`"+`) into the home: checks
every file against the manifest's SHA-256, copies the files into a new folder
beside the home and renames it into place, then opens the home and checks
that its counts match the manifest. A home that holds anything is refused
unless --force, which moves it aside to <home>.before-restore-<time>; a home
that holds files engram did not write (another program's) is refused even
with --force, and nothing of it is moved. Stop engram serve on the home first.`)
	force := flags.Bool("force", false, "restore over a home that holds data, moving it aside to <home>.before-restore-<time>")
	dir, err := parseBackupDir(flags, args)
	if err != nil {
		return err
	}
	home, err := m.resolveHome()
	if err != nil {
		return err
	}
	start := time.Now()
	rep, err := server.Restore(ctx, server.Config{Config: config.Config{Home: home}}, dir, *force, m.loadConfig, m.logger)
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "restored %s into %s in %.1f s: %d turns up to seq %d (backup of %s), palace caught up from seq %d\n",
		dir, home, time.Since(start).Seconds(), rep.Turns, rep.LastSeq, rep.CreatedAt.Local().Format(time.RFC3339),
		rep.IndexedSeq)
	if rep.Aside != "" {
		fmt.Fprintf(m.Stdout, "the previous home is kept as %s\n", rep.Aside)
	}
	return nil
}
