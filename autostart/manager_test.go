package autostart_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/engram-dev/engram/autostart"
)

// TestInstaller: each manager's Installer writes, lists and removes that
// manager's files, and runs its commands.
func TestInstaller(t *testing.T) {
	ctx := context.Background()
	svc := testService(t)
	svc.Binary = filepath.Join(t.TempDir(), "my bin", "engram") // systemd refuses quotes
	for _, tc := range []struct {
		manager, firstRun string
		files             func() ([]autostart.File, error)
	}{
		{"launchd", "launchctl print gui/" + fmt.Sprint(os.Getuid()) + "/com.engram.serve", svc.LaunchdFiles},
		{"systemd", "systemctl --user daemon-reload", svc.SystemdFiles},
	} {
		rec := newRecorder()
		in := autostart.Installer{Manager: tc.manager, Dir: t.TempDir(), Runner: rec}
		want, err := tc.files()
		if err != nil {
			t.Fatal(err)
		}
		if got, err := in.Files(svc); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: Files = %v, %v", tc.manager, got, err)
		}
		res, err := in.Install(ctx, svc)
		if err != nil || len(res.Written) != len(want) {
			t.Fatalf("%s: Install wrote %q: %v", tc.manager, res.Written, err)
		}
		for _, f := range want {
			if b, err := os.ReadFile(filepath.Join(in.Dir, f.Name)); err != nil || string(b) != string(f.Data) {
				t.Errorf("%s: %s: %v", tc.manager, f.Name, err)
			}
		}
		if ran := rec.take(); len(ran) == 0 || ran[0] != tc.firstRun {
			t.Errorf("%s: ran %q", tc.manager, ran)
		}
		if res, err = in.Uninstall(ctx, ""); err != nil || len(res.Removed) < len(want) {
			t.Fatalf("%s: Uninstall removed %q: %v", tc.manager, res.Removed, err)
		}
		if entries, _ := os.ReadDir(in.Dir); len(entries) != 0 {
			t.Errorf("%s: left %v", tc.manager, entries)
		}
	}
}

func TestUserDir(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	for _, tc := range []struct {
		manager string
		vars    map[string]string
		want    string
	}{
		{"launchd", map[string]string{"HOME": "/Users/a"}, "/Users/a/Library/LaunchAgents"},
		{"systemd", map[string]string{"HOME": "/home/a"}, "/home/a/.config/systemd/user"},
		{"systemd", map[string]string{"HOME": "/home/a", "XDG_CONFIG_HOME": "/x/cfg"}, "/x/cfg/systemd/user"},
	} {
		if got, err := autostart.UserDir(tc.manager, env(tc.vars)); err != nil || got != tc.want {
			t.Errorf("UserDir(%s, %v) = %q, %v; want %q", tc.manager, tc.vars, got, err, tc.want)
		}
	}
	// No HOME: the system's idea of the user's home.
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip(err)
	}
	if got, err := autostart.UserDir("launchd", env(nil)); err != nil || got != autostart.LaunchAgentsDir(home) {
		t.Errorf("without HOME: %q, %v", got, err)
	}
}

// TestExecutable: the test binary, built by go test in the temporary
// folder, is found and said to be there.
func TestExecutable(t *testing.T) {
	bin, temporary, err := autostart.Executable()
	if err != nil || !filepath.IsAbs(bin) {
		t.Fatalf("%q, %v", bin, err)
	}
	tmp := filepath.Clean(os.TempDir())
	if inTmp := strings.HasPrefix(bin, tmp+string(filepath.Separator)); temporary != inTmp {
		t.Errorf("%s: temporary %v, under %s %v", bin, temporary, tmp, inTmp)
	}
}
