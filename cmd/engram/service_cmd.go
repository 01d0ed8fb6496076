package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"github.com/engram-dev/engram/autostart"
	"github.com/engram-dev/engram/homedir"
)

// `engram launchd` and `engram systemd` keep engram running on a laptop:
// they write a launchd agent or systemd unit that keeps `engram serve`
// alive and one that runs `engram jobs run --due` every interval (package
// launchd), then load them with launchctl (macOS) or `systemctl --user`
// (Linux, when it is installed). Elsewhere, or with --no-start, they write
// the files and print the commands to run.

const launchdUsage = `Usage:
  engram launchd install [--label-prefix com.engram] [--interval 15m] [--no-start]
  engram launchd uninstall [--label-prefix com.engram] [--no-start]
  engram launchd print [--label-prefix com.engram] [--interval 15m]

install writes ~/Library/LaunchAgents/<prefix>.serve.plist, which keeps
'engram --home HOME serve' running, and <prefix>.jobs.plist, which runs
'engram --home HOME jobs run --due' at load and every interval, both logging to
HOME/logs; then, on macOS, loads them with launchctl (bootout, then bootstrap
into gui/<uid>). Elsewhere, or with --no-start, it prints the launchctl
commands. uninstall boots the agents out and removes their plists (the logs
stay); print shows both plists and writes nothing.

launchd does not replay StartInterval runs missed while the Mac sleeps;
'engram serve' catches up by itself (see docs/operations.md).
`

const systemdUsage = `Usage:
  engram systemd install [--interval 15m] [--no-start]
  engram systemd uninstall [--no-start]
  engram systemd print [--interval 15m]

install writes engram.service ('engram --home HOME serve', restarted on
failure), engram-jobs.service ('engram --home HOME jobs run --due') and
engram-jobs.timer (every interval) to $XDG_CONFIG_HOME/systemd/user (default
~/.config/systemd/user), then runs 'systemctl --user daemon-reload' and
'systemctl --user enable --now engram.service engram-jobs.timer' where
systemctl is installed; otherwise, or with --no-start, it prints those
commands. uninstall disables and removes the units; print shows them and
writes nothing.
`

func runLaunchd(ctx context.Context, m *Main, args []string) error {
	return runServiceCmd(ctx, m, "launchd", launchdUsage, args)
}

func runSystemd(ctx context.Context, m *Main, args []string) error {
	return runServiceCmd(ctx, m, "systemd", systemdUsage, args)
}

func runServiceCmd(ctx context.Context, m *Main, manager, usage string, args []string) error {
	g := group{name: manager, usage: usage, hint: true, missing: "want a subcommand: install, uninstall or print",
		unknown: "unknown " + manager + " subcommand %q (want install, uninstall or print)"}
	for _, sub := range []string{"install", "uninstall", "print"} {
		g.subs = append(g.subs, command{name: sub, run: func(ctx context.Context, m *Main, args []string) error {
			return m.serviceSub(ctx, manager, sub, args)
		}})
	}
	return m.runGroup(ctx, g, args)
}

// serviceFlags are the flags of `engram launchd|systemd SUB`.
type serviceFlags struct {
	labelPrefix string
	interval    time.Duration
	noStart     bool
	dir         string // hidden: the folder instead of the user's (tests)
}

func (m *Main) serviceFlagSet(manager, sub string, f *serviceFlags) *flag.FlagSet {
	usage := manager + " " + sub
	if manager == "launchd" {
		usage += " [--label-prefix com.engram]"
	}
	if sub != "uninstall" {
		usage += " [--interval 15m]"
	}
	if sub != "print" {
		usage += " [--no-start]"
	}
	fs := m.newFlagSet(manager+" "+sub, usage)
	if manager == "launchd" {
		fs.StringVar(&f.labelPrefix, "label-prefix", autostart.DefaultLabelPrefix, "prefix of the agents' labels: PREFIX.serve and PREFIX.jobs")
	}
	if sub != "uninstall" {
		fs.DurationVar(&f.interval, "interval", autostart.DefaultInterval, "how often to run 'engram jobs run --due' (at least 1m)")
	}
	if sub != "print" {
		fs.BoolVar(&f.noStart, "no-start", false, "write or remove the files only; print the "+autostart.ManagerCommand(manager)+" commands instead of running them")
	}
	fs.StringVar(&f.dir, "dir", "", "") // hidden (no usage): the folder instead of the user's, for tests
	return fs
}

func (m *Main) serviceSub(ctx context.Context, manager, sub string, args []string) error {
	var f serviceFlags
	if err := parseNone(m.serviceFlagSet(manager, sub, &f), args); err != nil {
		return err
	}
	if manager == "launchd" {
		if err := autostart.CheckLabelPrefix(f.labelPrefix); err != nil {
			return &usageError{msg: "--" + err.Error()}
		}
	}
	if sub != "uninstall" {
		if err := autostart.CheckInterval(f.interval); err != nil {
			return &usageError{msg: "--" + err.Error()}
		}
	}
	in, why, err := autostart.NewInstaller(manager, f.dir, f.noStart, m.Getenv)
	if err != nil {
		return err
	}

	if sub == "uninstall" {
		res, err := in.Uninstall(ctx, f.labelPrefix)
		res.Print(m.Stdout, manager, why)
		if err == nil && len(res.Removed) == 0 {
			fmt.Fprintf(m.Stdout, "nothing to remove in %s\n", in.Dir)
		}
		return serviceHint(manager, sub, err)
	}

	svc, err := m.service(f)
	if err != nil {
		return err
	}
	if sub == "install" {
		// The services would write their logs into the home, and serve
		// refuse it at every start.
		if err := homedir.Check(svc.Home); err != nil {
			return err
		}
	}
	if sub == "print" {
		files, err := in.Files(svc)
		if err != nil {
			return err
		}
		for i, file := range files {
			if i > 0 {
				fmt.Fprintln(m.Stdout)
			}
			fmt.Fprintf(m.Stdout, "==> %s <==\n%s", filepath.Join(in.Dir, file.Name), file.Data)
		}
		return nil
	}

	res, err := in.Install(ctx, svc)
	res.Print(m.Stdout, manager, why)
	if err != nil {
		return serviceHint(manager, sub, err)
	}
	if in.Runner != nil {
		fmt.Fprintf(m.Stdout, "%s keeps `engram serve` running and runs `engram jobs run --due` every %s; logs in %s\n",
			manager, autostart.Timespan(f.interval), filepath.Join(svc.Home, autostart.LogDir))
	}
	return nil
}

// service is what the agents run: this binary, on the resolved home.
func (m *Main) service(f serviceFlags) (autostart.Service, error) {
	home, err := m.resolveHome()
	if err != nil {
		return autostart.Service{}, err
	}
	bin, temporary, err := autostart.Executable()
	if err != nil {
		return autostart.Service{}, err
	}
	if temporary {
		fmt.Fprintf(m.Stderr, "engram: warning: %s is in the temporary folder (go run?): the agents will break when it is cleaned; install engram first (make build)\n", bin)
	}
	return autostart.Service{Binary: bin, Home: home, LabelPrefix: f.labelPrefix, Interval: f.interval}, nil
}

// serviceHint adds to a launchctl or systemctl failure what to do next:
// the files are as printed, and --no-start leaves the manager alone.
func serviceHint(manager, sub string, err error) error {
	var ce *autostart.CommandError
	if !errors.As(err, &ce) {
		return err
	}
	return fmt.Errorf("%w\nFix that and run `engram %s %s` again, or add --no-start to only %s the files.",
		err, manager, sub, map[string]string{"install": "write", "uninstall": "remove"}[sub])
}
