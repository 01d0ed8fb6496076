package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"howett.net/plist"

	"github.com/engram-dev/engram/autostart"
)

// serviceEnv is the environment of a `engram launchd|systemd` test: a user
// home, an engram home and a PATH holding only fake launchctl and systemctl
// that record their arguments, so the real ones never run.
type serviceEnv struct {
	user, home, xdg string
	fakeLog         string // one line per fake launchctl or systemctl run
	env             []string
}

// fakeManager is launchctl and systemctl: it records its arguments, says
// nothing is loaded (launchctl print fails), and fails when its command line
// contains $FAKE_FAIL.
const fakeManager = `#!/bin/sh
printf '%s %s\n' "${0##*/}" "$*" >> "$FAKE_LOG"
[ "$1" = print ] && exit 113
if [ -n "$FAKE_FAIL" ]; then
	case "$*" in *"$FAKE_FAIL"*) echo "Failed to $FAKE_FAIL: Access denied" >&2; exit 1;; esac
fi
exit 0
`

func newServiceEnv(t *testing.T) *serviceEnv {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("no launchd or systemd")
	}
	root := t.TempDir()
	e := &serviceEnv{
		user:    filepath.Join(root, "Ada Lovelace"),
		home:    filepath.Join(root, `engram "home" it's 100% $HOME`),
		xdg:     filepath.Join(root, "config dir"),
		fakeLog: filepath.Join(root, "fake.log"),
	}
	bin := filepath.Join(root, "fakebin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"launchctl", "systemctl"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(fakeManager), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "HOME", "XDG_CONFIG_HOME", "ENGRAM_HOME", "PATH":
		default:
			e.env = append(e.env, kv)
		}
	}
	e.env = append(e.env, "HOME="+e.user, "XDG_CONFIG_HOME="+e.xdg, "ENGRAM_HOME="+e.home,
		"PATH="+bin, "FAKE_LOG="+e.fakeLog)
	return e
}

func (e *serviceEnv) run(t *testing.T, extraEnv []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(engramBin, args...)
	cmd.Env = append(append([]string(nil), e.env...), extraEnv...)
	return runCmd(t, cmd)
}

// ran returns the fake commands run since the last call.
func (e *serviceEnv) ran(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(e.fakeLog)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(e.fakeLog)
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// sections splits the output of print into file path and content.
func sections(t *testing.T, out string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, part := range strings.Split(out, "==> ")[1:] {
		head, body, ok := strings.Cut(part, " <==\n")
		if !ok {
			t.Fatalf("no header in %q", part)
		}
		m[head] = strings.TrimSuffix(body, "\n")
	}
	return m
}

func decodePlist(t *testing.T, data string) map[string]any {
	t.Helper()
	var m map[string]any
	if _, err := plist.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("parse plist: %v\n%s", err, data)
	}
	return m
}

func wantArgv(t *testing.T, v any, want ...string) {
	t.Helper()
	arr, ok := v.([]any)
	if !ok {
		t.Fatalf("ProgramArguments is %T", v)
	}
	got := make([]string, len(arr))
	for i, a := range arr {
		got[i], _ = a.(string)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ProgramArguments = %q, want %q", got, want)
	}
}

func TestLaunchdPrint(t *testing.T) {
	e := newServiceEnv(t)
	r := e.run(t, nil, "launchd", "print", "--interval", "1h", "--label-prefix", "dev.ada.engram")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	agents := filepath.Join(e.user, "Library", "LaunchAgents")
	files := sections(t, r.stdout)
	serve, jobs := files[filepath.Join(agents, "dev.ada.engram.serve.plist")], files[filepath.Join(agents, "dev.ada.engram.jobs.plist")]
	if len(files) != 2 || serve == "" || jobs == "" {
		t.Fatalf("print gave %q", r.stdout)
	}
	s, j := decodePlist(t, serve), decodePlist(t, jobs)
	if s["KeepAlive"] != true || s["RunAtLoad"] != true || s["Label"] != "dev.ada.engram.serve" {
		t.Errorf("serve agent %v", s)
	}
	wantArgv(t, s["ProgramArguments"], engramBin, "--home", e.home, "serve")
	if s["StandardErrorPath"] != filepath.Join(e.home, "logs", "serve.log") {
		t.Errorf("StandardErrorPath = %v", s["StandardErrorPath"])
	}
	if n, ok := j["StartInterval"].(uint64); !ok || n != 3600 || j["RunAtLoad"] != true {
		t.Errorf("jobs agent %v", j)
	}
	wantArgv(t, j["ProgramArguments"], engramBin, "--home", e.home, "jobs", "run", "--due")
	if _, err := os.Stat(e.user); !os.IsNotExist(err) {
		t.Errorf("print wrote into the user's home: %v", err)
	}
	if _, err := os.Stat(e.home); !os.IsNotExist(err) {
		t.Errorf("print created the engram home: %v", err)
	}
	if got := e.ran(t); got != nil {
		t.Errorf("print ran %q", got)
	}

	// --home, before or after the subcommand, wins over $ENGRAM_HOME.
	other := filepath.Join(t.TempDir(), "other home")
	for _, args := range [][]string{{"--home", other, "launchd", "print"}, {"launchd", "print", "--home", other}} {
		r = e.run(t, nil, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "<string>"+other+"</string>") {
			t.Errorf("%q: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}

func TestLaunchdInstallUninstall(t *testing.T) {
	e := newServiceEnv(t)
	agents := filepath.Join(e.user, "Library", "LaunchAgents")
	serve, jobs := filepath.Join(agents, "com.engram.serve.plist"), filepath.Join(agents, "com.engram.jobs.plist")

	r := e.run(t, nil, "launchd", "install", "--interval", "20m")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	uid := strconv.Itoa(os.Getuid())
	ran := e.ran(t)
	if runtime.GOOS == "darwin" {
		want := []string{
			"launchctl print gui/" + uid + "/com.engram.serve",
			"launchctl enable gui/" + uid + "/com.engram.serve",
			"launchctl bootstrap gui/" + uid + " " + serve,
			"launchctl print gui/" + uid + "/com.engram.jobs",
			"launchctl enable gui/" + uid + "/com.engram.jobs",
			"launchctl bootstrap gui/" + uid + " " + jobs,
		}
		if !reflect.DeepEqual(ran, want) {
			t.Errorf("ran %q, want %q", ran, want)
		}
	} else {
		if ran != nil {
			t.Errorf("launchctl ran off macOS: %q", ran)
		}
		if !strings.Contains(r.stdout, "launchctl was not run (launchctl runs on macOS only)") ||
			!strings.Contains(r.stdout, "  launchctl bootstrap gui/"+uid+" '"+serve+"'\n") {
			t.Errorf("no commands to run in:\n%s", r.stdout)
		}
	}
	for _, want := range []string{"wrote " + serve + "\n", "wrote " + jobs + "\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	data, err := os.ReadFile(jobs)
	if err != nil {
		t.Fatal(err)
	}
	j := decodePlist(t, string(data))
	if j["StartInterval"] != uint64(1200) {
		t.Errorf("StartInterval = %#v", j["StartInterval"])
	}
	wantArgv(t, j["ProgramArguments"], engramBin, "--home", e.home, "jobs", "run", "--due")
	if fi, err := os.Stat(filepath.Join(e.home, "logs")); err != nil || !fi.IsDir() {
		t.Errorf("no log folder: %v", err)
	}

	// The plists print shows are the ones install wrote.
	p := e.run(t, nil, "launchd", "print", "--interval", "20m")
	if got := sections(t, p.stdout)[jobs]; got != strings.TrimSuffix(string(data), "\n") {
		t.Errorf("print differs from the installed file:\n%s\n---\n%s", got, data)
	}

	r = e.run(t, nil, "launchd", "uninstall")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, path := range []string{serve, jobs} {
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%s left: %v", path, err)
		}
		if !strings.Contains(r.stdout, "removed "+path) {
			t.Errorf("stdout lacks removed %s:\n%s", path, r.stdout)
		}
	}
	if got := e.ran(t); runtime.GOOS == "darwin" && len(got) != 2 { // two prints, nothing loaded
		t.Errorf("uninstall ran %q", got)
	}
	r = e.run(t, nil, "launchd", "uninstall", "--no-start")
	if r.code != 0 || !strings.Contains(r.stdout, "nothing to remove in "+agents) {
		t.Errorf("second uninstall: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// The hidden --dir, for another folder, and --no-start on any system.
	dir := filepath.Join(t.TempDir(), "agents here")
	r = e.run(t, nil, "launchd", "install", "--no-start", "--dir", dir, "--label-prefix", "x.y")
	if r.code != 0 || !strings.Contains(r.stdout, "launchctl was not run (--no-start)") {
		t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.y.serve.plist")); err != nil {
		t.Error(err)
	}
	if got := e.ran(t); got != nil {
		t.Errorf("--no-start ran %q", got)
	}
	if h := e.run(t, nil, "launchd", "install", "--help"); h.code != 0 || strings.Contains(h.stdout, "-dir") || !strings.Contains(h.stdout, "-no-start") {
		t.Errorf("help: exit %d\n%s", h.code, h.stdout)
	}
}

func TestSystemdInstallUninstall(t *testing.T) {
	e := newServiceEnv(t)
	units := filepath.Join(e.xdg, "systemd", "user")

	r := e.run(t, nil, "systemd", "install", "--interval", "1h30m")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	ran := e.ran(t)
	if runtime.GOOS == "linux" {
		want := []string{"systemctl --user daemon-reload", "systemctl --user enable --now engram.service engram-jobs.timer"}
		if !reflect.DeepEqual(ran, want) {
			t.Errorf("ran %q, want %q", ran, want)
		}
		if !strings.Contains(r.stdout, "systemd keeps `engram serve` running and runs `engram jobs run --due` every 1h 30min") {
			t.Errorf("stdout:\n%s", r.stdout)
		}
	} else if ran != nil || !strings.Contains(r.stdout, "systemctl --user enable --now engram.service engram-jobs.timer") {
		t.Errorf("ran %q; stdout:\n%s", ran, r.stdout)
	}
	svc := autostart.Service{Binary: engramBin, Home: e.home, Interval: 90 * time.Minute}
	want, err := svc.SystemdFiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range want {
		got, err := os.ReadFile(filepath.Join(units, f.Name))
		if err != nil || !bytes.Equal(got, f.Data) {
			t.Errorf("%s: %v\n%s", f.Name, err, got)
		}
	}
	service, _ := os.ReadFile(filepath.Join(units, "engram.service"))
	if !strings.Contains(string(service), `--home "`+strings.NewReplacer(`"`, `\"`, "%", "%%", "$", "$$").Replace(e.home)+`" serve`) {
		t.Errorf("home not quoted for systemd:\n%s", service)
	}
	timer, _ := os.ReadFile(filepath.Join(units, "engram-jobs.timer"))
	if !strings.Contains(string(timer), "\nOnUnitActiveSec=1h 30min\n") {
		t.Errorf("timer:\n%s", timer)
	}

	// print shows the same three units.
	p := e.run(t, nil, "systemd", "print", "--interval", "90m")
	if got := sections(t, p.stdout); len(got) != 3 || got[filepath.Join(units, "engram-jobs.timer")] != strings.TrimSuffix(string(timer), "\n") {
		t.Errorf("print:\n%s", p.stdout)
	}

	r = e.run(t, nil, "systemd", "uninstall")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if runtime.GOOS == "linux" {
		want := []string{"systemctl --user disable --now engram.service engram-jobs.timer", "systemctl --user daemon-reload"}
		if got := e.ran(t); !reflect.DeepEqual(got, want) {
			t.Errorf("uninstall ran %q, want %q", got, want)
		}
	}
	if entries, _ := os.ReadDir(units); len(entries) != 0 {
		t.Errorf("left %v", entries)
	}
}

// A failing systemctl fails the command (exit 1) with its output and a hint;
// the units are written.
func TestSystemdInstallFails(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("systemctl runs on Linux only")
	}
	e := newServiceEnv(t)
	r := e.run(t, []string{"FAKE_FAIL=enable"}, "systemd", "install")
	if r.code != 1 || !strings.Contains(r.stderr, "engram: systemctl --user enable --now engram.service engram-jobs.timer: exit status 1: Failed to enable: Access denied") ||
		!strings.Contains(r.stderr, "\nFix that and run `engram systemd install` again, or add --no-start to only write the files.\n") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.xdg, "systemd", "user", "engram.service")); err != nil {
		t.Error(err)
	}
	r = e.run(t, []string{"FAKE_FAIL=disable"}, "systemd", "uninstall")
	if r.code != 1 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = e.run(t, []string{"FAKE_FAIL=disable"}, "systemd", "uninstall", "--no-start")
	if r.code != 0 || !strings.Contains(r.stdout, "systemctl was not run (--no-start)") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestServiceUsageErrors(t *testing.T) {
	e := newServiceEnv(t)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"launchd"}, "engram launchd: want a subcommand: install, uninstall or print\nRun 'engram launchd --help' for usage."},
		{[]string{"systemd", "start"}, `engram systemd: unknown systemd subcommand "start"`},
		{[]string{"launchd", "install", "--interval", "soon"}, "Run 'engram launchd install --help' for usage."},
		{[]string{"launchd", "install", "--interval", "30s"}, "engram launchd install: --interval: 30s is shorter than 1m0s"},
		{[]string{"systemd", "print", "--interval", "0"}, "--interval: 0s is shorter than 1m0s"},
		{[]string{"launchd", "print", "--interval", "1m0.5s"}, "not a whole number of seconds"},
		{[]string{"launchd", "print", "--label-prefix", "com/engram"}, "engram launchd print: --label-prefix"},
		{[]string{"launchd", "uninstall", "--label-prefix", ""}, "--label-prefix"},
		{[]string{"systemd", "install", "--label-prefix", "x"}, "flag provided but not defined: -label-prefix"},
		{[]string{"systemd", "uninstall", "--interval", "1h"}, "engram systemd uninstall: flag provided but not defined: -interval"},
		{[]string{"launchd", "print", "extra"}, `unexpected argument "extra"`},
	} {
		r := e.run(t, nil, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.msg)
		}
	}
	if got := e.ran(t); got != nil {
		t.Errorf("usage errors ran %q", got)
	}
	if _, err := os.Stat(e.user); !os.IsNotExist(err) {
		t.Errorf("usage errors wrote files: %v", err)
	}
	for _, args := range [][]string{{"launchd", "--help"}, {"help", "systemd"}} {
		if r := e.run(t, nil, args...); r.code != 0 || !strings.Contains(r.stdout, "uninstall") {
			t.Errorf("%q: exit %d\n%s", args, r.code, r.stdout)
		}
	}
}
