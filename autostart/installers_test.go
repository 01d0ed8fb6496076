package autostart_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"howett.net/plist"

	"github.com/engram-dev/engram/autostart"
)

// recorder stands in for launchctl and systemctl, the process edge: it
// records each command line and answers like launchctl for print, bootout
// and bootstrap (a set of loaded labels), succeeding otherwise unless fail
// says so. The real commands never run in tests.
type recorder struct {
	mu     sync.Mutex
	calls  []string
	loaded map[string]bool   // launchd targets, "gui/501/com.engram.serve"
	fail   func(string) bool // the command line (joined with spaces) fails
}

var _ autostart.Runner = (*recorder)(nil)

var errExit = errors.New("exit status 5")

func newRecorder() *recorder { return &recorder{loaded: map[string]bool{}} }

func (r *recorder) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	line := strings.Join(append([]string{name}, args...), " ")
	r.calls = append(r.calls, line)
	if r.fail != nil && r.fail(line) {
		return []byte("Bootstrap failed: 5: Input/output error\n"), errExit
	}
	if name != "launchctl" {
		return nil, nil
	}
	switch args[0] {
	case "print":
		if !r.loaded[args[1]] {
			return []byte("Could not find service"), errors.New("exit status 113")
		}
	case "bootout":
		if !r.loaded[args[1]] {
			return []byte("Boot-out failed: 3: No such process"), errors.New("exit status 3")
		}
		delete(r.loaded, args[1])
	case "bootstrap":
		data, err := os.ReadFile(args[2])
		if err != nil {
			return nil, err
		}
		var a autostart.Agent
		if _, err := decodeAgent(data, &a); err != nil {
			return nil, err
		}
		target := args[1] + "/" + a.Label
		if r.loaded[target] {
			return []byte("Bootstrap failed: 5: Input/output error"), errExit
		}
		r.loaded[target] = true
	}
	return nil, nil
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

func testService(t *testing.T) autostart.Service {
	root := t.TempDir()
	return autostart.Service{
		Binary:   filepath.Join(root, `Engram "Tools"`, "engram"),
		Home:     filepath.Join(root, "it's my engram"),
		Interval: 10 * time.Minute,
	}
}

func TestLaunchAgentsInstall(t *testing.T) {
	ctx := context.Background()
	svc := testService(t)
	dir := filepath.Join(t.TempDir(), "Library Dir", "LaunchAgents")
	rec := newRecorder()
	l := autostart.NewLaunchAgents(dir, 501, rec)

	res := mustInstall(t, l, svc)
	serve, jobs := filepath.Join(dir, "com.engram.serve.plist"), filepath.Join(dir, "com.engram.jobs.plist")
	if !reflect.DeepEqual(res.Written, []string{serve, jobs}) {
		t.Errorf("Written = %q", res.Written)
	}
	want := []string{
		"launchctl print gui/501/com.engram.serve",
		"launchctl enable gui/501/com.engram.serve",
		"launchctl bootstrap gui/501 " + serve,
		"launchctl print gui/501/com.engram.jobs",
		"launchctl enable gui/501/com.engram.jobs",
		"launchctl bootstrap gui/501 " + jobs,
	}
	if got := rec.take(); !reflect.DeepEqual(got, want) {
		t.Errorf("ran\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(res.Ran) != 4 || len(res.Todo) != 0 {
		t.Errorf("Ran = %v, Todo = %v", res.Ran, res.Todo)
	}
	checkFile(t, serve, svc.ServeAgent())
	checkFile(t, jobs, svc.JobsAgent())
	if fi, err := os.Stat(filepath.Join(svc.Home, "logs")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("log folder: %v %v", fi, err)
	}
	noTemps(t, dir)

	// Again, with another interval: each loaded agent is booted out before
	// its new plist is bootstrapped.
	svc.Interval = time.Hour
	mustInstall(t, l, svc)
	want = []string{
		"launchctl print gui/501/com.engram.serve",
		"launchctl bootout gui/501/com.engram.serve",
		"launchctl enable gui/501/com.engram.serve",
		"launchctl bootstrap gui/501 " + serve,
		"launchctl print gui/501/com.engram.jobs",
		"launchctl bootout gui/501/com.engram.jobs",
		"launchctl enable gui/501/com.engram.jobs",
		"launchctl bootstrap gui/501 " + jobs,
	}
	if got := rec.take(); !reflect.DeepEqual(got, want) {
		t.Errorf("reinstall ran\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	checkFile(t, jobs, svc.JobsAgent())
	if !rec.loaded["gui/501/com.engram.serve"] || !rec.loaded["gui/501/com.engram.jobs"] {
		t.Errorf("loaded %v", rec.loaded)
	}

	res, err := l.Uninstall(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		"launchctl print gui/501/com.engram.serve",
		"launchctl bootout gui/501/com.engram.serve",
		"launchctl print gui/501/com.engram.jobs",
		"launchctl bootout gui/501/com.engram.jobs",
	}
	if got := rec.take(); !reflect.DeepEqual(got, want) {
		t.Errorf("uninstall ran\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !reflect.DeepEqual(res.Removed, []string{serve, jobs}) || len(rec.loaded) != 0 {
		t.Errorf("Removed = %q, loaded %v", res.Removed, rec.loaded)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %v", entries)
	}
	if _, err := os.Stat(filepath.Join(svc.Home, "logs")); err != nil {
		t.Errorf("uninstall removed the logs: %v", err)
	}

	// Uninstalling what is not there is no error and boots out nothing.
	res, err = l.Uninstall(ctx, "")
	if err != nil || len(res.Removed) != 0 || len(res.Ran) != 0 {
		t.Errorf("second uninstall: %+v, %v", res, err)
	}
}

// A bootstrap that fails while the agent is loaded (loaded again by someone
// in between) is tolerated; one that fails while it is not loaded is an
// error naming the command and its output.
func TestLaunchAgentsBootstrapFails(t *testing.T) {
	ctx := context.Background()
	svc := testService(t)
	dir := t.TempDir()

	rec := newRecorder()
	rec.fail = func(line string) bool {
		if strings.HasPrefix(line, "launchctl bootstrap") && strings.HasSuffix(line, "serve.plist") {
			rec.loaded["gui/501/com.engram.serve"] = true // someone was quicker
			return true
		}
		return false
	}
	if _, err := autostart.NewLaunchAgents(dir, 501, rec).Install(ctx, svc); err != nil {
		t.Errorf("already loaded: %v", err)
	}

	rec = newRecorder()
	rec.fail = func(line string) bool { return strings.HasPrefix(line, "launchctl bootstrap") }
	res, err := autostart.NewLaunchAgents(dir, 501, rec).Install(ctx, svc)
	var ce *autostart.CommandError
	if !errors.As(err, &ce) || !errors.Is(err, errExit) || ce.Command[1] != "bootstrap" || !strings.Contains(ce.Output, "Input/output error") {
		t.Fatalf("err = %v", err)
	}
	if len(res.Written) != 2 {
		t.Errorf("Written = %v", res.Written)
	}

	// A bootout that fails with the agent still loaded stops the
	// uninstall and keeps its plist.
	rec = newRecorder()
	rec.loaded["gui/501/com.engram.serve"] = true
	rec.fail = func(line string) bool { return strings.HasPrefix(line, "launchctl bootout") }
	if _, err := autostart.NewLaunchAgents(dir, 501, rec).Uninstall(ctx, ""); !errors.As(err, &ce) || ce.Command[1] != "bootout" {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "com.engram.serve.plist")); err != nil {
		t.Errorf("the plist of an agent still loaded was removed: %v", err)
	}
}

// Without a Runner, Install writes the files and returns the launchctl
// commands for a person to run.
func TestLaunchAgentsTodo(t *testing.T) {
	ctx := context.Background()
	svc := testService(t)
	svc.LabelPrefix = "dev.ada.engram"
	dir := t.TempDir()
	l := autostart.NewLaunchAgents(dir, 501, nil)
	res := mustInstall(t, l, svc)
	serve := filepath.Join(dir, "dev.ada.engram.serve.plist")
	wantTodo(t, res.Todo,
		"launchctl bootout gui/501/dev.ada.engram.serve",
		"launchctl bootstrap gui/501 "+serve,
		"launchctl bootout gui/501/dev.ada.engram.jobs",
		"launchctl bootstrap gui/501 "+filepath.Join(dir, "dev.ada.engram.jobs.plist"))
	checkFile(t, serve, svc.ServeAgent())
	res, err := l.Uninstall(ctx, "dev.ada.engram")
	if err != nil || len(res.Removed) != 2 || len(res.Todo) != 2 {
		t.Errorf("uninstall: %+v, %v", res, err)
	}
	if _, err := l.Uninstall(ctx, "bad prefix"); err == nil {
		t.Error("uninstall took a bad prefix")
	}
}

func TestSystemdUserInstall(t *testing.T) {
	ctx := context.Background()
	svc := testService(t)
	svc.Binary = filepath.Join(t.TempDir(), "my bin", "engram")
	dir := autostart.SystemdUserDir(filepath.Join(t.TempDir(), "xdg config"), "/nonexistent")
	rec := newRecorder()
	u := &autostart.SystemdUser{Dir: dir, Runner: rec}

	res := mustInstall(t, u, svc)
	want := []string{
		"systemctl --user daemon-reload",
		"systemctl --user enable --now engram.service engram-jobs.timer",
	}
	if got := rec.take(); !reflect.DeepEqual(got, want) {
		t.Errorf("ran %q, want %q", got, want)
	}
	if len(res.Written) != 3 {
		t.Errorf("Written = %q", res.Written)
	}
	files, _ := svc.SystemdFiles()
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(dir, f.Name))
		if err != nil || string(got) != string(f.Data) {
			t.Errorf("%s: %v\n%s", f.Name, err, got)
		}
	}
	noTemps(t, dir)

	// The same units again: nothing to restart.
	mustInstall(t, u, svc)
	if got := rec.take(); !reflect.DeepEqual(got, want) {
		t.Errorf("same again ran %q", got)
	}
	// Another interval changes only the timer, which is restarted.
	svc.Interval = 45 * time.Minute
	mustInstall(t, u, svc)
	if got := rec.take(); !reflect.DeepEqual(got, append(want, "systemctl --user try-restart engram-jobs.timer")) {
		t.Errorf("new interval ran %q", got)
	}

	// As if enabled, then uninstall.
	wants := filepath.Join(dir, "default.target.wants")
	os.MkdirAll(wants, 0o755)
	os.Symlink("../engram.service", filepath.Join(wants, "engram.service"))
	res, err := u.Uninstall(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		"systemctl --user disable --now engram.service engram-jobs.timer",
		"systemctl --user daemon-reload",
	}
	if got := rec.take(); !reflect.DeepEqual(got, want) {
		t.Errorf("uninstall ran %q, want %q", got, want)
	}
	if len(res.Removed) != 3 {
		t.Errorf("Removed = %q", res.Removed)
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f.Name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left: %v", f.Name, err)
		}
	}
	// Nothing left: nothing to run.
	if res, err := u.Uninstall(ctx); err != nil || len(res.Ran) != 0 || len(rec.take()) != 0 {
		t.Errorf("second uninstall: %+v, %v", res, err)
	}
}

func TestSystemdUserFailures(t *testing.T) {
	ctx := context.Background()
	svc := testService(t)
	svc.Binary = "/usr/bin/engram"
	dir := t.TempDir()
	rec := newRecorder()
	rec.fail = func(line string) bool { return strings.Contains(line, "enable") }
	_, err := (&autostart.SystemdUser{Dir: dir, Runner: rec}).Install(ctx, svc)
	var ce *autostart.CommandError
	if !errors.As(err, &ce) || ce.Command.String() != "systemctl --user enable --now engram.service engram-jobs.timer" {
		t.Fatalf("err = %v", err)
	}
	rec.fail = func(line string) bool { return strings.Contains(line, "disable") }
	if _, err := (&autostart.SystemdUser{Dir: dir, Runner: rec}).Uninstall(ctx); !errors.As(err, &ce) {
		t.Fatalf("err = %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("a failed disable removed files: %v", entries)
	}
}

// Without a Runner (no systemctl), uninstall removes the links enable made
// itself: `systemctl disable` would find no unit file once it is removed.
func TestSystemdUserTodo(t *testing.T) {
	ctx := context.Background()
	svc := testService(t)
	svc.Binary = "/usr/bin/engram"
	dir := t.TempDir()
	u := &autostart.SystemdUser{Dir: dir}
	res := mustInstall(t, u, svc)
	wantTodo(t, res.Todo,
		"systemctl --user daemon-reload",
		"systemctl --user enable --now engram.service engram-jobs.timer")
	for _, l := range []string{"default.target.wants/engram.service", "timers.target.wants/engram-jobs.timer"} {
		p := filepath.Join(dir, l)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(filepath.Join(dir, filepath.Base(l)), p); err != nil {
			t.Fatal(err)
		}
	}
	res, err := u.Uninstall(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantTodo(t, res.Todo,
		"systemctl --user stop engram.service engram-jobs.timer",
		"systemctl --user daemon-reload")
	if len(res.Removed) != 5 {
		t.Errorf("Removed = %q", res.Removed)
	}
}

// A temporary file left by an interrupted write is removed by the next
// install; the files are replaced whole.
func TestInstallRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ".com.engram.serve.plist.tmp-123")
	if err := os.WriteFile(stale, []byte("<plist>half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "com.engram.serve.plist"), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	svc := testService(t)
	if _, err := autostart.NewLaunchAgents(dir, 501, nil).Install(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	noTemps(t, dir)
	checkFile(t, filepath.Join(dir, "com.engram.serve.plist"), svc.ServeAgent())
	if fi, _ := os.Stat(filepath.Join(dir, "com.engram.serve.plist")); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644 (launchd refuses a plist others can write, and needs to read it)", fi.Mode())
	}
}

func TestInstallRejectsBadService(t *testing.T) {
	dir := t.TempDir()
	bad := autostart.Service{Binary: "engram", Home: "/h"}
	if _, err := autostart.NewLaunchAgents(dir, 501, newRecorder()).Install(context.Background(), bad); err == nil {
		t.Error("launchd install of a relative binary")
	}
	if _, err := (&autostart.SystemdUser{Dir: dir, Runner: newRecorder()}).Install(context.Background(), bad); err == nil {
		t.Error("systemd install of a relative binary")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("wrote %v", entries)
	}
}

func TestDirs(t *testing.T) {
	if got := autostart.LaunchAgentsDir("/Users/a b"); got != "/Users/a b/Library/LaunchAgents" {
		t.Error(got)
	}
	for _, tc := range []struct{ xdg, home, want string }{
		{"", "/home/a", "/home/a/.config/systemd/user"},
		{"/x/cfg", "/home/a", "/x/cfg/systemd/user"},
		{"relative/cfg", "/home/a", "/home/a/.config/systemd/user"},
	} {
		if got := autostart.SystemdUserDir(tc.xdg, tc.home); got != tc.want {
			t.Errorf("SystemdUserDir(%q, %q) = %q, want %q", tc.xdg, tc.home, got, tc.want)
		}
	}
}

func TestCommandString(t *testing.T) {
	c := autostart.Command{"launchctl", "bootstrap", "gui/501", "/Users/a b/it's.plist", ""}
	if got, want := c.String(), `launchctl bootstrap gui/501 '/Users/a b/it'\''s.plist' ''`; got != want {
		t.Errorf("%s, want %s", got, want)
	}
}

func decodeAgent(data []byte, a *autostart.Agent) (int, error) { return plist.Unmarshal(data, a) }

// installer is what LaunchAgents and SystemdUser both do.
type installer interface {
	Install(ctx context.Context, s autostart.Service) (autostart.Result, error)
}

// mustInstall installs svc with i.
func mustInstall(t *testing.T, i installer, svc autostart.Service) autostart.Result {
	t.Helper()
	res, err := i.Install(context.Background(), svc)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// wantTodo checks the commands of todo, each joined by spaces, against
// want, in order.
func wantTodo(t *testing.T, todo []autostart.Command, want ...string) {
	t.Helper()
	var got []string
	for _, c := range todo {
		got = append(got, strings.Join(c, " "))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Todo = %q, want %q", got, want)
	}
}

func checkFile(t *testing.T, path string, want autostart.Agent) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got autostart.Agent
	if _, err := decodeAgent(data, &got); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s holds %+v, want %+v", path, got, want)
	}
}

func noTemps(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}
