package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/engram-dev/engram"
)

// VaultDir returns dir absolute and cleaned, the form config.toml holds,
// once it is known to be a folder.
func VaultDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	abs = filepath.Clean(abs)
	if strings.ContainsAny(abs, "\n\r") {
		return "", engram.Errorf(engram.EINVALID, "%q: a folder name with a line break cannot be a vault", abs)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", engram.Errorf(engram.ENOTFOUND, "%s does not exist: give the folder of your Markdown notes", abs)
	case err != nil:
		return "", err
	case !fi.IsDir():
		return "", engram.Errorf(engram.EINVALID, "%s is a file, not a folder: give the folder of your Markdown notes", abs)
	}
	return abs, nil
}

// AppendVault records v in <home>/config.toml by appending a
// [[vaults]] table: the user's text is never rewritten. The file is created
// (0600) if missing. If the result does not load (an inline `vaults = [...]`
// in the file, say), the file gets its original bytes back.
func AppendVault(home string, v VaultConfig, getenv func(string) string) (string, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", fmt.Errorf("create home: %w", err)
	}
	path := filepath.Join(home, ConfigFile)
	orig, err := os.ReadFile(path)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return path, err
	}
	var b strings.Builder
	if len(orig) > 0 {
		if orig[len(orig)-1] != '\n' {
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("# added by `engram vault add`\n[[vaults]]\n")
	b.WriteString("path = " + tomlString(v.Path) + "\n")
	b.WriteString("namespace = " + tomlString(v.Namespace) + "\n")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return path, err
	}
	_, werr := f.WriteString(b.String())
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = checkVaultConfig(home, v, getenv)
	}
	if werr == nil {
		return path, nil
	}
	// Put the file back as it was.
	var rerr error
	if existed {
		rerr = os.Truncate(path, int64(len(orig)))
	} else {
		rerr = os.Remove(path)
	}
	if rerr != nil {
		return path, fmt.Errorf("%s: adding the vault failed (%v), and restoring the file failed too: %w; remove the last [[vaults]] table by hand", path, werr, rerr)
	}
	return path, fmt.Errorf("%s left unchanged: adding the vault failed: %w", path, werr)
}

// checkVaultConfig loads the configuration again, as every command will,
// and checks that it holds v. The keys of the layers above the engine (the
// server's) are theirs to check, and a [[vaults]] table adds none.
func checkVaultConfig(home string, v VaultConfig, getenv func(string) string) error {
	cfg, err := loadConfig(home, getenv, nil, false)
	if err != nil {
		return err
	}
	for _, got := range cfg.Vaults {
		if got == v {
			return nil
		}
	}
	return fmt.Errorf("the appended [[vaults]] table does not read back as path %q, namespace %q", v.Path, v.Namespace)
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
