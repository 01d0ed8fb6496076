package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/engram-dev/engram/internal/atomicfile"
)

// Claude Code's settings.json and engram's hooks in it: `engram integrate
// claude-code` adds a command hook per event that runs `engram hook
// claude-code`, and takes exactly those out again.

// HookEvents are the Claude Code events engram hooks into.
var HookEvents = []string{"UserPromptSubmit", "Stop", "SessionEnd"}

// HookTimeout is the timeout, in seconds, Claude Code gives our hook.
const HookTimeout = 10

// HookMarker is in the command of every hook engram installs: how
// --remove and a re-install find ours.
const HookMarker = " hook claude-code"

// HookCommand is the hook's command line: this binary's absolute path
// and the absolute home, shell-quoted.
func HookCommand(home, namespace string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the engram binary: %w", err)
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	if home, err = filepath.Abs(home); err != nil {
		return "", err
	}
	cmd := shellQuote(exe) + " --home " + shellQuote(home) + HookMarker
	if namespace != "" {
		cmd += " --namespace " + shellQuote(namespace)
	}
	return cmd, nil
}

// shellQuote quotes s for sh when it holds anything but safe characters.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func isEngramHook(h any) bool {
	hm, ok := h.(map[string]any)
	if !ok {
		return false
	}
	cmd, _ := hm["command"].(string)
	return strings.Contains(cmd, HookMarker) && strings.Contains(cmd, "engram")
}

// RemoveHooks takes engram's hooks out of a settings "hooks" object,
// dropping matcher groups and events left empty.
func RemoveHooks(hooks map[string]any) map[string]any {
	for event, v := range hooks {
		groups, ok := v.([]any)
		if !ok {
			continue
		}
		var keep []any
		for _, g := range groups {
			gm, ok := g.(map[string]any)
			list, lok := gm["hooks"].([]any)
			if !ok || !lok {
				keep = append(keep, g)
				continue
			}
			var rest []any
			for _, h := range list {
				if !isEngramHook(h) {
					rest = append(rest, h)
				}
			}
			if len(rest) == len(list) {
				keep = append(keep, g)
			} else if len(rest) > 0 {
				gm["hooks"] = rest
				keep = append(keep, gm)
			}
		}
		if len(keep) == 0 {
			delete(hooks, event)
		} else {
			hooks[event] = keep
		}
	}
	return hooks
}

// AddHooks appends a matcher group running command to each event.
func AddHooks(hooks map[string]any, command string) map[string]any {
	if hooks == nil {
		hooks = map[string]any{}
	}
	for _, event := range HookEvents {
		groups, _ := hooks[event].([]any)
		hooks[event] = append(groups, map[string]any{
			"hooks": []any{map[string]any{"type": "command", "command": command, "timeout": HookTimeout}},
		})
	}
	return hooks
}

// EditSettings reads the JSON object at path (a missing file is {}), lets
// edit change it, and writes it back atomically if it changed, after a
// first copy to path.engram-backup. It reports whether it wrote.
func EditSettings(path string, edit func(map[string]any) error) (bool, error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	mode := fs.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	settings := map[string]any{}
	if len(bytes.TrimSpace(old)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(old))
		dec.UseNumber()
		if err := dec.Decode(&settings); err != nil {
			return false, fmt.Errorf("%s is not a JSON object (%v); fix it or move it away", path, err)
		}
	}
	before, _ := json.Marshal(settings)
	if err := edit(settings); err != nil {
		return false, err
	}
	after, _ := json.Marshal(settings)
	if bytes.Equal(before, after) {
		return false, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(settings); err != nil {
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, err
	}
	if backup := path + ".engram-backup"; old != nil {
		if _, err := os.Stat(backup); errors.Is(err, fs.ErrNotExist) {
			if err := os.WriteFile(backup, old, mode); err != nil {
				return false, fmt.Errorf("back up %s: %w", path, err)
			}
		}
	}
	if err := atomicfile.WriteFile(path, buf.Bytes(), mode); err != nil {
		return false, err
	}
	return true, nil
}

// SettingsPath is the settings.json engram's hooks go in: the project's
// DIR/.claude/settings.json, or the user's ~/.claude/settings.json when
// project is "".
func SettingsPath(project string) (string, error) {
	if project != "" {
		return filepath.Join(project, ".claude", "settings.json"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".claude", "settings.json"), nil
}

// Integrate puts engram's hooks running command into the settings.json at
// path, in place of any earlier ones, or with remove only takes them out,
// keeping every other setting and hook (see EditSettings). It reports
// whether it changed the file.
func Integrate(path, command string, remove bool) (bool, error) {
	return EditSettings(path, func(settings map[string]any) error {
		hooks, ok := settings["hooks"].(map[string]any)
		if settings["hooks"] != nil && !ok {
			return fmt.Errorf("%s: \"hooks\" is not an object; fix it by hand", path)
		}
		hooks = RemoveHooks(hooks)
		if !remove {
			hooks = AddHooks(hooks, command)
		}
		if len(hooks) == 0 {
			delete(settings, "hooks")
		} else {
			settings["hooks"] = hooks
		}
		return nil
	})
}
