package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/importer"
	"github.com/engram-dev/engram/internal/layertest"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/server"
)

// uiHome is a home with something in every view: a conversation whose
// speakers state facts, decisions and moves (so the layer jobs derive
// memories, scenes, facets with a history and graph triples), and a vault of
// two notes that link to each other.
func uiHome(t *testing.T, config string) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, config)
	var b strings.Builder
	enc := json.NewEncoder(&b)
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	lines := []struct{ session, speaker, content string }{
		{"trip", "Ana", "I live in Paris."},
		{"trip", "Bo", "We decided to use Postgres for the billing service because it is simpler to run."},
		{"trip", "Ana", "My favourite book is Dune."},
		{"trip", "Bo", "I'm going to refactor the ingest path next week."},
		{"move", "Ana", "I live in Berlin now, I moved last week."},
		{"move", "Bo", "I really like Kenyan coffee."},
		{"move", "Ana", "I usually run before work."},
		{"move", "Bo", "I went to the support group yesterday and it helped."},
	}
	for i, l := range lines {
		day := 0
		if l.session == "move" {
			day = 20
		}
		if err := enc.Encode(map[string]any{"id": fmt.Sprintf("ui-%02d", i), "session": l.session, "speaker": l.speaker,
			"ts": start.AddDate(0, 0, day).Add(time.Duration(i) * time.Minute).Format(time.RFC3339), "content": l.content}); err != nil {
			t.Fatal(err)
		}
	}
	vault := filepath.Join(t.TempDir(), "notes")
	if err := os.MkdirAll(vault, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"adr-postgres.md":     "---\ntitle: ADR 1 Postgres for billing\ntype: adr\n---\n# Decision\n\nWe use Postgres for billing. See [[incident-timeout]].\n",
		"incident-timeout.md": "---\ntitle: Incident: billing timeout\ntype: incident\n---\n# What happened\n\nThe billing service timed out; the fix is in [[adr-postgres]].\n",
	} {
		if err := os.WriteFile(filepath.Join(vault, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// What `engram vault add`, `engram ingest` and `engram jobs run --all`
	// do, on the engine of the home opened here.
	ctx := t.Context()
	noEnv := func(string) string { return "" }
	cfg, err := server.LoadConfig(home, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := engine.AddVault(cfg.Config, vault, "default", noEnv); err != nil {
		t.Fatal(err)
	}
	if cfg, err = server.LoadConfig(home, noEnv); err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(ctx, cfg.Config, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	conv, err := os.ReadFile(layertest.Conversation(t, 120))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{b.String(), string(conv)} {
		imp := importer.NewImporter(e, cfg.Limits(), "", true, io.Discard)
		_, err := imp.Import(ctx, func(emit func(importer.Record) error) (string, error) {
			_, err := importer.ReadLines(strings.NewReader(in), "", emit)
			return "", err
		})
		if err = imp.Result(err, "lines"); err != nil {
			t.Fatalf("ingest: %v", err)
		}
	}
	if _, err := e.SyncVaults(ctx, ""); err != nil {
		t.Fatal(err)
	}
	jobs, err := e.RunJobs(ctx, "", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Failing {
			t.Fatalf("job %s: %s", j.Name, j.LastError)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return home
}

// browser is a headless Chromium (the one scripts/chromium.sh installed)
// that records every console error, uncaught exception and error log entry
// (a failed request included) of the pages it loads.
type browser struct {
	t        *testing.T
	alloc    context.Context
	shotsDir string

	mu     sync.Mutex
	errors []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	bin := os.Getenv("ENGRAM_TEST_CHROMIUM")
	if bin == "" {
		t.Fatal("ENGRAM_TEST_CHROMIUM is not set: run `make test` (scripts/testenv.sh installs Chromium), or -short to skip")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(1280, 900))
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	dir := os.Getenv("ENGRAM_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "engram-test-artifacts")
	}
	dir = filepath.Join(dir, "ui")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return &browser{t: t, alloc: alloc, shotsDir: dir}
}

// tab opens a new tab, listening for errors, closed with the test.
func (b *browser) tab() context.Context {
	record := func(ev any) {
		var msg string
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				msg = "console.error: " + strings.Join(parts, " ")
			}
		case *runtime.EventExceptionThrown:
			msg = "exception: " + e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				msg = "log: " + e.Entry.Text + " " + e.Entry.URL
			}
		}
		if msg != "" {
			b.mu.Lock()
			b.errors = append(b.errors, msg)
			b.mu.Unlock()
		}
	}
	ctx, cancel := chromedp.NewContext(b.alloc, chromedp.WithListener(record))
	b.t.Cleanup(cancel)
	// The first run starts the browser, with no timeout of its own (a
	// timeout there would stop the browser).
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		b.t.Fatal(err)
	}
	return ctx
}

// do runs actions in ctx, failing the test on an error.
func (b *browser) do(ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(tctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// eval returns the value of a JavaScript expression in the page.
func eval[T any](b *browser, ctx context.Context, expr string) T {
	b.t.Helper()
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(tctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// text is the text of every element sel selects in the page, a line each.
func (b *browser) text(ctx context.Context, sel string) string {
	b.t.Helper()
	return eval[string](b, ctx, fmt.Sprintf(`[...document.querySelectorAll(%q)].map(e => e.textContent).join("\n")`, sel))
}

// load opens path of base and waits until ready selects something.
func (b *browser) load(ctx context.Context, base, name, path, ready string) {
	b.t.Helper()
	b.do(ctx, "load "+name, chromedp.Navigate(base+path), chromedp.WaitReady(chromedp.CSS(ready)))
}

// try reports whether a JavaScript expression is true in the page; false
// while the page cannot answer (between two documents, say).
func (b *browser) try(ctx context.Context, expr string) bool {
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ok, err := chromedp.Run(tctx, chromedp.Evaluate[bool](expr))
	return err == nil && ok
}

// shots saves the page at 1280 and 390 pixels wide and checks that at 390
// nothing is wider than the screen.
func (b *browser) shots(ctx context.Context, name string) {
	b.t.Helper()
	for _, w := range []int64{1280, 390} {
		b.do(ctx, "viewport", chromedp.EmulateViewport(w, 900))
		if eval[bool](b, ctx, `document.documentElement.scrollWidth > window.innerWidth + 1`) {
			b.t.Errorf("%s at %d px: the page is wider than the screen", name, w)
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			b.t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(b.shotsDir, fmt.Sprintf("%s-%d.png", name, w)), png, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
	// What a screen shows first, at 1280 by 800 (the README's picture).
	b.do(ctx, "viewport", chromedp.EmulateViewport(1280, 800))
	eval[any](b, ctx, `window.scrollTo(0, 0)`)
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.shotsDir, name+"-screen.png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.do(ctx, "viewport", chromedp.EmulateViewport(1280, 900))
}

// noErrors fails the test on any error the pages logged so far.
func (b *browser) noErrors(page string) {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.errors {
		b.t.Errorf("%s: %s", page, e)
	}
	b.errors = nil
}

// unlabelled is a script listing the form controls without a label.
const unlabelled = `[...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
	.filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')).map(e => e.id || e.name || e.outerHTML)`

// startWebView skips under -short; otherwise it starts a headless Chromium
// and a server on a home holding data, with config, and returns the
// browser, the server (stopped when the test ends) and a tab.
func startWebView(t *testing.T, config string) (*browser, *server.Server, context.Context) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts engram serve and Chromium")
	}
	b := newBrowser(t)
	s := startServer(t, uiHome(t, config), nil)
	return b, s, b.tab()
}

// TestWebView loads every page of the web view from a real `engram serve`
// holding data, in a real headless Chromium, and checks the rendered DOM,
// labels, the keyboard path, widths of 1280 and 390 pixels and that no page
// logs an error.
func TestWebView(t *testing.T) {
	b, s, ctx := startWebView(t, "log_level = \"warn\"\n")
	base := "http://" + s.Addr()

	count := func(sel string) int {
		t.Helper()
		return eval[int](b, ctx, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel))
	}
	text := func(sel string) string { t.Helper(); return b.text(ctx, sel) }
	page := func(name, path, ready string) {
		t.Helper()
		b.load(ctx, base, name, path, ready)
		if missing := eval[[]string](b, ctx, unlabelled); len(missing) > 0 {
			t.Errorf("%s: controls without a label: %v", name, missing)
		}
	}

	// The root leads to the timeline: turns by day and session, with what
	// was derived from them.
	page("timeline", "/", "main .session")
	if count(".turn") < 20 || count(".day > h2") < 2 || count(".derived .memory") == 0 || count(".derived .scene") == 0 {
		t.Errorf("timeline: %d turns, %d days, %d memories, %d scenes", count(".turn"), count(".day > h2"),
			count(".derived .memory"), count(".derived .scene"))
	}
	if !strings.Contains(text(".turn"), "I live in Berlin now") {
		t.Errorf("timeline misses a turn: %q", text(".turn"))
	}
	// Keyboard: the first Tab reaches the skip link, which leads to main.
	b.do(ctx, "tab", chromedp.KeyEvent("\t"))
	if focused := eval[string](b, ctx, `document.activeElement.className`); focused != "skip" {
		t.Errorf("the first Tab focuses %q, want the skip link", focused)
	}
	b.do(ctx, "enter", chromedp.KeyEvent("\r"))
	if focused := eval[string](b, ctx, `location.hash + " " + document.activeElement.id`); focused != "#main main" {
		t.Errorf("the skip link leads to %q, want main", focused)
	}
	b.shots(ctx, "timeline")
	// Older turns, paged.
	// The link loads a new document: mark the old one, and wait for a page
	// that is not it and shows turns (the old page matches any selector the
	// new one has, and the new one has its URL before its turns).
	b.do(ctx, "older", chromedp.Evaluate[chromedp.Void](`window.engramOld = true`), chromedp.Click(chromedp.CSS(`.more a`)))
	testutil.WaitUntil(t, "the older turns' page", func() bool {
		return b.try(ctx, `!window.engramOld && document.querySelectorAll("main .session .turn").length > 0`)
	})
	loc := eval[string](b, ctx, `location.search`)
	if !strings.Contains(loc, "before=") || count(".turn") == 0 {
		t.Errorf("older turns: %q, %d turns", loc, count(".turn"))
	}
	b.noErrors("timeline")

	// Search, from the box: the query goes into the URL; deep shows its
	// signals; a result opens its session around the turn.
	page("search box", "/ui/", "#q")
	b.do(ctx, "search", chromedp.SendKeys(chromedp.CSS("#q"), "billing database decision"),
		chromedp.SetValue(chromedp.CSS("#mode"), "deep"), chromedp.Submit(chromedp.CSS("#q")),
		chromedp.WaitReady(chromedp.CSS(".results li")))
	loc = eval[string](b, ctx, `location.search`)
	if q, _ := url.ParseQuery(strings.TrimPrefix(loc, "?")); q.Get("q") != "billing database decision" || q.Get("mode") != "deep" {
		t.Errorf("the search is not in the URL: %q", loc)
	}
	if count(".results li") == 0 || count(".signals") == 0 || !strings.Contains(text(".results li"), "Postgres") {
		t.Errorf("deep search: %d results, %d with signals: %q", count(".results li"), count(".signals"), text(".results li"))
	}
	b.shots(ctx, "search-deep")
	b.do(ctx, "open", chromedp.Click(chromedp.CSS(`.results li[data-kind=turn] a.open`)), chromedp.WaitReady(chromedp.CSS(".turn.hit")))
	hitFocused := eval[bool](b, ctx, `document.activeElement.classList.contains('hit')`)
	if count(".turn.hit") != 1 || !hitFocused || count(".turn") < 2 {
		t.Errorf("session view: %d hits (focused %v) among %d turns", count(".turn.hit"), hitFocused, count(".turn"))
	}
	b.shots(ctx, "session")
	page("search default", "/ui/?q=favourite+book", ".results li")
	if !strings.Contains(text(".results li"), "Dune") || !strings.Contains(text("main .meta"), "mode hybrid") {
		t.Errorf("default search: %q / %q", text(".results li"), text("main .meta"))
	}
	page("search dates", "/ui/?q=support+group", ".results li")
	if !strings.Contains(text(".results li"), "yesterday = 2026-03-21") {
		t.Errorf("a result does not say what yesterday was: %q", text(".results li"))
	}
	b.noErrors("search")

	// Memories, filtered by type.
	page("memories", "/ui/?view=memories", "main .memory")
	b.shots(ctx, "memories")
	page("decisions", "/ui/?view=memories&type=decision", "main .memory")
	for _, k := range strings.Split(text("main .memory .kind"), "\n") {
		if k != "decision" {
			t.Errorf("decisions only: a memory of kind %q", k)
		}
	}
	page("superseded", "/ui/?view=memories&superseded=true&subject=Ana", "main .memory")
	if count(".kind.superseded") == 0 {
		t.Errorf("superseded memories of Ana: none marked in %q", text("main .memory"))
	}
	page("scenes", "/ui/?view=scenes", "main .scene")
	b.noErrors("memories and scenes")

	// Persona, with the history of a facet: Ana moved from Paris to Berlin.
	page("persona", "/ui/?view=persona", "main .facet")
	if !strings.Contains(text("main section"), "Berlin") || !strings.Contains(text(".history li"), "Paris") {
		t.Errorf("persona: %q", text("main section"))
	}
	b.shots(ctx, "persona")
	b.noErrors("persona")

	// The graph of Ana: now she lives in Berlin; at the slider's start, in
	// Paris.
	page("entities", "/ui/?view=graph", "main ul li a")
	page("graph", "/ui/?view=graph&entity=Ana", ".graph-box svg")
	if !strings.Contains(text(".graph-box svg"), "Berlin") || strings.Contains(text(".graph-box svg"), "Paris") {
		t.Errorf("graph now: %q", text(".graph-box svg"))
	}
	b.shots(ctx, "graph")
	eval[any](b, ctx, `(() => { const s = document.getElementById('asof'); s.value = 0; s.dispatchEvent(new Event('input')); })()`)
	if !strings.Contains(text(".graph-box svg"), "Paris") || strings.Contains(text(".graph-box svg"), "Berlin") {
		t.Errorf("graph at the first moment: %q (%s)", text(".graph-box svg"), text("#asof-label"))
	}
	b.noErrors("graph")

	// Documents, with their links and backlinks.
	page("docs", "/ui/?view=docs", "main table tbody tr")
	if count("main table tbody tr") != 2 {
		t.Errorf("documents: %q", text("main table tbody tr"))
	}
	b.do(ctx, "open doc", chromedp.Click(chromedp.CSS(`main table tbody tr a[href*="adr-postgres.md"]`)), chromedp.WaitReady(chromedp.CSS("main h2")))
	// The ADR links to the incident, which links back.
	if count(`main ul a[href*="incident-timeout.md"]`) != 2 {
		t.Errorf("the ADR's link and backlink to the incident: %q", text("main"))
	}
	b.shots(ctx, "doc")
	b.noErrors("documents")

	// Jobs and health.
	page("jobs", "/ui/?view=jobs", "main table tbody tr")
	if count("main table tbody tr") < 5 || !strings.Contains(text("main"), "ok") {
		t.Errorf("jobs: %q", text("main"))
	}
	b.shots(ctx, "jobs")
	b.noErrors("jobs")

	// A view no page has, the names every object inherits included, is
	// said to be unknown (not a blank page).
	for _, v := range []string{"nosuch", "constructor", "toString", "__proto__", "hasOwnProperty", "valueOf"} {
		page("view "+v, "/ui/?view="+v, "main .empty")
		if got := text("main"); !strings.Contains(got, "There is no view") || !strings.Contains(got, v) {
			t.Errorf("?view=%s: %q", v, got)
		}
	}
	b.noErrors("unknown views")

	// Corrections and forgetting, each asked first: mark a memory wrong,
	// correct a fact's object, forget a turn.
	page("memories to correct", "/ui/?view=memories&mq=Postgres", "main .memory .action")
	id := eval[string](b, ctx, `document.querySelector("main .memory").dataset.id`)
	b.do(ctx, "mark wrong", chromedp.Click(chromedp.CSS(`main .memory .action`)), chromedp.WaitVisible(chromedp.CSS(`main .memory .action.confirm`)))
	if !strings.Contains(text("main .memory .actions"), "Mark this memory wrong?") {
		t.Errorf("mark wrong does not ask first: %q", text("main .memory .actions"))
	}
	b.do(ctx, "confirm", chromedp.Click(chromedp.CSS(`main .memory .action.confirm`)), chromedp.WaitVisible(chromedp.CSS(`main .memory .done`)))
	page("memories after", "/ui/?view=memories&mq=Postgres", "main .memory, main .empty")
	if count(fmt.Sprintf(`main .memory[data-id=%q]`, id)) != 0 {
		t.Errorf("the memory marked wrong is still listed: %q", text("main"))
	}
	page("memories history", "/ui/?view=memories&superseded=true&mq=Postgres", "main .memory")
	if !strings.Contains(text(fmt.Sprintf(`main .memory[data-id=%q] .kind`, id)), "(wrong)") {
		t.Errorf("the history does not say the memory is wrong: %q", text("main .memory"))
	}

	page("graph to correct", "/ui/?view=graph&entity=Ana", "main table tbody tr .fact-actions")
	b.do(ctx, "correct", chromedp.Click(chromedp.CSS(`main table tbody tr[data-id] .fact-actions .actions:last-child .action`)),
		chromedp.WaitVisible(chromedp.CSS(`.correct-input`)))
	b.do(ctx, "type", chromedp.SetValue(chromedp.CSS(`.correct-input`), "Hamburg"), chromedp.Click(chromedp.CSS(`form.inline .action.confirm`)),
		chromedp.WaitVisible(chromedp.CSS(`main table .done`)))
	page("graph after", "/ui/?view=graph&entity=Ana", ".graph-box svg")
	if !strings.Contains(text("main table"), "Hamburg") {
		t.Errorf("the corrected object is not in the graph: %q", text("main table"))
	}

	page("timeline to forget", "/", "main .turn .action")
	forgotten := eval[string](b, ctx, `document.querySelector("main .turn").id`)
	b.do(ctx, "forget", chromedp.Click(chromedp.CSS(`main .turn .action`)), chromedp.WaitVisible(chromedp.CSS(`main .turn .action.confirm`)))
	b.do(ctx, "confirm forget", chromedp.Click(chromedp.CSS(`main .turn .action.confirm`)), chromedp.WaitVisible(chromedp.CSS(`main .turn .done`)))
	page("timeline after", "/", "main .session")
	if count("#"+forgotten) != 0 {
		t.Errorf("the forgotten turn %s is still on the timeline", forgotten)
	}
	b.noErrors("corrections")
}

// TestWebViewToken: with a token, the page asks for it once, keeps it for
// the tab, and every view works with it.
func TestWebViewToken(t *testing.T) {
	b, s, ctx := startWebView(t, "log_level = \"warn\"\ntoken = \"s3cret-ui\"\n")
	b.do(ctx, "load", chromedp.Navigate("http://"+s.Addr()+"/ui/"), chromedp.WaitVisible(chromedp.CSS("#token-dialog")))
	if !eval[bool](b, ctx, `document.getElementById('token-dialog').open`) {
		t.Fatal("no token dialog")
	}
	b.shots(ctx, "token")
	b.do(ctx, "token", chromedp.SendKeys(chromedp.CSS("#token"), "s3cret-ui"), chromedp.Submit(chromedp.CSS("#token")),
		chromedp.WaitReady(chromedp.CSS("main .session")))
	b.do(ctx, "next view", chromedp.Navigate("http://"+s.Addr()+"/ui/?view=memories"), chromedp.WaitReady(chromedp.CSS("main .memory")))
	kept := eval[string](b, ctx, `sessionStorage.getItem('engram-token')`)
	if open := eval[bool](b, ctx, `document.getElementById('token-dialog').open`); kept != "s3cret-ui" || open {
		t.Errorf("the token is not kept for the tab: %q, dialog open %v", kept, open)
	}
	// The 401s of the first load are what asked for the token; after it,
	// no error.
	b.mu.Lock()
	var other []string
	for _, e := range b.errors {
		if !strings.Contains(e, "401") {
			other = append(other, e)
		}
	}
	b.errors = nil
	b.mu.Unlock()
	for _, e := range other {
		t.Errorf("token flow: %s", e)
	}
}

// TestWebViewSources: what a memory, a fact or a result stems from is shown
// as people and their words (speaker, time, the first words of the turn),
// each a link to the turn in its session, never as ids; a memory or a fact
// expands to its turns in place; a deep result's signals are explained in
// words on hover; and the text of a turn, however hostile, stays text.
func TestWebViewSources(t *testing.T) {
	b, s, ctx := startWebView(t, "log_level = \"warn\"\n")
	base := "http://" + s.Addr()

	// A turn whose speaker and words are HTML, with a memory drawn from it.
	const hostileSpeaker = `<b id="pwned-speaker">Eve</b>`
	const hostileContent = `I live in Rome. <img src=x id="pwned-content"> <script>window.pwned = 1</script>`
	if code := call(t, s, "POST", "/v1/turns", map[string]any{"id": "evil-1", "session": "evil", "speaker": hostileSpeaker,
		"ts": "2026-04-01T10:00:00Z", "content": hostileContent}, nil); code != 201 {
		t.Fatalf("post the hostile turn: %d", code)
	}
	for _, job := range []string{"l1-memories", "l4-graph"} {
		if code := call(t, s, "POST", "/v1/jobs/"+job+"/run", map[string]any{}, nil); code != 200 {
			t.Fatalf("run %s: %d", job, code)
		}
	}

	text := func(sel string) string { t.Helper(); return b.text(ctx, sel) }
	page := func(name, path, ready string) { t.Helper(); b.load(ctx, base, name, path, ready) }
	// firstSource is the first source link of the first item (an element
	// matching sel, and holding the text has): its speaker, time, words and
	// where it leads, and the item's whole text.
	type source struct{ Who, When, Words, Href, Item string }
	firstSource := func(sel, has string) source {
		t.Helper()
		return eval[source](b, ctx, fmt.Sprintf(`(() => {
			const item = [...document.querySelectorAll(%q)].find(e => e.textContent.includes(%q));
			if (!item) return {};
			const a = item.querySelector(".sources a.source");
			const q = (s) => (a && a.querySelector(s) || {}).textContent || "";
			return { Who: q(".who"), When: q("time"), Words: q("q"), Href: a ? a.getAttribute("href") : "", Item: item.textContent }; })()`,
			sel, has))
	}
	noIDs := func(what, text string) {
		t.Helper()
		for _, id := range []string{"ui-0", "evil-1"} {
			if strings.Contains(text, id) {
				t.Errorf("%s: shows the turn id %s: %q", what, id, text)
			}
		}
	}
	// expand presses the expand button of the first item matching sel and
	// waits for the turns it shows; false (and an error) without one.
	expand := func(what, sel string) bool {
		t.Helper()
		if !eval[bool](b, ctx, fmt.Sprintf(`!!document.querySelector(%q)`, sel+" .sources button.expand")) {
			t.Errorf("%s: no button expands the sources: %q", what, text(sel))
			return false
		}
		b.do(ctx, "expand "+what, chromedp.Click(chromedp.CSS(sel+" .sources button.expand")),
			chromedp.WaitVisible(chromedp.CSS(sel+" .source-turns .source-turn")))
		return true
	}

	// A memory: Ana's "I live in Paris", said on 2 March at 9:00 in the
	// session "trip", as turn ui-00.
	page("memories", "/ui/?view=memories&mq=Paris&superseded=true", "main .memory")
	src := firstSource(`main .memory`, "Paris")
	if src.Who != "Ana" || src.When != "2026-03-02 09:00 UTC" || !strings.HasPrefix(src.Words, "I live in Paris") {
		t.Errorf("a memory's source: %+v, want Ana, 2026-03-02 09:00 UTC, \"I live in Paris.\"", src)
	}
	if q, _ := url.ParseQuery(strings.TrimPrefix(src.Href, "./?")); q.Get("view") != "session" || q.Get("session") != "trip" || q.Get("turn") != "ui-00" {
		t.Errorf("a memory's source leads to %q, want the turn ui-00 in session trip", src.Href)
	}
	noIDs("memory", src.Item)
	// Expanded in place: the turn in full; pressed again, hidden.
	if expand("memory", "main .memory") {
		if got := text(`main .memory .source-turns .source-turn`); !strings.Contains(got, "Ana") || !strings.Contains(got, "I live in Paris.") ||
			eval[string](b, ctx, `document.querySelector("main .memory .sources button.expand").getAttribute("aria-expanded")`) != "true" {
			t.Errorf("the expanded memory: %q", got)
		}
		b.shots(ctx, "sources-expanded")
		b.do(ctx, "collapse", chromedp.Click(chromedp.CSS(`main .memory .sources button.expand`)),
			chromedp.WaitNotVisible(chromedp.CSS(`main .memory .source-turns`)))
	}
	// The link opens the session at that turn.
	if src.Href != "" {
		b.do(ctx, "open source", chromedp.Click(chromedp.CSS(`main .memory .sources a.source`)), chromedp.WaitReady(chromedp.CSS(".turn.hit")))
		if hit := eval[string](b, ctx, `document.querySelector(".turn.hit").id`); hit != "turn-ui-00" {
			t.Errorf("the source link opens %q, want turn-ui-00", hit)
		}
	}
	b.noErrors("memory sources")

	// A fact of the graph: Ana lives in Berlin, from her turn of 22 March.
	page("graph", "/ui/?view=graph&entity=Ana", "main table tbody tr")
	src = firstSource(`main table tbody tr`, "Berlin")
	if src.Who != "Ana" || !strings.HasPrefix(src.When, "2026-03-22") || !strings.HasPrefix(src.Words, "I live in Berlin now") {
		t.Errorf("a fact's source: %+v", src)
	}
	noIDs("fact", text("main table"))
	if expand("fact", "main table tbody tr") && !strings.Contains(text(`main table .source-turns`), "in its session") {
		t.Errorf("the expanded fact: %q", text(`main table .source-turns`))
	}
	b.noErrors("fact sources")

	// A memory as a search result, and a facet of the persona.
	page("search", "/ui/?q=favourite+book&kinds=memory", `.results li`)
	src = firstSource(`.results li[data-kind=memory]`, "Dune")
	if src.Who != "Ana" || !strings.Contains(src.Words, "Dune") || !strings.Contains(src.Href, "turn=ui-02") {
		t.Errorf("a result's source: %+v", src)
	}
	noIDs("result", text(".results"))
	page("persona", "/ui/?view=persona", "main .facet")
	noIDs("persona", text("main .facet"))
	if !strings.Contains(text("main .facet .sources a.source .who"), "Ana") {
		t.Errorf("persona sources: %q", text("main .facet"))
	}
	b.noErrors("result and persona sources")

	// Deep: every signal has its words on hover.
	page("deep", "/ui/?q=billing+database+decision&mode=deep", ".results li .signals")
	titles := eval[map[string]string](b, ctx, `Object.fromEntries([...document.querySelector(".results li .signals").querySelectorAll("[title]")]
		.map(e => [e.dataset.signal, e.title]))`)
	for _, n := range []string{"vector", "bm25", "session", "scene", "neighbour", "layer", "kg", "persona", "speaker", "decay", "final"} {
		if len(titles[n]) < 15 {
			t.Errorf("signal %s: hover text %q", n, titles[n])
		}
	}
	if bm := titles["bm25"]; !strings.Contains(bm, "the words of the question") {
		t.Errorf("bm25 says %q", bm)
	}
	page("deep with a time", "/ui/?q=what+did+Bo+do+yesterday&mode=deep", ".results li .signals")
	if got := eval[string](b, ctx, `(document.querySelector(".results li .signals [data-signal=in_range]") || {}).title || ""`); got == "" {
		t.Errorf("a question naming a time: no in_range signal in %q", text(".results li .signals"))
	}
	b.noErrors("signals")

	// The hostile turn: its speaker and words shown as text, nothing made
	// of them.
	page("hostile", "/ui/?view=memories&mq=Rome", "main .memory")
	expand("hostile", "main .memory")
	if n := eval[int](b, ctx, `document.querySelectorAll("#pwned-speaker, #pwned-content, main img, main script, main b").length`); n != 0 {
		t.Errorf("the hostile turn made %d elements: %s", n, eval[string](b, ctx, `document.querySelector("main").innerHTML`))
	}
	if got := text("main .memory .sources"); !strings.Contains(got, hostileSpeaker) || !strings.Contains(got, `<img src=x id="pwned-content">`) {
		t.Errorf("the hostile turn is not shown as text: %q", got)
	}
	b.noErrors("hostile")
}
