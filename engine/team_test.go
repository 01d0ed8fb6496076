package engine_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/chroma"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/internal/filetest"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/internal/testutil"
)

// teamConfig is the configuration of a server with its palace in home and
// the archive in the PostgreSQL database at url, with the builtin
// embedder, so that a forget has vectors to drop too.
func teamConfig(home, url string) config.Config {
	cfg := testConfig(home)
	cfg.Embedder = config.EmbedderBuiltin
	cfg.Store = config.StorePostgres
	return cfg.WithPostgresURL(url)
}

// finds reports whether a keyword recall on e finds a result holding text.
func finds(t *testing.T, e *engine.Engine, query, text string) bool {
	t.Helper()
	resp, err := e.Recall(t.Context(), engram.RecallRequest{Namespace: engram.DefaultNamespace, Query: query, Mode: engram.ModeKeyword, K: 10})
	if err != nil {
		t.Fatalf("recall %q: %v", query, err)
	}
	for _, r := range resp.Results {
		if strings.Contains(r.Text, text) {
			return true
		}
	}
	return false
}

// TestTwoServers runs two engines on one PostgreSQL archive, each with a
// home of its own: a turn ingested on A is found on B; a forget on B
// reaches A's palace, which keeps no trace of the text; with A closed, B
// keeps serving and ingesting.
func TestTwoServers(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	homeA, homeB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	a, err := engine.Open(ctx, teamConfig(homeA, url), quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { a.Close() }() // A is closed below, and opened again
	b, err := engine.Open(ctx, teamConfig(homeB, url), quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	if _, err := a.Ingest(ctx, []engram.Turn{
		{ID: "t1", Namespace: engram.DefaultNamespace, Session: "s1", Speaker: "Ana", Role: "user", Content: "the vault code is zorblatt-7781, keep it"},
		{ID: "t2", Namespace: engram.DefaultNamespace, Session: "s1", Speaker: "Ana", Role: "user", Content: "the vault opens on Fridays"},
	}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitUntil(t, "B to find the turn ingested on A", func() bool { return finds(t, b, "vault code", "zorblatt-7781") })
	if !finds(t, a, "vault code", "zorblatt-7781") {
		t.Fatal("A does not find the turn it ingested")
	}

	rep, err := b.Forget(ctx, engram.ForgetRequest{IDs: []string{"t1"}, Reason: "test"})
	if err != nil || len(rep.Turns) != 1 {
		t.Fatalf("forget on B: %+v, %v", rep, err)
	}
	if finds(t, b, "vault code", "zorblatt") {
		t.Fatal("B still finds the turn it forgot")
	}
	testutil.WaitUntil(t, "B's forget to reach A's palace", func() bool { return a.RewritesApplied() > 0 })
	if finds(t, a, "vault code", "zorblatt") {
		t.Fatal("A still finds the turn B forgot")
	}
	if !finds(t, a, "vault opens", "Fridays") {
		t.Fatal("A lost the turn B did not forget")
	}
	// Checked once A is closed, as the forget tests of one home do: while
	// it runs, a write that follows a forget may still carry the text in
	// a page (a local forget shows it too).
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	filetest.MustHoldNowhere(t, homeA, "zorblatt")

	// A is gone: B serves on, and takes writes.
	if _, err := b.Ingest(ctx, []engram.Turn{{ID: "t3", Namespace: engram.DefaultNamespace, Session: "s2", Speaker: "Bo", Role: "user", Content: "the kiln fires at noon"}}); err != nil {
		t.Fatalf("ingest on B with A closed: %v", err)
	}
	if !finds(t, b, "kiln fires", "noon") || !finds(t, b, "vault opens", "Fridays") {
		t.Fatal("B does not find its turns with A closed")
	}

	// A's palace rebuilt from the shared archive: B's turn in, the
	// forgotten one nowhere; what works on a home's files only says so.
	rebuildHome(t, teamConfig(homeA, url))
	filetest.MustHoldNowhere(t, homeA, "zorblatt")
	if _, err := engine.RepairArchive(ctx, teamConfig(homeA, url), quiet()); engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(err.Error(), "pg_dump") {
		t.Errorf("repair with the archive in PostgreSQL: %v", err)
	}
	a, err = engine.Open(ctx, teamConfig(homeA, url), quiet())
	if err != nil {
		t.Fatal(err)
	}
	if !finds(t, a, "kiln fires", "noon") || finds(t, a, "vault code", "zorblatt") {
		t.Fatal("A's rebuilt palace is not the archive's")
	}
	_, err = a.Backup(ctx, engram.BackupRequest{Dir: filepath.Join(t.TempDir(), "backup")})
	if engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(err.Error(), "pg_dump") || !strings.Contains(err.Error(), "engram archive export") {
		t.Errorf("backup with the archive in PostgreSQL: %v", err)
	}
}

// BenchmarkTeamDelay measures the delay from A's acknowledgement of a turn
// to a keyword recall on B finding it, over 200 turns one at a time (the
// recall on B asked again and again until it does), on one PostgreSQL
// archive. It reports the median and the p99 (ms) of the last run.
//
//	go test ./engine -run '^$' -bench BenchmarkTeamDelay -benchtime 1x
func BenchmarkTeamDelay(b *testing.B) {
	const turns = 200
	url := pgtest.NewDatabase(b)
	ctx := b.Context()
	open := func(name string) *engine.Engine {
		cfg := teamConfig(filepath.Join(b.TempDir(), name), url)
		cfg.Embedder = config.EmbedderNone
		return openTeam(b, cfg)
	}
	a, srvB := open("a"), open("b")
	var delays []time.Duration
	for range b.N {
		delays = delays[:0]
		for i := range turns {
			word := fmt.Sprintf("quokka%dx%d", i, time.Now().UnixNano())
			if _, err := a.Ingest(ctx, []engram.Turn{{Namespace: engram.DefaultNamespace, Session: "s", Speaker: "Ana", Role: "user",
				Content: "the delay probe " + word}}); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			for {
				resp, err := srvB.Recall(ctx, engram.RecallRequest{Namespace: engram.DefaultNamespace, Query: word, Mode: engram.ModeKeyword, K: 1})
				if err != nil {
					b.Fatal(err)
				}
				if len(resp.Results) > 0 && strings.Contains(resp.Results[0].Text, word) {
					break
				}
			}
			delays = append(delays, time.Since(start))
		}
	}
	slices.Sort(delays)
	b.ReportMetric(float64(delays[len(delays)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(delays[len(delays)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(delays[len(delays)-1].Microseconds())/1000, "max-ms")
}

// teamURLEnv passes the database of TestTwoServers_KillA to its child,
// teamPrefixEnv the prefix of the ids it writes and teamPalaceEnv where
// its palace is (config.Palace).
const (
	teamURLEnv    = "ENGRAM_TEST_TEAM_URL"
	teamPrefixEnv = "ENGRAM_TEST_TEAM_PREFIX"
	teamPalaceEnv = "ENGRAM_TEST_TEAM_PALACE"
)

// teamIngest is the child of TestTwoServers_KillA: a server on home and
// the archive at url (and the palace there with palace = "postgres")
// that ingests turns one at a time, without end, and prints each one's id
// once it is acknowledged.
func teamIngest(ctx context.Context, home, url, prefix, palace string) error {
	cfg := teamConfig(home, url)
	cfg.Embedder = config.EmbedderNone
	cfg.Palace = palace
	e, err := engine.Open(ctx, cfg, quiet())
	if err != nil {
		return err
	}
	defer e.Close()
	for i := 0; ; i++ {
		id := fmt.Sprintf("%s%06d", prefix, i)
		if _, err := e.Ingest(ctx, []engram.Turn{{ID: id, Namespace: engram.DefaultNamespace, Session: "k", Speaker: "Ana", Role: "user",
			Content: fmt.Sprintf("kill probe %s wombat", id)}}); err != nil {
			return err
		}
		if _, err := fmt.Println(id); err != nil {
			return err
		}
	}
}

// teamKills is how many times TestTwoServers_KillA kills A: a few in make
// test, ENGRAM_TEST_TEAM_KILLS for the long loop of issue 41's target.
func teamKills(t *testing.T) int {
	if v := os.Getenv("ENGRAM_TEST_TEAM_KILLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("ENGRAM_TEST_TEAM_KILLS=%q: want a count of 1 or more", v)
		}
		return n
	}
	return 3
}

// TestTwoServers_KillA kills server A (a process of its own, restarted on
// its home each time, as a service manager would) while it ingests, again
// and again, each time after a different number of acknowledged turns:
// every turn A acknowledged is in the archive and found on B, and B keeps
// serving and ingesting throughout. With each server's palace in its home,
// and with the one palace in the database both share.
func TestTwoServers_KillA(t *testing.T) {
	for _, palace := range []string{config.PalaceHome, config.PalacePostgres} {
		t.Run("palace="+palace, func(t *testing.T) { killLoop(t, palace) })
	}
}

func killLoop(t *testing.T, palace string) {
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	cfgB := teamConfig(filepath.Join(t.TempDir(), "b"), url)
	cfgB.Embedder = config.EmbedderNone
	cfgB.Palace = palace
	b, err := engine.Open(ctx, cfgB, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	homeA := filepath.Join(t.TempDir(), "a")
	kills := teamKills(t)
	var ids, onB []string
	for round := range kills {
		ids = append(ids, killA(t, homeA, url, palace, fmt.Sprintf("k%03d-", round), 1+round*37%97)...)
		id := fmt.Sprintf("b%03d", round)
		if _, err := b.Ingest(ctx, []engram.Turn{{ID: id, Namespace: engram.DefaultNamespace, Session: "s", Speaker: "Bo", Role: "user",
			Content: "the kiln fires at noon " + id}}); err != nil {
			t.Fatalf("ingest on B after A was killed %d times: %v", round+1, err)
		}
		onB = append(onB, id)
	}
	testutil.WaitUntil(t, "B to index every turn A acknowledged", func() bool {
		h := b.Health(ctx)
		return h.IndexLag == 0 && h.IndexedSeq >= b.LastSeq()
	})
	for _, id := range append(ids, onB...) {
		if !finds(t, b, id, id) {
			t.Fatalf("turn %s, acknowledged before a kill of A, is not found on B (%d acknowledged by A in %d kills)", id, len(ids), kills)
		}
	}
	t.Logf("%d turns acknowledged by A, all found on B, over %d SIGKILLs of A mid-write (palace = %q)", len(ids), kills, palace)
}

// killA runs server A on home, a child process ingesting ids of prefix
// without pause, kills it (SIGKILL) once it acknowledged after turns, and
// returns every id it acknowledged.
func killA(t *testing.T, home, url, palace, prefix string, after int) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=team-ingest", "ENGRAM_HOME="+home, teamURLEnv+"="+url, teamPrefixEnv+"="+prefix, teamPalaceEnv+"="+palace)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, done: make(chan struct{})}
	acked := make(chan string, 1<<16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			acked <- sc.Text()
		}
		cmd.Wait()
		close(c.done)
		close(acked)
	}()
	defer c.kill()
	var ids []string
	for id := range acked {
		if ids = append(ids, id); len(ids) == after {
			break
		}
	}
	if len(ids) < after {
		t.Fatalf("A stopped after %d turns: %s", len(ids), stderr.String())
	}
	c.kill() // mid-write: it ingests without pause
	for id := range acked {
		ids = append(ids, id)
	}
	return ids
}

// TestTwoServers_Redact redacts on B a secret A ingested and derived
// memories from: A's recall no longer finds it and, once A is closed, its
// home holds it nowhere. A redaction made on B while A is closed reaches
// A's palace when A opens again.
func TestTwoServers_Redact(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	homeA := filepath.Join(t.TempDir(), "a")
	cfgA := teamConfig(homeA, url)
	cfgA.Extractor = config.ExtractorRules
	a, err := engine.Open(ctx, cfgA, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { a.Close() }() // A is closed below, and opened again
	b, err := engine.Open(ctx, teamConfig(filepath.Join(t.TempDir(), "b"), url), quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	if _, err := a.Ingest(ctx, []engram.Turn{
		{ID: "t1", Namespace: engram.DefaultNamespace, Session: "s1", Speaker: "Ana", Role: "user", Content: "I live in Plumbixville."},
		{ID: "t2", Namespace: engram.DefaultNamespace, Session: "s1", Speaker: "Ana", Role: "user", Content: "I work at Quobbletech."},
		{ID: "t3", Namespace: engram.DefaultNamespace, Session: "s1", Speaker: "Ana", Role: "user", Content: "The kiln fires at noon."},
	}); err != nil {
		t.Fatal(err)
	}
	if err := a.RunAll(ctx); err != nil { // A's memories, scenes, graph, of the secrets too
		t.Fatal(err)
	}
	if !memoryHolds(t, a, "Plumbixville") {
		t.Fatal("A derived no memory of the secret: the test would not see one redacted")
	}
	testutil.WaitUntil(t, "B to find the turns ingested on A", func() bool { return finds(t, b, "work", "Quobbletech") })

	rep, err := b.Redact(ctx, engram.RedactRequest{Texts: []string{"Plumbixville"}, Marker: "[secret]", Reason: "test"})
	if err != nil || len(rep.Turns) != 1 {
		t.Fatalf("redact on B: %+v, %v", rep, err)
	}
	testutil.WaitUntil(t, "B's redaction to reach A's palace", func() bool { return a.RewritesApplied() > 0 })
	if finds(t, a, "live", "Plumbix") {
		t.Fatal("A still finds the span B redacted")
	}
	if !finds(t, a, "live", "[secret]") {
		t.Fatal("A does not find the redacted turn")
	}
	if memoryHolds(t, a, "Plumbix") || !memoryHolds(t, a, "[secret]") {
		t.Fatal("A's memories are not redacted as B's")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	filetest.MustHoldNowhere(t, homeA, "Plumbix", "plumbix")

	// With A closed, B redacts the other secret: A's palace gets it at
	// its next Open.
	if rep, err := b.Redact(ctx, engram.RedactRequest{Texts: []string{"Quobbletech"}}); err != nil || len(rep.Turns) != 1 {
		t.Fatalf("redact on B with A closed: %+v, %v", rep, err)
	}
	a, err = engine.Open(ctx, cfgA, quiet())
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitUntil(t, "the redaction made while A was closed to reach A's palace", func() bool { return a.RewritesApplied() > 0 })
	if finds(t, a, "work", "Quobble") || memoryHolds(t, a, "Quobble") || !finds(t, a, "kiln fires", "noon") {
		t.Fatal("A's palace is not the archive's after its Open")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	filetest.MustHoldNowhere(t, homeA, "Plumbix", "plumbix", "Quobble", "quobble")
	// Nor does the database: the journal records how, not what.
	pgtest.MustHoldNowhere(t, url, "Plumbix", "Quobble")
}

// memoryHolds reports whether a memory of e (superseded ones included)
// holds text.
func memoryHolds(t *testing.T, e *engine.Engine, text string) bool {
	t.Helper()
	mems, err := e.Memories(t.Context(), engram.MemoryQuery{Superseded: true, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mems {
		if strings.Contains(fmt.Sprintf("%+v", m), text) {
			return true
		}
	}
	return false
}

// TestTwoServers_SharedJobs: the archive's verification, a job over the
// shared archive, runs on one server an interval: B leaves it to A's run
// of the interval, and takes it once the interval has passed.
func TestTwoServers_SharedJobs(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	a, b := openTeam(t, teamConfig(filepath.Join(t.TempDir(), "a"), url)), openTeam(t, teamConfig(filepath.Join(t.TempDir(), "b"), url))
	if _, err := a.Ingest(ctx, []engram.Turn{{ID: "t1", Namespace: engram.DefaultNamespace, Session: "s1", Speaker: "Ana", Role: "user", Content: "the kiln fires at noon"}}); err != nil {
		t.Fatal(err)
	}
	db, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	lastRun := func() (at time.Time) {
		t.Helper()
		if err := db.QueryRow(ctx, `SELECT last_run FROM team_jobs WHERE name = $1 AND last_success = last_run`, config.JobVerify).Scan(&at); err != nil {
			t.Fatalf("the job's record: %v", err)
		}
		return at
	}
	run := func(e *engine.Engine) {
		t.Helper()
		st, err := e.RunJob(ctx, config.JobVerify)
		if err != nil || st.LastError != "" {
			t.Fatalf("run %s: %+v %v", config.JobVerify, st, err)
		}
	}
	run(a)
	first := lastRun()
	run(b)
	if again := lastRun(); !again.Equal(first) {
		t.Fatalf("B verified the archive again within the interval: runs at %v and %v", first, again)
	}
	if _, err := db.Exec(ctx, `UPDATE team_jobs SET last_run = last_run - interval '2 days', last_success = last_success - interval '2 days'`); err != nil {
		t.Fatal(err)
	}
	run(b)
	if again := lastRun(); !again.After(first) {
		t.Fatalf("B did not verify the archive once the interval had passed: last run %v", again)
	}
}

// TestTwoServers_SharedVectors: a turn's vector is embedded once for the
// servers of an archive: B, opened after A embedded the turns, takes their
// vectors from the shared table rather than embedding them. To tell, one
// stored vector is replaced by the vector of an unrelated text: B's vector
// recall of that text then finds the turn, which it could not had B
// embedded the turn's own words.
func TestTwoServers_SharedVectors(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	a := openTeam(t, teamConfig(filepath.Join(t.TempDir(), "a"), url))
	turns := []engram.Turn{
		{ID: "t1", Namespace: engram.DefaultNamespace, Session: "s1", Speaker: "Ana", Role: "user", Content: "the kiln fires at noon"},
		{ID: "t2", Namespace: engram.DefaultNamespace, Session: "s1", Speaker: "Ana", Role: "user", Content: "my sister repairs old bicycles"},
		{ID: "t3", Namespace: engram.DefaultNamespace, Session: "s1", Speaker: "Bo", Role: "user", Content: "we painted the fence blue on Sunday"},
	}
	res, err := a.Ingest(ctx, turns)
	if err != nil {
		t.Fatal(err)
	}
	db, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	testutil.WaitUntil(t, "A's vectors in the shared table", func() bool {
		var n int
		return db.QueryRow(ctx, `SELECT count(*) FROM archive_vectors`).Scan(&n) == nil && n == len(turns)
	})
	const probe = "zebras graze across the savanna at dusk"
	emb := embedder.New()
	vecs, err := emb.Embed(ctx, []string{probe})
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 4*len(vecs[0]))
	for i, x := range vecs[0] {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	tag, err := db.Exec(ctx, `UPDATE archive_vectors SET vec = $1 WHERE seq = $2`, raw, res.Turns[1].Seq)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("replace t2's vector: %v %v", tag, err)
	}

	b := openTeam(t, teamConfig(filepath.Join(t.TempDir(), "b"), url))
	testutil.WaitUntil(t, "B's vector recall of the probe to find t2", func() bool {
		resp, err := b.Recall(ctx, engram.RecallRequest{Namespace: engram.DefaultNamespace, Query: probe, Mode: engram.ModeShallow, K: 1})
		return err == nil && len(resp.Results) == 1 && resp.Results[0].ID == "t2"
	})
}

// TestTwoServers_Chroma: with each server's vectors in a Chroma database
// of its own (palace = "home"), a turn ingested on A reaches B's
// collection, and a forget on B takes the turn's vector out of A's.
func TestTwoServers_Chroma(t *testing.T) {
	env := testutil.Servers(t, "ENGRAM_TEST_CHROMA_URL")
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	stamp := time.Now().Format("150405.000000")
	emb := embedder.New()
	open := func(name string) (*engine.Engine, *chroma.Index) {
		cfg := teamConfig(filepath.Join(t.TempDir(), name), url)
		cfg.VectorIndex = config.VectorsChroma
		cfg.ChromaURL, cfg.ChromaDatabase = env["ENGRAM_TEST_CHROMA_URL"], "team-"+name+"-"+stamp
		ix, err := chroma.Open(ctx, chroma.Config{URL: cfg.ChromaURL, Database: cfg.ChromaDatabase, Model: emb.Model(), Dim: emb.Dim()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ix.DropCollection(context.Background())
			ix.Close()
		})
		return openTeam(t, cfg), ix
	}
	a, ixA := open("a")
	b, ixB := open("b")
	texts := map[string]string{"t1": "I moved to Quokkaville last spring.", "t2": "We keep the API on port 30001."}
	for _, id := range []string{"t1", "t2"} {
		if _, err := a.Ingest(ctx, []engram.Turn{{ID: id, Namespace: engram.DefaultNamespace, Session: "s", Speaker: "Ana", Role: "user", Content: texts[id]}}); err != nil {
			t.Fatal(err)
		}
	}
	holds := func(ix *chroma.Index, id string) bool {
		t.Helper()
		v, err := emb.Embed(ctx, []string{texts[id]})
		if err != nil {
			t.Fatal(err)
		}
		hits, err := ix.Query(ctx, engram.VectorQuery{Vector: v[0], K: 1, IDs: []string{id}})
		if err != nil {
			t.Fatal(err)
		}
		return len(hits) == 1
	}
	synced := func(e *engine.Engine) bool {
		h := e.Health(ctx)
		return h.Vectors != nil && h.Vectors.EmbeddedSeq == a.LastSeq() && h.Vectors.ChromaLag == 0
	}
	testutil.WaitUntil(t, "both servers to push the turns ingested on A to their Chroma", func() bool { return synced(a) && synced(b) })
	if !holds(ixA, "t1") || !holds(ixB, "t1") || !holds(ixA, "t2") || !holds(ixB, "t2") {
		t.Fatal("a server's Chroma collection lacks a turn it pushed")
	}
	if _, err := b.Forget(ctx, engram.ForgetRequest{IDs: []string{"t1"}, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	if holds(ixB, "t1") {
		t.Fatal("B's Chroma collection holds the turn B forgot")
	}
	testutil.WaitUntil(t, "B's forget to reach A's Chroma collection", func() bool { return !holds(ixA, "t1") })
	if !holds(ixA, "t2") || !holds(ixB, "t2") {
		t.Fatal("a turn no one forgot left a Chroma collection")
	}
}
