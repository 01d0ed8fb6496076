package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/chroma"
	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/internal/vecrow"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/pipeline"
	"github.com/engram-dev/engram/recall"
)

// faultTurns returns n turns as JSONL, each with a unique token, and the
// contents by token.
func faultTurns(n int) (string, map[string]string) {
	var b strings.Builder
	contents := map[string]string{}
	topics := []string{"the billing database", "a trip to Lisbon", "the cat's vet visit", "the release checklist", "a sourdough recipe"}
	for i := range n {
		tok := fmt.Sprintf("zq%04d", i)
		c := fmt.Sprintf("note %s about %s, number %d", tok, topics[i%len(topics)], i)
		contents[tok] = c
		fmt.Fprintf(&b, `{"session":"s%d","speaker":"Ana","content":%q}`+"\n", i%3, c)
	}
	return b.String(), contents
}

// turnVectors returns the ids of the turn vectors with their turn's
// content, in seq order.
func turnVectors(t *testing.T, home string) (ids, contents []string) {
	t.Helper()
	db := openPalaceDB(t, home)
	defer db.Close()
	rows, err := db.Query(`SELECT v.id, t.content FROM vectors v JOIN turns t ON t.id = v.id WHERE v.kind = 'turn' ORDER BY t.seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, c string
		if err := rows.Scan(&id, &c); err != nil {
			t.Fatal(err)
		}
		ids, contents = append(ids, id), append(contents, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids, contents
}

// wantShallowHit recalls content in shallow mode through the CLI and wants
// turn id first, with no warning.
func wantShallowHit(t *testing.T, home, content, id string) {
	t.Helper()
	resp, r := recallJSON(t, home, "--mode", "shallow", "--k", "3", content)
	if resp.Mode != "shallow" || r.stderr != "" || len(resp.Results) == 0 || resp.Results[0].ID != id {
		t.Fatalf("shallow recall of %q: want %s first, got %+v (warnings %q)", content, id, resp, r.stderr)
	}
}

// TestFaultVectorIndex damages the stored vectors the ways a disk or a bug
// can, with no server running: NaN written over a vector, a BLOB cut short
// (past the CHECK constraint, as a damaged page would be), a zero vector,
// rows lost behind the watermark. The doctor reports each and names
// `engram reindex vectors`, which repairs them; then the doctor is clean and
// shallow recall finds the turns again. --reembed embeds everything again.
func TestFaultVectorIndex(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	jsonl, _ := faultTurns(30)
	if r := runCLI(t, home, jsonl, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	// The doctor lets the vector indexer catch up (ingest does not wait).
	rep, _ := runDoctor(t, home, 0)
	rep.mustFind(t, "vectors", "ok", "30 vectors")
	ids, contents := turnVectors(t, home)
	if len(ids) != 30 {
		t.Fatalf("%d turn vectors, want 30", len(ids))
	}

	dim := embedder.New().Dim()
	nan := make([]float32, dim)
	nan[0], nan[1] = 1, float32(math.NaN())
	db := openPalaceDB(t, home)
	mustExecDB(t, db, `UPDATE vectors SET vec = ? WHERE id = ?`, vecrow.Encode(nil, nan), ids[3])
	mustExecDB(t, db, `UPDATE vectors SET vec = ? WHERE id = ?`, vecrow.Encode(nil, make([]float32, dim)), ids[15])
	mustExecDB(t, db, `PRAGMA ignore_check_constraints = 1`)
	mustExecDB(t, db, `UPDATE vectors SET vec = x'0011223344' WHERE id = ?`, ids[7])
	mustExecDB(t, db, `PRAGMA ignore_check_constraints = 0`)
	mustExecDB(t, db, `DELETE FROM vectors WHERE id IN (?, ?)`, ids[10], ids[11])
	db.Close()

	rep, _ = runDoctor(t, home, 1)
	for _, c := range []doctorCheck{
		rep.mustFind(t, "vectors", "fail", "3 stored vectors", "unusable", ids[3]+" (turn): holds a value that is not finite",
			ids[7]+" (turn): 5 bytes", ids[15]+" (turn): all zeros"),
		rep.mustFind(t, "vectors", "fail", "2 turns up to seq 30 have no vector", ids[10]),
		rep.mustFind(t, "vectors", "fail", "vector recall is off"),
	} {
		if c.Fix != "engram reindex vectors" {
			t.Errorf("fix of %q: %q", c.Finding, c.Fix)
		}
	}
	// Meanwhile recall answers by keyword, and says why.
	resp, r := recallJSON(t, home, "--mode", "shallow", contents[10])
	if resp.Mode != "keyword" || !strings.Contains(r.stderr, "vector recall is off") {
		t.Fatalf("recall with damaged vectors: %+v %q", resp, r.stderr)
	}

	rep = reindexVectors(t, home, "dropped 3 unusable, embedded 5 texts, loaded 30 into memory")
	rep.mustFind(t, "vectors", "ok", "30 vectors")
	rep.mustFind(t, "vector-memory", "ok", "30 stored vectors")
	for _, i := range []int{3, 7, 10, 11, 15} {
		wantShallowHit(t, home, contents[i], ids[i])
	}

	// --reembed embeds the turns and, through the layer-vectors worker, the
	// retrieval units (the session and the scenes of the rules extractor).
	r = runCLI(t, home, "", "reindex", "vectors", "--reembed")
	if r.code != 0 || !strings.Contains(r.stdout, "dropped 0 unusable, embedded 33 texts, loaded 33 into memory") {
		t.Fatalf("reindex vectors --reembed: %+v", r)
	}
	rep, _ = runDoctor(t, home, 0)
	rep.mustFind(t, "vectors", "ok", "33 vectors (30 of turns)")
	wantShallowHit(t, home, contents[20], ids[20])
}

// postTurn archives one turn through a server and returns its id.
func postTurn(t *testing.T, s *server, content string) string {
	t.Helper()
	var out struct{ IDs []string }
	code, err := s.post(context.Background(), "/v1/turns", map[string]any{"session": "s1", "speaker": "Ana", "content": content}, &out)
	if err != nil || code != http.StatusCreated || len(out.IDs) != 1 {
		t.Fatalf("POST /v1/turns: %d %v %+v", code, err, out)
	}
	return out.IDs[0]
}

type recallAnswer struct {
	Mode     string   `json:"mode"`
	Warnings []string `json:"warnings"`
	Results  []struct {
		ID string `json:"id"`
	} `json:"results"`
}

func (a recallAnswer) has(id string) bool {
	for _, r := range a.Results {
		if r.ID == id {
			return true
		}
	}
	return false
}

func recallHTTP(t *testing.T, s *server, mode, query string) recallAnswer {
	t.Helper()
	var a recallAnswer
	code, err := s.post(context.Background(), "/v1/recall", map[string]any{"query": query, "mode": mode, "k": 5}, &a)
	if err != nil || code != http.StatusOK {
		t.Fatalf("recall %s %q: %d %v", mode, query, code, err)
	}
	return a
}

// TestFaultVectorMemory makes the in-memory index of a running server
// disagree with SQLite, as a write behind its back does (an operator's
// sqlite3, a bug) or a damaged page does: rows deleted, one changed, one
// overwritten with an infinity. The doctor, through the server, reports the
// parity, the turns without a vector and the unusable one; `engram reindex
// vectors`, through the server too, repairs them without a restart.
func TestFaultVectorMemory(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "extractor = \"none\"\n")
	s := startServer(t, home)
	defer s.stop(t)
	_, byTok := faultTurns(20)
	ids := map[string]string{}
	for tok, c := range byTok {
		ids[tok] = postTurn(t, s, c)
	}
	// The turns' vectors and, once the follower embedded it, their session's.
	waitFor(t, "the session's vector", func() bool {
		rep, _ := runDoctor(t, home, 0)
		_, ok := rep.find("vector-memory", "ok", "21 stored vectors")
		return ok
	})
	var st engram.ReindexStatus
	if code, _ := s.get(context.Background(), "/v1/reindex", &st); code != http.StatusNotFound {
		t.Errorf("GET /v1/reindex before any: %d", code)
	}

	db := openPalaceDB(t, home)
	mustExecDB(t, db, `DELETE FROM vectors WHERE id IN (?, ?)`, ids["zq0004"], ids["zq0009"])
	other := make([]float32, embedder.New().Dim())
	other[5] = 1
	mustExecDB(t, db, `UPDATE vectors SET vec = ? WHERE id = ?`, vecrow.Encode(nil, other), ids["zq0012"])
	nan := make([]float32, embedder.New().Dim())
	nan[0] = float32(math.Inf(1))
	mustExecDB(t, db, `UPDATE vectors SET vec = ? WHERE id = ?`, vecrow.Encode(nil, nan), ids["zq0015"])
	db.Close()

	rep, r := runDoctor(t, home, 1)
	if c := rep.mustFind(t, "vector-memory", "fail", "holds 21 vectors, SQLite 19", "2 only in memory", "1 with other values"); c.Fix != "engram reindex vectors" {
		t.Errorf("fix: %q", c.Fix)
	}
	rep.mustFind(t, "vectors", "fail", "2 turns", "have no vector")
	rep.mustFind(t, "vectors", "fail", "1 stored vector", ids["zq0015"]+" (turn): holds a value that is not finite")
	if !strings.Contains(runCLI(t, home, "", "doctor").stdout, "checked by the server") {
		t.Errorf("the doctor did not go through the server: %+v", r)
	}

	rep = reindexVectors(t, home, "dropped 1 unusable, embedded 3 texts, loaded 21 into memory")
	rep.mustFind(t, "vector-memory", "ok", "21 stored vectors")
	for _, tok := range []string{"zq0004", "zq0009", "zq0015"} {
		if a := recallHTTP(t, s, "shallow", byTok[tok]); a.Mode != "shallow" || len(a.Results) == 0 || a.Results[0].ID != ids[tok] {
			t.Fatalf("recall of %s after reindex: %+v", tok, a)
		}
	}
	// The changed row keeps its wrong (but usable) vector in SQLite: only a
	// re-embed puts it right. The doctor cannot tell a wrong vector from a
	// right one; --reembed is the cure for a model that changed too.
	r = runCLI(t, home, "", "reindex", "vectors", "--reembed")
	if r.code != 0 || !strings.Contains(r.stdout, "embedded 21 texts") { // 20 turns and their session
		t.Fatalf("reindex --reembed through the server: %+v", r)
	}
	if a := recallHTTP(t, s, "shallow", byTok["zq0012"]); a.Mode != "shallow" || a.Results[0].ID != ids["zq0012"] {
		t.Fatalf("recall of the re-embedded turn: %+v", a)
	}
	if code, err := s.get(context.Background(), "/v1/reindex", &st); err != nil || code != 200 || st.State != "done" || !st.Reembed || st.Embedded != 21 {
		t.Fatalf("GET /v1/reindex: %d %v %+v", code, err, st)
	}
	var bad map[string]any
	if code, _ := s.post(context.Background(), "/v1/reindex", map[string]any{"model": "x"}, &bad); code != http.StatusBadRequest {
		t.Errorf("POST /v1/reindex with an unknown field: %d %v", code, bad)
	}
	rep, _ = runDoctor(t, home, 0)
	rep.mustFind(t, "vector-memory", "ok", "21 stored vectors")
}

// chromaScript is scripts/chroma.sh, from this package's directory.
const chromaScript = "../../scripts/chroma.sh"

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
	_, port, err := net.SplitHostPort(freeAddr(t))
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

// TestFaultChromaStopped stops the Chroma server of a serving engram:
// recall, shallow and deep, answers with a warning from the keyword index;
// ingest goes on; the doctor names the server to start. Started again on
// its data, Chroma receives the vectors it missed. Started empty, it
// receives only those, which the doctor sees and `engram reindex vectors`
// repairs. No acknowledged turn is lost.
func TestFaultChromaStopped(t *testing.T) {
	needChromaInstall(t)
	ch := newPrivateChroma(t)
	data := t.TempDir()
	ch.start(t, data)
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "extractor = \"none\"\nvector_index = \"chroma\"\nchroma_url = \""+ch.url+"\"\n")
	s := startServer(t, home) // stopped at the end; killed by its cleanup if the test fails first

	_, byTok := faultTurns(31)
	ids := map[string]string{}
	tok := func(i int) string { return fmt.Sprintf("zq%04d", i) }
	for i := range 20 {
		ids[tok(i)] = postTurn(t, s, byTok[tok(i)])
	}
	// The turns' vectors, and that of their session (a retrieval unit,
	// embedded again as it grows under the same id).
	waitFor(t, "Chroma to hold 21 vectors", func() bool { return ch.count(t) == 21 })
	rep, _ := runDoctor(t, home, 0)
	rep.mustFind(t, "chroma", "ok", "holds the 21 stored vectors")

	ch.stop(t)
	a := recallHTTP(t, s, "shallow", byTok[tok(5)])
	if a.Mode != "keyword" || !a.has(ids[tok(5)]) || !strings.Contains(strings.Join(a.Warnings, " "), "vector search failed") {
		t.Fatalf("shallow recall with Chroma stopped: %+v", a)
	}
	a = recallHTTP(t, s, "deep", byTok[tok(6)])
	if a.Mode != "deep" || !a.has(ids[tok(6)]) || !strings.Contains(strings.Join(a.Warnings, " "), "keyword evidence only") {
		t.Fatalf("deep recall with Chroma stopped: %+v", a)
	}
	for i := 20; i < 30; i++ {
		ids[tok(i)] = postTurn(t, s, byTok[tok(i)])
	}
	rep, _ = runDoctor(t, home, 1)
	if c := rep.mustFind(t, "chroma", "fail", ch.url, "unreachable"); !strings.HasPrefix(c.Fix, "chroma run --port "+ch.port) {
		t.Errorf("fix: %q", c.Fix)
	}

	// Back on the same data: the sync pushes what it missed.
	ch.start(t, data)
	waitFor(t, "Chroma to catch up to 31 vectors", func() bool { return ch.count(t) == 31 })
	rep, _ = runDoctor(t, home, 0)
	rep.mustFind(t, "chroma", "ok", "holds the 31 stored vectors")
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
	waitFor(t, "Chroma to receive the new vectors", func() bool { return ch.count(t) == 2 })
	waitFor(t, "the sync to catch up", func() bool {
		r := runCLI(t, home, "", "doctor", "--json")
		var rep doctorReport
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("doctor --json: %v\n%+v", err, r)
		}
		_, behind := rep.find("chroma", "warn", "changes behind")
		return !behind
	})
	rep, _ = runDoctor(t, home, 1)
	if c := rep.mustFind(t, "chroma", "fail", "holds 2 vectors, SQLite 32"); c.Fix != "engram reindex vectors" {
		t.Errorf("fix: %q", c.Fix)
	}
	if r := runCLI(t, home, "", "reindex", "vectors"); r.code != 0 || !strings.Contains(r.stdout, "pushed 32 to a new Chroma collection") {
		t.Fatalf("reindex vectors: %+v", r)
	}
	if n := ch.count(t); n != 32 {
		t.Fatalf("Chroma holds %d vectors after the reindex, want 32", n)
	}
	rep, _ = runDoctor(t, home, 0)
	rep.mustFind(t, "chroma", "ok", "holds the 32 stored vectors")
	a = recallHTTP(t, s, "shallow", byTok[tok(3)])
	if a.Mode != "shallow" || len(a.Warnings) > 0 || a.Results[0].ID != ids[tok(3)] {
		t.Fatalf("shallow recall after the reindex: %+v", a)
	}

	s.stop(t)
	archived := archivedIDs(t, home)
	for tk, id := range ids {
		if !archived[id] {
			t.Errorf("acknowledged turn %s (%s) is not in the archive", id, tk)
		}
	}
}

// fullDisk is the archive's file system with a disk that fills up on
// demand: a write then stores what fits (a third of it) and fails with
// ENOSPC, as write(2) does on a full disk.
type fullDisk struct {
	archive.OSFS
	full atomic.Bool
}

func (d *fullDisk) OpenFile(name string, flag int, perm fs.FileMode) (archive.File, error) {
	f, err := d.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &fullFile{File: f, d: d}, nil
}

type fullFile struct {
	archive.File
	d *fullDisk
}

func (f *fullFile) Write(p []byte) (int, error) {
	if !f.d.full.Load() {
		return f.File.Write(p)
	}
	n, err := f.File.Write(p[:len(p)/3])
	if err != nil {
		return n, err
	}
	return n, &fs.PathError{Op: "write", Path: "archive", Err: syscall.ENOSPC}
}

var _ archive.FS = (*fullDisk)(nil)

// reindexVectors runs `engram reindex vectors` in home, which must succeed
// and say want, and returns the doctor's report after it, which must find
// nothing failed.
func reindexVectors(t *testing.T, home, want string) doctorReport {
	t.Helper()
	r := runCLI(t, home, "", "reindex", "vectors")
	if r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Fatalf("reindex vectors: %+v", r)
	}
	rep, _ := runDoctor(t, home, 0)
	if f := rep.failed(); len(f) > 0 {
		t.Fatalf("doctor after reindex:\n%s", rep)
	}
	return rep
}

// statusOf is the StatusService of the in-process stack.
type statusOf struct {
	a  *archive.Archive
	ix *pipeline.Indexer
	p  *palace.DB
}

func (s statusOf) Health(context.Context) engram.Health {
	return engram.Health{Status: "ok", ArchiveSeq: s.a.LastSeq(), IndexedSeq: s.ix.Indexed(), IndexLag: s.ix.Lag()}
}
func (s statusOf) Stats(ctx context.Context) (engram.Stats, error) { return s.p.Stats(ctx) }

// TestFaultDiskFull fills the disk under the archive while eight clients
// post turns, then frees it, several times. It runs in process (archive,
// palace, indexer and the HTTP API of httpapi on loopback): the archive's
// file-ops seam cannot reach into an `engram serve` process without a
// test-only flag. Every refused request answers 507 no_space with a clear
// message; every acknowledged turn is in the archive after a restart, once;
// the archive verifies clean (a failed write is cut back, no torn line).
func TestFaultDiskFull(t *testing.T) {
	dir := t.TempDir()
	disk := &fullDisk{}
	ctx := context.Background()
	a, err := archive.Open(filepath.Join(dir, "archive"), archive.Options{FS: disk})
	if err != nil {
		t.Fatal(err)
	}
	p, err := palace.Open(filepath.Join(dir, "palace.db"), palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ix := pipeline.NewIndexer(a, p)
	if err := ix.Open(ctx); err != nil {
		t.Fatal(err)
	}
	srv, err := httpapi.New(httpapi.Config{Addr: "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs := recall.NewService(p)
	rs.Sync = ix.WaitCurrent
	srv.Ingest, srv.Recall, srv.Status = &pipeline.Ingester{Archive: a, Indexer: ix}, rs, statusOf{a, ix, p}
	ts := httptest.NewServer(srv.Handler())

	var (
		mu       sync.Mutex
		acked    = map[string]string{} // id -> token
		refused  atomic.Int64
		answered atomic.Int64
		next     atomic.Int64
	)
	stop := testutil.Writers(t, 8, func(_, _ int) bool {
		n := 1 + int(next.Load()%4)
		toks := make([]string, n)
		turns := make([]map[string]any, n)
		for i := range turns {
			toks[i] = fmt.Sprintf("df%07d", next.Add(1))
			turns[i] = map[string]any{"session": "disk", "content": "disk full test turn " + toks[i]}
		}
		body, _ := json.Marshal(map[string]any{"turns": turns})
		resp, err := http.Post(ts.URL+"/v1/turns", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Errorf("POST: %v", err)
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusCreated:
			var out struct{ IDs []string }
			if err := json.Unmarshal(b, &out); err != nil || len(out.IDs) != n {
				t.Errorf("201 answer %s: %v", b, err)
				return false
			}
			mu.Lock()
			for i, id := range out.IDs {
				acked[id] = toks[i]
			}
			mu.Unlock()
			answered.Add(1)
		case http.StatusInsufficientStorage:
			var e struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal(b, &e); err != nil || e.Error.Code != engram.ENOSPACE ||
				e.Error.Message != "the disk holding the archive is full; nothing was archived" {
				t.Errorf("507 answer: %s", b)
				return false
			}
			refused.Add(1)
		default:
			t.Errorf("POST /v1/turns answered %d: %s", resp.StatusCode, b)
			return false
		}
		return true
	})
	for cycle := range 5 {
		ok0 := answered.Load()
		waitFor(t, "turns to be acknowledged", func() bool { return answered.Load() >= ok0+20 || t.Failed() })
		disk.full.Store(true)
		no0 := refused.Load()
		waitFor(t, "the full disk to refuse turns", func() bool { return refused.Load() >= no0+10 || t.Failed() })
		disk.full.Store(false)
		t.Logf("cycle %d: %d acknowledged, %d refused", cycle, answered.Load(), refused.Load())
	}
	ok0 := answered.Load()
	waitFor(t, "turns to be acknowledged after the last cycle", func() bool { return answered.Load() >= ok0+20 || t.Failed() })
	stop()
	ts.Close()
	if err := ix.Close(); err != nil {
		t.Error(err)
	}
	if err := p.Close(); err != nil {
		t.Error(err)
	}
	if err := a.Close(); err != nil {
		t.Error(err)
	}
	if t.Failed() {
		return
	}

	// The restart, on the real file system.
	b, err := archive.Open(filepath.Join(dir, "archive"), archive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rep, err := b.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("archive after the full disks: %+v %v", rep.Problems, err)
	}
	seen := map[string]int{}
	err = b.Stream(ctx, 0, func(turn engram.Turn) error {
		seen[turn.ID]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, tk := range acked {
		if seen[id] != 1 {
			t.Errorf("acknowledged turn %s (%s) is in the archive %d times", id, tk, seen[id])
		}
	}
	if int64(len(seen)) != rep.Turns || len(seen) != len(acked) {
		t.Errorf("the archive holds %d turns (%d ids), %d were acknowledged: a refused turn was archived", rep.Turns, len(seen), len(acked))
	}
	q, err := palace.Open(filepath.Join(dir, "palace.db"), palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ix = pipeline.NewIndexer(b, q)
	if err := ix.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if n, err := q.CountTurns(ctx, ""); err != nil || n != int64(len(acked)) {
		t.Errorf("the palace holds %d turns, %d were acknowledged (%v)", n, len(acked), err)
	}
	t.Logf("%d turns acknowledged, %d requests refused with 507", len(acked), refused.Load())
}
