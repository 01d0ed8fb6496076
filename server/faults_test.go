package server_test

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/chroma"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/internal/vecrow"
	"github.com/engram-dev/engram/server"
)

// postTurn archives one turn through s and returns its id.
func postTurn(t *testing.T, s *server.Server, content string) string {
	t.Helper()
	var out struct{ IDs []string }
	if code := call(t, s, "POST", "/v1/turns", map[string]any{"session": "s1", "speaker": "Ana", "content": content}, &out); code != 201 || len(out.IDs) != 1 {
		t.Fatalf("POST /v1/turns: %d %+v", code, out)
	}
	return out.IDs[0]
}

// recallHTTP recalls query in mode (5 results) through s.
func recallHTTP(t *testing.T, s *server.Server, mode, query string) engram.RecallResponse {
	t.Helper()
	var resp engram.RecallResponse
	if code := call(t, s, "POST", "/v1/recall", map[string]any{"query": query, "mode": mode, "k": 5}, &resp); code != 200 {
		t.Fatalf("recall %s %q: %d", mode, query, code)
	}
	return resp
}

// has reports whether resp holds the result id.
func has(resp engram.RecallResponse, id string) bool {
	for _, r := range resp.Results {
		if r.ID == id {
			return true
		}
	}
	return false
}

// doctorHTTP asks s for the doctor's report (GET /v1/doctor); failed is
// whether a check must fail.
func doctorHTTP(t *testing.T, s *server.Server, failed bool) engram.DoctorReport {
	t.Helper()
	var rep engram.DoctorReport
	if code := call(t, s, "GET", "/v1/doctor", nil, &rep); code != 200 {
		t.Fatalf("GET /v1/doctor: %d", code)
	}
	if rep.Failed() != failed {
		t.Fatalf("doctor: failed %v, want %v:\n%s", rep.Failed(), failed, testutil.ReportText(rep))
	}
	return rep
}

// chromaCaughtUp waits until the doctor of s finds Chroma holding the n
// stored vectors with nothing left to push. Chroma's count reaches n
// before the sync records what it pushed (a vector pushed again under its
// id, a session's, counts once), and a sync that met Chroma down pushes
// again only when its backoff ends: the doctor says "N changes still to
// push" until then.
func chromaCaughtUp(t *testing.T, s *server.Server, n int) {
	t.Helper()
	want := fmt.Sprintf("holds the %d stored vectors", n)
	testutil.WaitUntil(t, "the doctor to find Chroma holding the "+strconv.Itoa(n)+" stored vectors, nothing to push", func() bool {
		_, ok := testutil.FindCheck(doctorHTTP(t, s, false), "chroma", "ok", want)
		return ok
	})
}

// reindexHTTP starts a reindex of the vectors through s (POST
// /v1/reindex), as `engram reindex vectors` does with a server running,
// and waits for it to end; it must succeed, and the doctor must find
// nothing failed after it.
func reindexHTTP(t *testing.T, s *server.Server, reembed bool) engram.ReindexStatus {
	t.Helper()
	var st engram.ReindexStatus
	if code := call(t, s, "POST", "/v1/reindex", map[string]any{"reembed": reembed}, &st); code != 202 && code != 200 {
		t.Fatalf("POST /v1/reindex: %d %+v", code, st)
	}
	testutil.WaitUntil(t, "the reindex", func() bool {
		st = engram.ReindexStatus{}
		call(t, s, "GET", "/v1/reindex", nil, &st)
		return st.State == engram.ReindexDone || st.State == engram.ReindexFailed
	})
	if st.State != engram.ReindexDone {
		t.Fatalf("reindex (reembed %v): %+v", reembed, st)
	}
	doctorHTTP(t, s, false)
	return st
}

// TestFaultVectorMemory makes the in-memory index of a running server
// disagree with SQLite, as a write behind its back does (an operator's
// sqlite3, a bug) or a damaged page does: rows deleted, one changed, one
// overwritten with an infinity. The doctor, through the server, reports the
// parity, the turns without a vector and the unusable one; a reindex of
// the vectors, through the server too, repairs them without a restart.
func TestFaultVectorMemory(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "extractor = \"none\"\n")
	s := startServer(t, home, nil)
	_, byTok := testutil.FaultTurns(20)
	ids := map[string]string{}
	for tok, c := range byTok {
		ids[tok] = postTurn(t, s, c)
	}
	// The turns' vectors and, once the follower embedded it, their session's.
	testutil.WaitUntil(t, "the session's vector", func() bool {
		_, ok := testutil.FindCheck(doctorHTTP(t, s, false), "vector-memory", "ok", "21 stored vectors")
		return ok
	})
	if code := call(t, s, "GET", "/v1/reindex", nil, nil); code != 404 {
		t.Errorf("GET /v1/reindex before any: %d", code)
	}

	db := testutil.OpenSQLite(t, filepath.Join(home, homedir.PalaceFile))
	testutil.MustExec(t, db, `DELETE FROM vectors WHERE id IN (?, ?)`, ids["zq0004"], ids["zq0009"])
	other := make([]float32, embedder.New().Dim())
	other[5] = 1
	testutil.MustExec(t, db, `UPDATE vectors SET vec = ? WHERE id = ?`, vecrow.Encode(nil, other), ids["zq0012"])
	inf := make([]float32, embedder.New().Dim())
	inf[0] = float32(math.Inf(1))
	testutil.MustExec(t, db, `UPDATE vectors SET vec = ? WHERE id = ?`, vecrow.Encode(nil, inf), ids["zq0015"])
	db.Close()

	rep := doctorHTTP(t, s, true)
	if c := testutil.MustFindCheck(t, rep, "vector-memory", "fail", "holds 21 vectors, SQLite 19", "2 only in memory", "1 with other values"); c.Fix != "engram reindex vectors" {
		t.Errorf("fix: %q", c.Fix)
	}
	testutil.MustFindCheck(t, rep, "vectors", "fail", "2 turns", "have no vector")
	testutil.MustFindCheck(t, rep, "vectors", "fail", "1 stored vector", ids["zq0015"]+" (turn): holds a value that is not finite")

	st := reindexHTTP(t, s, false)
	if st.Dropped != 1 || st.Embedded != 3 || st.Indexed != 21 {
		t.Fatalf("reindex: %+v; want 1 unusable dropped, 3 texts embedded, 21 loaded into memory", st)
	}
	testutil.MustFindCheck(t, doctorHTTP(t, s, false), "vector-memory", "ok", "21 stored vectors")
	for _, tok := range []string{"zq0004", "zq0009", "zq0015"} {
		if a := recallHTTP(t, s, "shallow", byTok[tok]); a.Mode != "shallow" || len(a.Results) == 0 || a.Results[0].ID != ids[tok] {
			t.Fatalf("recall of %s after reindex: %+v", tok, a)
		}
	}
	// The changed row keeps its wrong (but usable) vector in SQLite: only a
	// re-embed puts it right. The doctor cannot tell a wrong vector from a
	// right one; a re-embed is the cure for a model that changed too.
	if st = reindexHTTP(t, s, true); st.Embedded != 21 { // 20 turns and their session
		t.Fatalf("reindex with reembed through the server: %+v", st)
	}
	if a := recallHTTP(t, s, "shallow", byTok["zq0012"]); a.Mode != "shallow" || a.Results[0].ID != ids["zq0012"] {
		t.Fatalf("recall of the re-embedded turn: %+v", a)
	}
	st = engram.ReindexStatus{}
	if code := call(t, s, "GET", "/v1/reindex", nil, &st); code != 200 || st.State != "done" || !st.Reembed || st.Embedded != 21 {
		t.Fatalf("GET /v1/reindex: %d %+v", code, st)
	}
	var bad map[string]any
	if code := call(t, s, "POST", "/v1/reindex", map[string]any{"model": "x"}, &bad); code != 400 {
		t.Errorf("POST /v1/reindex with an unknown field: %d %v", code, bad)
	}
	testutil.MustFindCheck(t, doctorHTTP(t, s, false), "vector-memory", "ok", "21 stored vectors")
}

// chromaScript is scripts/chroma.sh, from this package's directory.
const chromaScript = "../scripts/chroma.sh"

// needChromaInstall skips in -short mode and fails, with what to run, when
// scripts/chroma.sh has not installed the server into the test cache.
func needChromaInstall(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a private Chroma server: skipped with -short")
	}
	cache := os.Getenv("ENGRAM_TEST_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		cache = filepath.Join(home, ".cache", "engram-test")
	}
	cli := filepath.Join(cache, "chroma", "node_modules", "chromadb", "dist", "cli.mjs")
	if _, err := os.Stat(cli); err != nil {
		t.Fatalf("the Chroma server is not installed (%v): run scripts/chroma.sh install (or make test), or -short to skip", err)
	}
}

// privateChroma is a Chroma server of this test alone, on its own port:
// the test stops and starts it, which it must never do to the shared server
// of ENGRAM_TEST_CHROMA_URL.
type privateChroma struct {
	port string
	url  string
}

func newPrivateChroma(t *testing.T) *privateChroma {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, err := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	if err != nil {
		t.Fatal(err)
	}
	c := &privateChroma{port: port, url: "http://127.0.0.1:" + port}
	t.Cleanup(func() { c.stop(t) })
	return c
}

// start starts the server on data (kept by the script) and waits until it
// answers.
func (c *privateChroma) start(t *testing.T, data string) {
	t.Helper()
	out, err := exec.Command(chromaScript, "start", c.port, data).CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/chroma.sh start %s %s: %v\n%s", c.port, data, err, out)
	}
}

func (c *privateChroma) stop(t *testing.T) {
	t.Helper()
	if out, err := exec.Command(chromaScript, "stop", c.port).CombinedOutput(); err != nil {
		t.Errorf("scripts/chroma.sh stop %s: %v\n%s", c.port, err, out)
	}
}

// count returns the vectors in the builtin model's collection, -1 while
// the server does not answer.
func (c *privateChroma) count(t *testing.T) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b := embedder.New()
	ix, err := chroma.Open(ctx, chroma.Config{URL: c.url, Model: b.Model(), Dim: b.Dim(), Timeout: 5 * time.Second})
	if err != nil {
		return -1
	}
	defer ix.Close()
	n, err := ix.Count(ctx)
	if err != nil {
		return -1
	}
	return n
}

// archivedIDs reads the ids of every complete, valid line in the archive
// files, as a reader independent of the server would (cat and jq style).
func archivedIDs(t *testing.T, home string) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(home, homedir.ArchiveDir), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			line := append(sc.Bytes(), '\n')
			turn, err := archive.DecodeLine(line)
			if err != nil {
				continue // a torn tail is quarantined at the next open
			}
			ids[turn.ID] = true
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestFaultChromaStopped stops the Chroma server of a serving engram:
// recall, shallow and deep, answers with a warning from the keyword index;
// ingest goes on; the doctor names the server to start. Started again on
// its data, Chroma receives the vectors it missed. Started empty, it
// receives only those, which the doctor sees and a reindex of the vectors
// repairs. No acknowledged turn is lost.
func TestFaultChromaStopped(t *testing.T) {
	needChromaInstall(t)
	ch := newPrivateChroma(t)
	data := t.TempDir()
	ch.start(t, data)
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "extractor = \"none\"\nvector_index = \"chroma\"\nchroma_url = \""+ch.url+"\"\n")
	s, stop := serve(t, home, nil)

	_, byTok := testutil.FaultTurns(31)
	ids := map[string]string{}
	tok := func(i int) string { return fmt.Sprintf("zq%04d", i) }
	for i := range 20 {
		ids[tok(i)] = postTurn(t, s, byTok[tok(i)])
	}
	// The turns' vectors, and that of their session (a retrieval unit,
	// embedded again as it grows under the same id).
	testutil.WaitUntil(t, "Chroma to hold 21 vectors", func() bool { return ch.count(t) == 21 })
	chromaCaughtUp(t, s, 21)

	ch.stop(t)
	a := recallHTTP(t, s, "shallow", byTok[tok(5)])
	if a.Mode != "keyword" || !has(a, ids[tok(5)]) || !strings.Contains(strings.Join(a.Warnings, " "), "vector search failed") {
		t.Fatalf("shallow recall with Chroma stopped: %+v", a)
	}
	a = recallHTTP(t, s, "deep", byTok[tok(6)])
	if a.Mode != "deep" || !has(a, ids[tok(6)]) || !strings.Contains(strings.Join(a.Warnings, " "), "keyword evidence only") {
		t.Fatalf("deep recall with Chroma stopped: %+v", a)
	}
	for i := 20; i < 30; i++ {
		ids[tok(i)] = postTurn(t, s, byTok[tok(i)])
	}
	if c := testutil.MustFindCheck(t, doctorHTTP(t, s, true), "chroma", "fail", ch.url, "unreachable"); !strings.HasPrefix(c.Fix, "chroma run --port "+ch.port) {
		t.Errorf("fix: %q", c.Fix)
	}

	// Back on the same data: the sync pushes what it missed.
	ch.start(t, data)
	testutil.WaitUntil(t, "Chroma to catch up to 31 vectors", func() bool { return ch.count(t) == 31 })
	chromaCaughtUp(t, s, 31)
	a = recallHTTP(t, s, "shallow", byTok[tok(25)])
	if a.Mode != "shallow" || len(a.Warnings) > 0 || len(a.Results) == 0 || a.Results[0].ID != ids[tok(25)] {
		t.Fatalf("shallow recall after Chroma came back: %+v", a)
	}

	// Back empty (a lost disk): only the vectors written since arrive.
	ch.stop(t)
	ch.start(t, t.TempDir())
	ids[tok(30)] = postTurn(t, s, byTok[tok(30)])
	// The new turn's vector, and its session's, embedded again. A push
	// may have met the server while it restarted: the doctor then says the
	// sync retries; once it caught up, that the server lost the others.
	testutil.WaitUntil(t, "Chroma to receive the new vectors", func() bool { return ch.count(t) == 2 })
	testutil.WaitUntil(t, "the sync to catch up", func() bool {
		var rep engram.DoctorReport
		call(t, s, "GET", "/v1/doctor", nil, &rep)
		_, behind := testutil.FindCheck(rep, "chroma", "warn", "changes behind")
		return !behind
	})
	if c := testutil.MustFindCheck(t, doctorHTTP(t, s, true), "chroma", "fail", "holds 2 vectors, SQLite 32"); c.Fix != "engram reindex vectors" {
		t.Errorf("fix: %q", c.Fix)
	}
	if st := reindexHTTP(t, s, false); st.Backend != config.VectorsChroma || st.Indexed != 32 {
		t.Fatalf("reindex vectors: %+v; want 32 pushed to a new Chroma collection", st)
	}
	if n := ch.count(t); n != 32 {
		t.Fatalf("Chroma holds %d vectors after the reindex, want 32", n)
	}
	testutil.MustFindCheck(t, doctorHTTP(t, s, false), "chroma", "ok", "holds the 32 stored vectors")
	a = recallHTTP(t, s, "shallow", byTok[tok(3)])
	if a.Mode != "shallow" || len(a.Warnings) > 0 || a.Results[0].ID != ids[tok(3)] {
		t.Fatalf("shallow recall after the reindex: %+v", a)
	}

	stop()
	archived := archivedIDs(t, home)
	for tk, id := range ids {
		if !archived[id] {
			t.Errorf("acknowledged turn %s (%s) is not in the archive", id, tk)
		}
	}
}
