package autostart

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// LaunchAgentsDir is the LaunchAgents folder of a user whose home folder is
// userHome.
func LaunchAgentsDir(userHome string) string {
	return filepath.Join(userHome, "Library", "LaunchAgents")
}

// SystemdUserDir is the folder of a user's own systemd units:
// $XDG_CONFIG_HOME/systemd/user, or userHome/.config/systemd/user when
// xdgConfigHome is empty or relative (which the XDG spec says to ignore).
func SystemdUserDir(xdgConfigHome, userHome string) string {
	if !filepath.IsAbs(xdgConfigHome) {
		xdgConfigHome = filepath.Join(userHome, ".config")
	}
	return filepath.Join(xdgConfigHome, "systemd", "user")
}

// makeLogDir creates the home and its log folder, private like the home.
func makeLogDir(s Service) error {
	dir := filepath.Join(s.Home, LogDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the log folder: %w", err)
	}
	return nil
}

// LaunchAgents installs a Service's two agents into a LaunchAgents folder
// and loads them into a launchd domain with launchctl.
type LaunchAgents struct {
	// Dir is the LaunchAgents folder, usually LaunchAgentsDir(home).
	Dir string
	// Domain is the launchd domain target, "gui/<uid>" for a user's agents.
	Domain string
	// Runner runs launchctl; nil means Install and Uninstall only write and
	// remove files, and return the launchctl commands in Result.Todo.
	Runner Runner
}

// NewLaunchAgents returns the installer for the agents of user uid in dir.
func NewLaunchAgents(dir string, uid int, r Runner) *LaunchAgents {
	return &LaunchAgents{Dir: dir, Domain: fmt.Sprintf("gui/%d", uid), Runner: r}
}

func (l *LaunchAgents) target(label string) string { return l.Domain + "/" + label }

// loaded reports whether label is loaded in the domain: `launchctl print`
// succeeds only for a loaded service. Asking launchctl, rather than reading
// its messages or exit codes, whose wording and numbers differ between macOS
// versions, is what makes "not loaded" and "already loaded" tolerable.
func (l *LaunchAgents) loaded(ctx context.Context, label string) bool {
	return query(ctx, l.Runner, Command{"launchctl", "print", l.target(label)}) == nil
}

// bootout unloads label if it is loaded; it fails only if label is still
// loaded afterwards.
func (l *LaunchAgents) bootout(ctx context.Context, label string, res *Result) error {
	if !l.loaded(ctx, label) {
		return nil
	}
	err := run(ctx, l.Runner, res, Command{"launchctl", "bootout", l.target(label)})
	if err != nil && l.loaded(ctx, label) {
		return err
	}
	return nil
}

// Install validates s, writes its two plists into Dir (replacing older
// ones), creates Home/logs and, with a Runner, loads each agent: it boots an
// agent out first if it is loaded, enables it (clearing a `launchctl
// disable`), and bootstraps the plist. A bootstrap that fails while the
// agent is loaded (it was loaded again in between) is tolerated. It returns
// an EINVALID error for a bad Service, and a *CommandError for a launchctl
// command that failed; the files are written by then.
func (l *LaunchAgents) Install(ctx context.Context, s Service) (Result, error) {
	var res Result
	files, err := s.LaunchdFiles()
	if err != nil {
		return res, err
	}
	if err := makeLogDir(s); err != nil {
		return res, err
	}
	if _, err := writeFiles(l.Dir, files, &res); err != nil {
		return res, err
	}
	for i, a := range s.Agents() {
		path := filepath.Join(l.Dir, files[i].Name)
		bootstrap := Command{"launchctl", "bootstrap", l.Domain, path}
		if l.Runner == nil {
			res.Todo = append(res.Todo, Command{"launchctl", "bootout", l.target(a.Label)}, bootstrap)
			continue
		}
		if err := l.bootout(ctx, a.Label, &res); err != nil {
			return res, err
		}
		if err := run(ctx, l.Runner, &res, Command{"launchctl", "enable", l.target(a.Label)}); err != nil {
			return res, err
		}
		if err := run(ctx, l.Runner, &res, bootstrap); err != nil && !l.loaded(ctx, a.Label) {
			return res, err
		}
	}
	return res, nil
}

// Uninstall boots out the agents of the label prefix (with a Runner; else
// it returns the bootout commands in Result.Todo) and removes their plists
// from Dir. Missing files and agents that are not loaded are no error; the
// logs are kept. It returns an EINVALID error for a bad prefix, and a
// *CommandError for a bootout that failed, leaving that agent's plist.
func (l *LaunchAgents) Uninstall(ctx context.Context, labelPrefix string) (Result, error) {
	var res Result
	s := Service{LabelPrefix: labelPrefix}.withDefaults()
	if err := CheckLabelPrefix(s.LabelPrefix); err != nil {
		return res, err
	}
	for _, label := range []string{s.ServeLabel(), s.JobsLabel()} {
		if l.Runner == nil {
			res.Todo = append(res.Todo, Command{"launchctl", "bootout", l.target(label)})
		} else if err := l.bootout(ctx, label, &res); err != nil {
			return res, err
		}
		if err := removeFile(filepath.Join(l.Dir, label+".plist"), &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// SystemdUser installs a Service's units into a user's systemd folder and
// starts them with `systemctl --user`.
type SystemdUser struct {
	// Dir is the unit folder, usually SystemdUserDir(...).
	Dir string
	// Runner runs systemctl; nil means Install and Uninstall only write and
	// remove files, and return the systemctl commands in Result.Todo.
	Runner Runner
}

// do runs c, or adds it to the commands to run by hand.
func (u *SystemdUser) do(ctx context.Context, res *Result, c Command) error {
	if u.Runner == nil {
		res.Todo = append(res.Todo, c)
		return nil
	}
	return run(ctx, u.Runner, res, c)
}

// Install validates s, writes engram.service, engram-jobs.service and
// engram-jobs.timer into Dir (replacing older ones), creates Home/logs, then
// runs `systemctl --user daemon-reload` and `enable --now engram.service
// engram-jobs.timer`, and `try-restart` for those of the two that existed
// with other content, since enable --now leaves a running unit as it was.
// Without a Runner the commands are returned in Result.Todo. It returns an
// EINVALID error for a bad Service, and a *CommandError for a systemctl
// command that failed; the files are written by then.
func (u *SystemdUser) Install(ctx context.Context, s Service) (Result, error) {
	var res Result
	files, err := s.SystemdFiles()
	if err != nil {
		return res, err
	}
	if err := makeLogDir(s); err != nil {
		return res, err
	}
	changed, err := writeFiles(u.Dir, files, &res)
	if err != nil {
		return res, err
	}
	if err := u.do(ctx, &res, Command{"systemctl", "--user", "daemon-reload"}); err != nil {
		return res, err
	}
	if err := u.do(ctx, &res, Command{"systemctl", "--user", "enable", "--now", ServeUnit, TimerUnit}); err != nil {
		return res, err
	}
	restart := Command{"systemctl", "--user", "try-restart"}
	for _, name := range []string{ServeUnit, TimerUnit} {
		if changed[name] {
			restart = append(restart, name)
		}
	}
	if len(restart) > 3 {
		return res, u.do(ctx, &res, restart)
	}
	return res, nil
}

// Uninstall runs `systemctl --user disable --now` for the units whose files
// are in Dir, removes the three files and reloads systemd. Without a Runner
// it removes the files and the links `enable` made in Dir itself, and
// returns `systemctl --user stop` and `daemon-reload` in Result.Todo (disable
// needs the files it would find gone). Missing files are no error. It
// returns a *CommandError for a systemctl command that failed; a failed
// disable leaves the files.
func (u *SystemdUser) Uninstall(ctx context.Context) (Result, error) {
	var res Result
	var units []string
	for _, name := range []string{ServeUnit, TimerUnit} {
		if exists(filepath.Join(u.Dir, name)) {
			units = append(units, name)
		}
	}
	if len(units) > 0 {
		if u.Runner != nil {
			if err := run(ctx, u.Runner, &res, append(Command{"systemctl", "--user", "disable", "--now"}, units...)); err != nil {
				return res, err
			}
		} else {
			for _, link := range []string{"default.target.wants/" + ServeUnit, "timers.target.wants/" + TimerUnit} {
				if err := removeFile(filepath.Join(u.Dir, filepath.FromSlash(link)), &res); err != nil {
					return res, err
				}
			}
			res.Todo = append(res.Todo, append(Command{"systemctl", "--user", "stop"}, units...))
		}
	}
	for _, name := range []string{ServeUnit, JobsUnit, TimerUnit} {
		if err := removeFile(filepath.Join(u.Dir, name), &res); err != nil {
			return res, err
		}
	}
	if len(res.Removed) == 0 {
		return res, nil
	}
	return res, u.do(ctx, &res, Command{"systemctl", "--user", "daemon-reload"})
}
