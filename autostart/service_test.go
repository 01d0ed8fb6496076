package autostart_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"howett.net/plist"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/autostart"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/launchd")

// goldenDir holds the expected files, at the repository's testdata.
const goldenDir = "../testdata/launchd"

// goldenCases are the fixed inputs of the golden files: a plain install, and
// one whose paths hold spaces, quotes and the characters plists and unit
// files escape.
var goldenCases = []struct {
	dir string
	svc autostart.Service
}{
	{"", autostart.Service{Binary: "/usr/local/bin/engram", Home: "/Users/ada/.engram",
		LabelPrefix: "com.engram", Interval: 15 * time.Minute}},
	{"quoted", autostart.Service{Binary: "/Users/ada/My Tools; 100%/engram",
		Home:        `/Users/ada/Engram "Data" it's 100% $HOME & <more> \ end`,
		LabelPrefix: "dev.ada-lab.engram_2", Interval: 90 * time.Minute}},
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run("case="+tc.dir, func(t *testing.T) {
			launchdFiles, err := tc.svc.LaunchdFiles()
			if err != nil {
				t.Fatal(err)
			}
			systemdFiles, err := tc.svc.SystemdFiles()
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(goldenDir, tc.dir)
			for _, f := range append(launchdFiles, systemdFiles...) {
				path := filepath.Join(dir, f.Name)
				if *update {
					if err := os.MkdirAll(dir, 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, f.Data, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./autostart -update to write it)", err)
				}
				if !bytes.Equal(f.Data, want) {
					t.Errorf("%s differs from the golden file (go test ./autostart -update rewrites it):\n got:\n%s\nwant:\n%s", f.Name, f.Data, want)
				}
			}
		})
	}
}

// TestPlistKeys parses the generated plists with howett.net/plist and checks
// the keys launchd reads, with their types, and that the paths come back
// unchanged through the XML escaping.
func TestPlistKeys(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run("case="+tc.dir, func(t *testing.T) {
			files, err := tc.svc.LaunchdFiles()
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 2 {
				t.Fatalf("got %d files, want 2", len(files))
			}
			serve, jobs := decode(t, files[0].Data), decode(t, files[1].Data)
			prefix, home, bin := tc.svc.LabelPrefix, tc.svc.Home, tc.svc.Binary
			if files[0].Name != prefix+".serve.plist" || files[1].Name != prefix+".jobs.plist" {
				t.Errorf("names %s, %s", files[0].Name, files[1].Name)
			}

			wantKeys(t, serve, "Label", "ProgramArguments", "RunAtLoad", "KeepAlive", "StandardOutPath", "StandardErrorPath")
			if serve["Label"] != prefix+".serve" {
				t.Errorf("serve Label = %#v", serve["Label"])
			}
			if serve["KeepAlive"] != true || serve["RunAtLoad"] != true {
				t.Errorf("serve KeepAlive = %#v, RunAtLoad = %#v, want true, true", serve["KeepAlive"], serve["RunAtLoad"])
			}
			wantArgs(t, serve["ProgramArguments"], bin, "--home", home, "serve")
			for _, k := range []string{"StandardOutPath", "StandardErrorPath"} {
				if serve[k] != home+"/logs/serve.log" {
					t.Errorf("serve %s = %#v", k, serve[k])
				}
			}

			wantKeys(t, jobs, "Label", "ProgramArguments", "RunAtLoad", "StartInterval", "StandardOutPath", "StandardErrorPath")
			if jobs["Label"] != prefix+".jobs" || jobs["RunAtLoad"] != true {
				t.Errorf("jobs Label = %#v, RunAtLoad = %#v", jobs["Label"], jobs["RunAtLoad"])
			}
			// An <integer>, which howett.net/plist decodes as uint64; a
			// <string> or <real> here would make launchd ignore the key.
			if n, ok := jobs["StartInterval"].(uint64); !ok || n != uint64(tc.svc.Interval/time.Second) {
				t.Errorf("jobs StartInterval = %#v (%T), want the integer %d", jobs["StartInterval"], jobs["StartInterval"], tc.svc.Interval/time.Second)
			}
			wantArgs(t, jobs["ProgramArguments"], bin, "--home", home, "jobs", "run", "--due")
			if jobs["StandardErrorPath"] != home+"/logs/jobs.log" {
				t.Errorf("jobs StandardErrorPath = %#v", jobs["StandardErrorPath"])
			}

			// And the typed form round-trips.
			var got autostart.Agent
			if _, err := plist.Unmarshal(files[1].Data, &got); err != nil {
				t.Fatal(err)
			}
			if want := tc.svc.JobsAgent(); !reflect.DeepEqual(got, want) {
				t.Errorf("decoded %+v, want %+v", got, want)
			}
		})
	}
}

func decode(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	format, err := plist.Unmarshal(data, &m)
	if err != nil {
		t.Fatalf("parse plist: %v\n%s", err, data)
	}
	if format != plist.XMLFormat {
		t.Errorf("format %d, want XML", format)
	}
	return m
}

func wantKeys(t *testing.T, m map[string]any, keys ...string) {
	t.Helper()
	if len(m) != len(keys) {
		t.Errorf("%d keys %v, want %v", len(m), m, keys)
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("no key %s in %v", k, m)
		}
	}
}

func wantArgs(t *testing.T, v any, want ...string) {
	t.Helper()
	arr, ok := v.([]any)
	if !ok {
		t.Fatalf("ProgramArguments is %T, want an array", v)
	}
	var got []string
	for _, a := range arr {
		s, ok := a.(string)
		if !ok {
			t.Fatalf("ProgramArguments holds a %T, want strings", a)
		}
		got = append(got, s)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ProgramArguments = %q, want %q", got, want)
	}
}

func TestSystemdUnits(t *testing.T) {
	svc := autostart.Service{Binary: "/opt/engram bin/engram", Home: "/home/ada/it's $HOME 100%", Interval: 2 * time.Hour}
	files, err := svc.SystemdFiles()
	if err != nil {
		t.Fatal(err)
	}
	units := map[string]map[string]string{}
	for _, f := range files {
		units[f.Name] = directives(string(f.Data))
	}
	if len(units) != 3 {
		t.Fatalf("units %v", units)
	}
	for name, want := range map[string]map[string]string{
		autostart.ServeUnit: {"Service.Restart": "on-failure", "Service.RestartSec": "5", "Install.WantedBy": "default.target"},
		autostart.JobsUnit:  {"Service.Type": "oneshot"},
		autostart.TimerUnit: {"Timer.OnUnitActiveSec": "2h", "Timer.OnBootSec": "2min", "Timer.Persistent": "true",
			"Timer.Unit": autostart.JobsUnit, "Install.WantedBy": "timers.target"},
	} {
		for k, v := range want {
			if got := units[name][k]; got != v {
				t.Errorf("%s %s = %q, want %q", name, k, got, v)
			}
		}
	}
	for name, want := range map[string][]string{
		autostart.ServeUnit: {svc.Binary, "--home", svc.Home, "serve"},
		autostart.JobsUnit:  {svc.Binary, "--home", svc.Home, "jobs", "run", "--due"},
	} {
		if got := splitExec(t, units[name]["Service.ExecStart"]); !reflect.DeepEqual(got, want) {
			t.Errorf("%s ExecStart splits into %q, want %q", name, got, want)
		}
	}
}

// directives reads a unit file into "Section.Key" = value.
func directives(unit string) map[string]string {
	m := map[string]string{}
	section := ""
	for _, line := range strings.Split(unit, "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
		default:
			k, v, _ := strings.Cut(line, "=")
			m[section+"."+k] = v
		}
	}
	return m
}

// splitExec parses an ExecStart= value by systemd's rules, for what
// ExecLine writes: specifiers ("%%" only), then words split at whitespace
// with double-quoted parts and backslash escapes, then "$$" in the arguments.
// It fails the test on anything systemd would expand.
func splitExec(t testing.TB, line string) []string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		if line[i] == '%' {
			if i+1 >= len(line) || line[i+1] != '%' {
				t.Fatalf("specifier %%%c would be expanded in %q", line[min(i+1, len(line)-1)], line)
			}
			i++
		}
		b.WriteByte(line[i])
	}
	s := b.String()
	var words []string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			break
		}
		var w strings.Builder
		quoted := false
		for len(s) > 0 && (quoted || (s[0] != ' ' && s[0] != '\t')) {
			c := s[0]
			s = s[1:]
			switch {
			case c == '"':
				quoted = !quoted
			case c == '\\':
				if len(s) == 0 || (s[0] != '\\' && s[0] != '"') {
					t.Fatalf("escape other than \\\\ or \\\" in %q", line)
				}
				w.WriteByte(s[0])
				s = s[1:]
			case c == '\'' && !quoted:
				t.Fatalf("unquoted single quote in %q", line)
			default:
				w.WriteByte(c)
			}
		}
		if quoted {
			t.Fatalf("unterminated quote in %q", line)
		}
		words = append(words, w.String())
	}
	for i := 1; i < len(words); i++ {
		var w strings.Builder
		for j := 0; j < len(words[i]); j++ {
			if words[i][j] == '$' {
				if j+1 >= len(words[i]) || words[i][j+1] != '$' {
					t.Fatalf("a $ would be expanded in %q", line)
				}
				j++
			}
			w.WriteByte(words[i][j])
		}
		words[i] = w.String()
	}
	return words
}

func TestExecLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"/usr/bin/engram", "--home", "/home/a/.engram", "serve"}, "/usr/bin/engram --home /home/a/.engram serve"},
		{[]string{"/opt/my tools/engram", "serve"}, `"/opt/my tools/engram" serve`},
		{[]string{"/b/100%", "--home", "/h/50%"}, `/b/100%% --home /h/50%%`},
		{[]string{"/b/x", "--home", "/h/$HOME"}, `/b/x --home /h/$$HOME`},
		{[]string{"/b/x", "--home", `/h/a "b" 'c' \d`}, `/b/x --home "/h/a \"b\" 'c' \\d"`},
		{[]string{"/b/x", ";", ""}, `/b/x ";" ""`},
		{[]string{"/b/é ü", "--home", "/h/日本"}, `"/b/é ü" --home /h/日本`},
	} {
		if got := autostart.ExecLine(tc.args); got != tc.want {
			t.Errorf("ExecLine(%q) = %s, want %s", tc.args, got, tc.want)
		}
		if got := splitExec(t, autostart.ExecLine(tc.args)); !reflect.DeepEqual(got, tc.args) {
			t.Errorf("%q splits back into %q", tc.args, got)
		}
	}
}

// FuzzPaths checks that any home Validate accepts comes back unchanged from
// the ExecStart= line (by systemd's rules) and from the plist.
func FuzzPaths(f *testing.F) {
	for _, s := range []string{"h", `a b/"c"/'d'/\e/%f/$g/${h}/;`, "é\u00a0ü\u2028", "\ufffe", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, home string) {
		svc := autostart.Service{Binary: "/usr/bin/engram", Home: "/" + home}
		if svc.Validate() != nil {
			return
		}
		args := []string{svc.Binary, "--home", svc.Home, "serve"}
		if got := splitExec(t, autostart.ExecLine(args)); !reflect.DeepEqual(got, args) {
			t.Fatalf("%q splits back into %q", args, got)
		}
		data, err := svc.ServeAgent().Plist()
		if err != nil {
			t.Fatal(err)
		}
		var got autostart.Agent
		if _, err := plist.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.ProgramArguments, args) {
			t.Fatalf("plist gives back %q, want %q", got.ProgramArguments, args)
		}
	})
}

func TestTimespan(t *testing.T) {
	for d, want := range map[time.Duration]string{
		15 * time.Minute:                 "15min",
		time.Minute:                      "1min",
		90 * time.Second:                 "1min 30s",
		2 * time.Hour:                    "2h",
		26*time.Hour + 5*time.Second:     "1d 2h 5s",
		7*24*time.Hour + 30*time.Minute:  "7d 30min",
		time.Hour + time.Minute + 1e9*59: "1h 1min 59s",
	} {
		if got := autostart.Timespan(d); got != want {
			t.Errorf("Timespan(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := autostart.Service{Binary: "/usr/bin/engram", Home: "/home/a/.engram"}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		edit  func(*autostart.Service)
		field string
	}{
		{"relative binary", func(s *autostart.Service) { s.Binary = "engram" }, "binary"},
		{"no binary", func(s *autostart.Service) { s.Binary = "" }, "binary"},
		{"relative home", func(s *autostart.Service) { s.Home = "~/.engram" }, "home"},
		{"newline in home", func(s *autostart.Service) { s.Home = "/home/a\n[Service]" }, "home"},
		{"NUL in binary", func(s *autostart.Service) { s.Binary = "/usr/bin/eng\x00ram" }, "binary"},
		{"not UTF-8", func(s *autostart.Service) { s.Home = "/home/\xff" }, "home"},
		{"not an XML character", func(s *autostart.Service) { s.Home = "/home/\uffff" }, "home"},
		{"prefix with a slash", func(s *autostart.Service) { s.LabelPrefix = "com/engram" }, "label-prefix"},
		{"prefix with a space", func(s *autostart.Service) { s.LabelPrefix = "com.my engram" }, "label-prefix"},
		{"prefix with an empty part", func(s *autostart.Service) { s.LabelPrefix = "com..engram" }, "label-prefix"},
		{"prefix ending in a dot", func(s *autostart.Service) { s.LabelPrefix = "com.engram." }, "label-prefix"},
		{"short interval", func(s *autostart.Service) { s.Interval = 30 * time.Second }, "interval"},
		{"negative interval", func(s *autostart.Service) { s.Interval = -time.Hour }, "interval"},
		{"fractional interval", func(s *autostart.Service) { s.Interval = time.Minute + time.Millisecond }, "interval"},
	} {
		s := ok
		tc.edit(&s)
		err := s.Validate()
		if engram.ErrorCode(err) != engram.EINVALID || engram.ErrorField(err) != tc.field {
			t.Errorf("%s: %v (code %q field %q), want EINVALID on %s", tc.name, err, engram.ErrorCode(err), engram.ErrorField(err), tc.field)
		}
		if _, err := s.LaunchdFiles(); err == nil {
			t.Errorf("%s: LaunchdFiles accepted it", tc.name)
		}
		if _, err := s.SystemdFiles(); err == nil {
			t.Errorf("%s: SystemdFiles accepted it", tc.name)
		}
	}
	// launchd takes any path; systemd refuses quotes and backslashes in the
	// program's path.
	for _, bin := range []string{`/a "b"/engram`, "/a'b/engram", `/a\b/engram`, "/a$b/engram"} {
		s := ok
		s.Binary = bin
		if _, err := s.LaunchdFiles(); err != nil {
			t.Errorf("LaunchdFiles(%q): %v", bin, err)
		}
		if _, err := s.SystemdFiles(); engram.ErrorField(err) != "binary" {
			t.Errorf("SystemdFiles(%q) = %v, want an error on binary", bin, err)
		}
	}
}

// TestSystemdAnalyze checks the units with systemd's own parser where it is
// installed: systemd-analyze verify reads unit files and starts nothing. The
// program's path holds a space, '%' and ';', which systemd must unquote to
// find the executable.
func TestSystemdAnalyze(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("no systemd-analyze")
	}
	root := t.TempDir()
	binDir := filepath.Join(root, "my tools; 100%")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(binDir, "engram")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	svc := autostart.Service{Binary: bin, Home: filepath.Join(root, `home "x" it's $HOME 50%`), Interval: 20 * time.Minute}
	files, err := svc.SystemdFiles()
	if err != nil {
		t.Fatal(err)
	}
	units := filepath.Join(root, "units")
	if err := os.MkdirAll(units, 0o755); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		p := filepath.Join(units, f.Name)
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	cmd := exec.Command(analyze, append([]string{"verify", "--man=no"}, paths...)...)
	cmd.Env = append(os.Environ(), "SYSTEMD_LOG_LEVEL=notice")
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}
