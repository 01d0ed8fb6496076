package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/engram-dev/engram/internal/atomicfile"
)

// ccHookEvents are the Claude Code events engram hooks into.
var ccHookEvents = []string{"UserPromptSubmit", "Stop", "SessionEnd"}

// ccHookTimeout is the timeout, in seconds, Claude Code gives our hook.
const ccHookTimeout = 10

// ccHookMarker is in the command of every hook engram installs: how
// --remove and a re-install find ours.
const ccHookMarker = " hook claude-code"

func runIntegrate(ctx context.Context, m *Main, args []string) error {
	flags := m.newFlagSet("integrate", "integrate claude-code [--project DIR] [--namespace N] [--print] [--remove]\n\nAdds engram's hooks (UserPromptSubmit, Stop, SessionEnd) to ~/.claude/settings.json,\nor DIR/.claude/settings.json with --project, keeping every other setting and hook.\nThe first change keeps a copy in settings.json.engram-backup.")
	project := flags.String("project", "", "the project folder whose .claude/settings.json to change (default: the user's ~/.claude/settings.json)")
	ns := flags.String("namespace", "", "namespace for the hook's turns and recall (default cc-<project folder name>)")
	printOnly := flags.Bool("print", false, "print the hooks snippet and change nothing")
	remove := flags.Bool("remove", false, "take engram's hooks out again")
	pos, err := parse(flags, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "claude-code" {
		return &usageError{msg: "want 'engram integrate claude-code' (the one integration there is)"}
	}
	if *printOnly && *remove {
		return &usageError{msg: "--print and --remove exclude each other"}
	}
	cfg, err := m.loadConfig()
	if err != nil {
		return err
	}
	command, err := ccHookCommand(cfg.Home, *ns)
	if err != nil {
		return err
	}
	if *printOnly {
		b, _ := json.MarshalIndent(map[string]any{"hooks": addCCHooks(nil, command)}, "", "  ")
		fmt.Fprintf(m.Stdout, "%s\n", b)
		return nil
	}
	var path string
	if *project != "" {
		path = filepath.Join(*project, ".claude", "settings.json")
	} else {
		home, err := os.UserHomeDir()
		if err != nil {
			return err
		}
		path = filepath.Join(home, ".claude", "settings.json")
	}
	changed, err := editSettings(path, func(settings map[string]any) error {
		hooks, ok := settings["hooks"].(map[string]any)
		if settings["hooks"] != nil && !ok {
			return fmt.Errorf("%s: \"hooks\" is not an object; fix it by hand", path)
		}
		hooks = removeCCHooks(hooks)
		if !*remove {
			hooks = addCCHooks(hooks, command)
		}
		if len(hooks) == 0 {
			delete(settings, "hooks")
		} else {
			settings["hooks"] = hooks
		}
		return nil
	})
	if err != nil {
		return err
	}
	switch {
	case !changed:
		fmt.Fprintf(m.Stdout, "%s: nothing to change\n", path)
	case *remove:
		fmt.Fprintf(m.Stdout, "%s: engram's hooks removed\n", path)
	default:
		fmt.Fprintf(m.Stdout, "%s: engram hooks on %s: %s\n", path, strings.Join(ccHookEvents, ", "), command)
	}
	return nil
}

// ccHookCommand is the hook's command line: this binary's absolute path
// and the absolute home, shell-quoted.
func ccHookCommand(home, namespace string) (string, error) {
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
	cmd := shellQuote(exe) + " --home " + shellQuote(home) + ccHookMarker
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

func isCCHook(h any) bool {
	hm, ok := h.(map[string]any)
	if !ok {
		return false
	}
	cmd, _ := hm["command"].(string)
	return strings.Contains(cmd, ccHookMarker) && strings.Contains(cmd, "engram")
}

// removeCCHooks takes engram's hooks out of a settings "hooks" object,
// dropping matcher groups and events left empty.
func removeCCHooks(hooks map[string]any) map[string]any {
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
				if !isCCHook(h) {
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

// addCCHooks appends a matcher group running command to each event.
func addCCHooks(hooks map[string]any, command string) map[string]any {
	if hooks == nil {
		hooks = map[string]any{}
	}
	for _, event := range ccHookEvents {
		groups, _ := hooks[event].([]any)
		hooks[event] = append(groups, map[string]any{
			"hooks": []any{map[string]any{"type": "command", "command": command, "timeout": ccHookTimeout}},
		})
	}
	return hooks
}

// editSettings reads the JSON object at path (a missing file is {}), lets
// edit change it, and writes it back atomically if it changed, after a
// first copy to path.engram-backup. It reports whether it wrote.
func editSettings(path string, edit func(map[string]any) error) (bool, error) {
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
