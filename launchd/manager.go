package launchd

import (
	"fmt"
	"io"
	"os/exec"
	"runtime"
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
