package autostart

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// ManagerCommand is the command of a service manager: launchctl for
// "launchd", systemctl for "systemd".
func ManagerCommand(manager string) string {
	if manager == "launchd" {
		return "launchctl"
	}
	return "systemctl"
}

// RunnerFor returns what runs name ("launchctl" or "systemctl"), or nil
// and why not where that manager is not this system's or not installed:
// launchctl runs only on macOS, systemctl only on Linux. Tests put fake
// commands first on $PATH, so the real ones never run there.
func RunnerFor(name string) (Runner, string) {
	want := map[string]string{"launchctl": "darwin", "systemctl": "linux"}[name]
	if runtime.GOOS != want {
		return nil, fmt.Sprintf("%s runs on %s only", name, map[string]string{"darwin": "macOS", "linux": "Linux"}[want])
	}
	if _, err := exec.LookPath(name); err != nil {
		return nil, name + " is not installed"
	}
	return ExecRunner{}, ""
}

// Print writes what an install or uninstall of manager ("launchd" or
// "systemd") did, then the commands left to run, with why they were not
// run.
func (res Result) Print(w io.Writer, manager, why string) {
	for _, p := range res.Written {
		fmt.Fprintf(w, "wrote %s\n", p)
	}
	for _, p := range res.Removed {
		fmt.Fprintf(w, "removed %s\n", p)
	}
	for _, c := range res.Ran {
		fmt.Fprintf(w, "ran %s\n", c)
	}
	if len(res.Todo) == 0 {
		return
	}
	fmt.Fprintf(w, "%s was not run (%s); to finish, run:\n", ManagerCommand(manager), why)
	for _, c := range res.Todo {
		fmt.Fprintf(w, "  %s\n", c)
	}
	if manager == "launchd" {
		fmt.Fprintln(w, "(a bootout fails harmlessly for an agent that is not loaded)")
	}
}

// Installer installs a Service with the service manager Manager, "launchd"
// (LaunchAgents) or "systemd" (SystemdUser), in Dir, running its commands
// with Runner (nil: they are returned in Result.Todo).
type Installer struct {
	Manager string
	Dir     string
	Runner  Runner
}

// Install writes the Service's agents or units and loads them (see
// LaunchAgents.Install and SystemdUser.Install).
func (in Installer) Install(ctx context.Context, s Service) (Result, error) {
	if in.Manager == "launchd" {
		return NewLaunchAgents(in.Dir, os.Getuid(), in.Runner).Install(ctx, s)
	}
	return (&SystemdUser{Dir: in.Dir, Runner: in.Runner}).Install(ctx, s)
}

// Uninstall unloads and removes them; labelPrefix names launchd's agents
// (systemd's units have fixed names).
func (in Installer) Uninstall(ctx context.Context, labelPrefix string) (Result, error) {
	if in.Manager == "launchd" {
		return NewLaunchAgents(in.Dir, os.Getuid(), in.Runner).Uninstall(ctx, labelPrefix)
	}
	return (&SystemdUser{Dir: in.Dir, Runner: in.Runner}).Uninstall(ctx)
}

// Files are the files Install writes into Dir, without writing them.
func (in Installer) Files(s Service) ([]File, error) {
	if in.Manager == "launchd" {
		return s.LaunchdFiles()
	}
	return s.SystemdFiles()
}

// UserDir is the folder of a user's agents (manager "launchd":
// LaunchAgentsDir) or systemd units (SystemdUserDir), from getenv's HOME
// and XDG_CONFIG_HOME, else the user's home folder as the system knows it.
func UserDir(manager string, getenv func(string) string) (string, error) {
	userHome := getenv("HOME")
	if userHome == "" {
		var err error
		if userHome, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("no user home directory: %w", err)
		}
	}
	if manager == "launchd" {
		return LaunchAgentsDir(userHome), nil
	}
	return SystemdUserDir(getenv("XDG_CONFIG_HOME"), userHome), nil
}

// Executable is the absolute path of the running binary, what the agents
// run, and whether it lies in the temporary folder (go run), where it will
// be cleaned away from under them.
func Executable() (bin string, temporary bool, err error) {
	if bin, err = os.Executable(); err != nil {
		return "", false, fmt.Errorf("find the engram binary: %w", err)
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return "", false, err
	}
	rel, err := filepath.Rel(filepath.Clean(os.TempDir()), bin)
	temporary = err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	return bin, temporary, nil
}

// NewInstaller returns the Installer of manager ("launchd" or "systemd")
// in dir, made absolute, or in the user's folder (UserDir, from getenv)
// when dir is "". It runs the manager's commands unless noStart or this
// system cannot run them; why says why not ("--no-start", or RunnerFor's
// reason).
func NewInstaller(manager, dir string, noStart bool, getenv func(string) string) (in Installer, why string, err error) {
	in = Installer{Manager: manager, Dir: dir}
	if in.Dir != "" {
		in.Dir, err = filepath.Abs(in.Dir)
	} else {
		in.Dir, err = UserDir(manager, getenv)
	}
	if err != nil {
		return in, "", err
	}
	why = "--no-start"
	if !noStart {
		in.Runner, why = RunnerFor(ManagerCommand(manager))
	}
	return in, why, nil
}
