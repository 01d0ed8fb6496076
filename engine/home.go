package engine

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
)

// HomeFile marks a folder as an engram home. engram writes it when it
// creates a home, or first opens one an older version made, and lists in
// it the names engram's files take at the home's top level: a later
// version's new file is then recognised by an earlier engram that opens
// the home (after a downgrade), which keeps the names it did not know.
const HomeFile = "engram-home.json"

// homeNames are the names (path.Match patterns) of what engram writes at a
// home's top level. A name added here is a file engram writes from now on.
var homeNames = []string{
	HomeFile,
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
	"." + HomeFile + ".tmp-*", "." + ServeFile + ".tmp-*", "." + archive.CorrectionsFile + ".tmp-*",
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

// homeMarker is HomeFile's content.
type homeMarker struct {
	Note      string    `json:"note"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy string    `json:"created_by,omitempty"` // engram's version
	Names     []string  `json:"names"`
}

const markerNote = "This folder is an engram home. engram writes only the names listed here at its top level " +
	"and refuses a home that holds anything else (another program's files): give engram a home of its own."

// ForeignHomeError is the error of a home that holds, at its top level,
// files engram did not write: engram writes nothing into such a home. Its
// chain holds an ECONFLICT engram.Error with the same message.
type ForeignHomeError struct {
	Home  string
	Names []string // the foreign names, sorted
}

// Error names the files and how to give engram another home.
func (e *ForeignHomeError) Error() string {
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
		e.Home, noun(len(e.Names), "a file", "files"), list, other, them, e.Home)
}

// Unwrap gives the error its code, ECONFLICT.
func (e *ForeignHomeError) Unwrap() error {
	return &engram.Error{Code: engram.ECONFLICT, Message: e.Error()}
}

// ForeignFiles returns the names at the top level of home that engram did
// not write, sorted: neither its own (homeNames, or the names the home's
// HomeFile lists), nor a vault the home's config.toml names (or a folder
// holding one), nor what an operating system leaves (osNames) or an editor
// beside config.toml (configEdits). A missing
// home holds none.
func ForeignFiles(home string) ([]string, error) {
	entries, err := os.ReadDir(home)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the home: %w", err)
	}
	known := slices.Concat(homeNames, readMarker(home).Names, osNames, configEdits)
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

// CheckHome returns a *ForeignHomeError when home holds files engram did
// not write (ForeignFiles), nil when it is engram's, empty or missing.
func CheckHome(home string) error {
	names, err := ForeignFiles(home)
	if err != nil {
		return err
	}
	if len(names) > 0 {
		return &ForeignHomeError{Home: home, Names: names}
	}
	return nil
}

// claimHome makes sure home is engram's before engram writes into it:
// refused (CheckHome) when it holds another program's files, else created
// (0700) if missing and marked (HomeFile) if not yet. A marker that cannot
// be written is only logged: the home's files still say it is engram's.
func claimHome(home, version string, logger *slog.Logger) error {
	if err := CheckHome(home); err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("create home: %w", err)
	}
	m := readMarker(home)
	names := slices.Clone(m.Names)
	for _, n := range homeNames {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) == len(m.Names) && m.Note != "" {
		return nil // marked, with every name this version writes
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt, m.CreatedBy = time.Now().UTC(), version
	}
	m.Note, m.Names = markerNote, names
	b, err := json.MarshalIndent(m, "", "  ")
	if err == nil {
		err = atomicfile.WriteFile(filepath.Join(home, HomeFile), append(b, '\n'), 0o600)
	}
	if err != nil && logger != nil {
		logger.Warn("could not mark the home as engram's", "file", HomeFile, "err", err)
	}
	return nil
}

// readMarker reads home's HomeFile; a missing or damaged one is empty.
func readMarker(home string) homeMarker {
	var m homeMarker
	b, err := os.ReadFile(filepath.Join(home, HomeFile))
	if err != nil || json.Unmarshal(b, &m) != nil {
		return homeMarker{}
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
