// Package homedir is the layout and the ownership of an engram home: the
// names engram's files take at the home's top level, the marker
// (MarkerFile) that lists them, and the check that refuses a home holding
// another program's files before anything is written into it.
//
// It knows the names of the files the archive, the configuration and the
// service managers keep in a home, and opens no store: it reads only its
// marker and the vaults config.toml names. The engine, the server and the
// CLI all ask it, so that each recognises a home the same way.
package homedir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/autostart"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/internal/atomicfile"
	"github.com/engram-dev/engram/internal/fspath"
	"github.com/engram-dev/engram/internal/textutil"
)

// Paths inside the home.
const (
	ArchiveDir = "archive"
	PalaceFile = "palace.db"
	// ServeFile tells CLI commands where the running server of the home
	// listens, so they talk to it instead of opening the home (which the
	// server has locked).
	ServeFile = "serve.json"
)

// Files of a rebuild, beside PalaceFile.
const (
	RebuildSuffix  = ".rebuild"        // the new palace while it is built
	PreviousSuffix = ".before-rebuild" // the palace a rebuild replaced, kept for the operator
)

// MarkerFile marks a folder as an engram home. engram writes it when it
// creates a home, or first opens one an older version made, and lists in
// it the names engram's files take at the home's top level: a later
// version's new file is then recognised by an earlier engram that opens
// the home (after a downgrade), which keeps the names it did not know.
const MarkerFile = "engram-home.json"

// names are the names (path.Match patterns) of what engram writes at a
// home's top level. A name added here is a file engram writes from now on.
var names = []string{
	MarkerFile,
	ArchiveDir,
	PalaceFile, PalaceFile + "-wal", PalaceFile + "-shm", PalaceFile + "-journal",
	PalaceFile + RebuildSuffix, PalaceFile + RebuildSuffix + "-wal", PalaceFile + RebuildSuffix + "-shm", PalaceFile + RebuildSuffix + "-journal",
	PalaceFile + PreviousSuffix,
	config.ConfigFile,
	ServeFile,
	archive.CorrectionsFile,
	autostart.LogDir, // the services' logs and the Claude Code hook's
	"hooks",          // the Claude Code hook's transcript offsets
	// The temporary files of an interrupted atomic write.
	"." + MarkerFile + ".tmp-*", "." + ServeFile + ".tmp-*", "." + archive.CorrectionsFile + ".tmp-*",
}

// osNames are what an operating system or a desktop leaves in any folder
// it shows or serves: they hold nobody's data, so a home may hold them.
// Every other name engram did not write, hidden or not, is foreign.
var osNames = []string{
	".DS_Store", "._*", ".localized", ".fseventsd", ".Spotlight-V100", ".Trashes", // macOS
	"Thumbs.db", "desktop.ini", // Windows, through a shared folder
	".directory", ".nfs*", "lost+found", // Linux: KDE, an NFS file held open, a file system's root
}

// configEdits are what a text editor leaves beside the config.toml it
// edits (a backup, a swap or lock file): the user's, while editing
// engram's file.
var configEdits = []string{
	config.ConfigFile + "~", config.ConfigFile + ".bak", config.ConfigFile + ".orig", "." + config.ConfigFile + ".sw?", "#" + config.ConfigFile + "#", ".#" + config.ConfigFile,
}

// marker is MarkerFile's content.
type marker struct {
	Note      string    `json:"note"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy string    `json:"created_by,omitempty"` // engram's version
	Names     []string  `json:"names"`
}

const markerNote = "This folder is an engram home. engram writes only the names listed here at its top level " +
	"and refuses a home that holds anything else (another program's files): give engram a home of its own."

// ForeignError is the error of a home that holds, at its top level, files
// engram did not write: engram writes nothing into such a home. Its chain
// holds an ECONFLICT engram.Error with the same message.
type ForeignError struct {
	Home  string
	Names []string // the foreign names, sorted
}

// Error names the files and how to give engram another home.
func (e *ForeignError) Error() string {
	shown := e.Names
	if len(shown) > 10 {
		shown = shown[:10]
	}
	list := strings.Join(shown, ", ")
	if n := len(e.Names) - len(shown); n > 0 {
		list += fmt.Sprintf(" and %d more", n)
	}
	other := ""
	if slices.Contains(e.Names, "engram.db") {
		other = " (engram.db is the database of another tool also named engram, which keeps it in ~/.engram)"
	}
	them := "it"
	if len(e.Names) > 1 {
		them = "them"
	}
	return fmt.Sprintf("the home %s holds %s engram did not write: %s%s; engram writes nothing into a folder another program uses. "+
		"Give engram a home of its own with --home DIR or ENGRAM_HOME=DIR (for example ENGRAM_HOME=~/.engram-memory), or move %s out of %s",
		e.Home, textutil.Noun(len(e.Names), "a file", "files"), list, other, them, e.Home)
}

// Unwrap gives the error its code, ECONFLICT.
func (e *ForeignError) Unwrap() error {
	return &engram.Error{Code: engram.ECONFLICT, Message: e.Error()}
}

// ForeignFiles returns the names at the top level of home that engram did
// not write, sorted: neither its own (names, or the names the home's
// MarkerFile lists), nor a vault the home's config.toml names (or a folder
// holding one), nor what an operating system leaves (osNames) or an editor
// beside config.toml (configEdits). A missing home holds none.
func ForeignFiles(home string) ([]string, error) {
	entries, err := os.ReadDir(home)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the home: %w", err)
	}
	known := slices.Concat(names, readMarker(home).Names, osNames, configEdits)
	vaults := homeVaults(home)
	var out []string
	for _, e := range entries {
		name := e.Name()
		if matchAny(known, name) || slices.ContainsFunc(vaults, func(v string) bool {
			p := filepath.Join(home, name)
			return v == p || fspath.Within(p, v)
		}) {
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out, nil
}

// Check returns a *ForeignError when home holds files engram did not write
// (ForeignFiles), nil when it is engram's, empty or missing.
func Check(home string) error {
	names, err := ForeignFiles(home)
	if err != nil {
		return err
	}
	if len(names) > 0 {
		return &ForeignError{Home: home, Names: names}
	}
	return nil
}

// Claim makes sure home is engram's before engram writes into it: refused
// (Check) when it holds another program's files, else created (0700) if
// missing and marked (MarkerFile) if not yet, as made by engram version.
// A marker that cannot be written is only logged: the home's files still
// say it is engram's.
func Claim(home, version string, logger *slog.Logger) error {
	if err := Check(home); err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("create home: %w", err)
	}
	m := readMarker(home)
	listed := slices.Clone(m.Names)
	for _, n := range names {
		if !slices.Contains(listed, n) {
			listed = append(listed, n)
		}
	}
	if len(listed) == len(m.Names) && m.Note != "" {
		return nil // marked, with every name this version writes
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt, m.CreatedBy = time.Now().UTC(), version
	}
	m.Note, m.Names = markerNote, listed
	b, err := json.MarshalIndent(m, "", "  ")
	if err == nil {
		err = atomicfile.WriteFile(filepath.Join(home, MarkerFile), append(b, '\n'), 0o600)
	}
	if err != nil && logger != nil {
		logger.Warn("could not mark the home as engram's", "file", MarkerFile, "err", err)
	}
	return nil
}

// readMarker reads home's MarkerFile; a missing or damaged one is empty.
func readMarker(home string) marker {
	var m marker
	b, err := os.ReadFile(filepath.Join(home, MarkerFile))
	if err != nil || json.Unmarshal(b, &m) != nil {
		return marker{}
	}
	return m
}

// homeVaults returns the vault folders home's config.toml names, cleaned;
// none when it does not parse (LoadConfig reports that).
func homeVaults(home string) []string {
	var c struct {
		Vaults []config.VaultConfig `toml:"vaults"`
	}
	if _, err := toml.DecodeFile(filepath.Join(home, config.ConfigFile), &c); err != nil {
		return nil
	}
	out := make([]string, 0, len(c.Vaults))
	for _, v := range c.Vaults {
		if filepath.IsAbs(v.Path) {
			out = append(out, filepath.Clean(v.Path))
		}
	}
	return out
}

// matchAny reports whether name matches one of the patterns.
func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}
