package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/chroma"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/engine/archives"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/ollama"
	"github.com/engram-dev/engram/openai"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/postgres"
)

// Bounds of the doctor's probes.
const (
	// probeTimeout bounds one request to Chroma or Ollama (an embedding
	// probe takes checkTimeout: it may load the model).
	probeTimeout = 10 * time.Second
	// settleTimeout is how long the doctor lets the vector indexer and the
	// Chroma sync catch up before it compares counts, so that a turn
	// ingested a moment ago is not reported as missing.
	settleTimeout = 5 * time.Second
)

// Names of the doctor's checks.
const (
	checkArchive   = "archive"
	checkSQLite    = palace.CheckSQLite
	checkIndex     = "index"
	checkForgotten = "forgotten"
	checkVectors   = "vectors"
	checkVecMemory = "vector-memory"
	checkChroma    = "chroma"
	checkEmbedder  = "ollama-embedder"
	checkExtractor = "ollama-extractor"
	checkOpenAIEmb = "openai-embedder"
	checkOpenAIExt = "openai-extractor"
	checkJobs      = "jobs"
	checkHome      = "home"
)

// Fix commands the doctor names.
const (
	fixRebuild = "engram rebuild"
	fixReindex = "engram reindex vectors"
	fixReembed = "engram reindex vectors --reembed"
)

var _ engram.DoctorService = (*Engine)(nil)

// DoctorHome opens the home of cfg in this process and checks it. A home
// that does not open is still checked as far as it opens: the archive
// alone, then the palace alone. A home that holds another program's files
// is not opened (which would write into it): the report names the files.
// With store = "postgres" the database is checked first, and a home whose
// database does not answer, or a newer engram migrated, is not opened.
func DoctorHome(ctx context.Context, cfg config.Config, logger *slog.Logger) (r engram.DoctorReport) {
	start := time.Now()
	defer func() { r.TookMS = msSince(start) }()
	if err := homedir.Check(cfg.Home); err != nil {
		addHomeCheck(&r, err)
		return r
	}
	var before *postgres.Applied
	if cfg.Store == config.StorePostgres {
		// Opening the home would wait on a database that does not
		// answer, and fail on one a newer engram migrated.
		if checks, usable := postgres.Doctor(ctx, cfg.PostgresURL(), postgres.Applied{}); !usable {
			for _, c := range checks {
				r.Add(c)
			}
			return r
		}
		if a, err := stoppedApplied(ctx, cfg); err == nil {
			before = &a
		}
	}
	e, err := Open(ctx, cfg, logger)
	if err == nil {
		defer e.Close()
		return e.doctor(ctx, before)
	}
	if engram.ErrorCode(err) == engram.ELOCKED {
		r.Add(failCheck(checkHome, "another process holds the home and no server answers for it: "+engram.ErrorText(err),
			"stop that process (or wait for it), then run engram doctor again"))
		return r
	}
	r.Add(failCheck(checkHome, "the home does not open: "+engram.ErrorText(err), fixRebuild))
	a, aerr := archives.Open(ctx, cfg, logger)
	if aerr != nil {
		r.Add(failCheck(checkArchive, "the archive does not open: "+engram.ErrorText(aerr), ""))
		return r
	}
	defer a.Close()
	part := &Engine{cfg: cfg, logger: logger, archive: a}
	p, perr := openPalace(ctx, cfg, palace.Options{})
	if perr != nil {
		part.checkArchive(ctx, &r)
		r.Add(failCheck(checkSQLite, "the palace does not open: "+engram.ErrorText(perr), fixRebuild))
		return r
	}
	defer p.Close()
	part.palace = p
	held := part.checkArchive(ctx, &r)
	part.fileCheck(ctx, &r, palaceFile.FileCheck)
	part.checkPalaceDB(ctx, &r)
	part.checkIndex(ctx, &r, held)
	part.fileCheck(ctx, &r, palaceFile.NearKeysCheck)
	return r
}

// Doctor implements engram.DoctorService: every check, in order.
func (e *Engine) Doctor(ctx context.Context) engram.DoctorReport {
	return e.doctor(ctx, nil)
}

// doctor runs every check; before is checkPostgres's.
func (e *Engine) doctor(ctx context.Context, before *postgres.Applied) (r engram.DoctorReport) {
	start := time.Now()
	defer func() { r.TookMS = msSince(start) }()
	// Files another program put into the home while engram serves it: the
	// next start will refuse the home.
	addHomeCheck(&r, homedir.Check(e.cfg.Home))
	if !e.checkPostgres(ctx, &r, before) {
		e.fileCheck(ctx, &r, palaceFile.FileCheck)
		e.checkJobs(ctx, &r)
		return r
	}
	held := e.checkArchive(ctx, &r)
	e.fileCheck(ctx, &r, palaceFile.FileCheck)
	e.checkPalaceDB(ctx, &r)
	e.checkIndex(ctx, &r, held)
	e.checkForgotten(ctx, &r)
	e.fileCheck(ctx, &r, palaceFile.NearKeysCheck)
	e.checkVectors(ctx, &r)
	e.checkExtractor(ctx, &r)
	e.checkJobs(ctx, &r)
	return r
}

// addHomeCheck adds the failure of err, homedir.Check's, to r: a home holding
// files engram did not write, named, or one that cannot be read. A home of
// engram's own adds nothing.
func addHomeCheck(r *engram.DoctorReport, err error) {
	var fe *homedir.ForeignError
	switch {
	case errors.As(err, &fe):
		r.Add(failCheck(checkHome, fmt.Sprintf("the home holds %s engram did not write: %s; engram refuses to open it (serve, ingest, restore and every other command)",
			noun(len(fe.Names), "a file", "files"), strings.Join(fe.Names, ", ")),
			"give engram a home of its own (--home DIR or ENGRAM_HOME=DIR), or move "+noun(len(fe.Names), "that file", "those files")+" out of "+fe.Home))
	case err != nil:
		r.Add(failCheck(checkHome, "the home could not be read: "+engram.ErrorText(err), ""))
	}
}

func okCheck(name, finding string) engram.DoctorCheck {
	return engram.DoctorCheck{Name: name, Status: engram.CheckOK, Finding: finding}
}

func warnCheck(name, finding, fix string) engram.DoctorCheck {
	return engram.DoctorCheck{Name: name, Status: engram.CheckWarn, Finding: finding, Fix: fix}
}

func failCheck(name, finding, fix string) engram.DoctorCheck {
	return engram.DoctorCheck{Name: name, Status: engram.CheckFail, Finding: finding, Fix: fix}
}

// checkArchive rereads every archive line (archive.Verify). Damaged lines
// fail: they are skipped, so their turns are lost to recall, unless the
// palace kept a copy (it indexed them before the damage), which `engram
// repair` writes back; else their day file must come from a backup. An id
// on two lines (the re-send of a damaged line's turn) only warns: re-sends
// map to the first, and the palace holds one copy. Torn lines in
// quarantine only warn: a crash cut them before they were acknowledged, and
// recovery keeps them for inspection. It returns how many damaged lines the
// palace holds the turns of.
func (e *Engine) checkArchive(ctx context.Context, r *engram.DoctorReport) (held int64) {
	rep, err := e.archive.Verify(ctx)
	if err != nil {
		r.Add(failCheck(checkArchive, "the archive could not be read: "+engram.ErrorText(err), ""))
		return 0
	}
	var torn []string
	var bad, unheld, dups []archive.Problem // unheld: the bad lines only a backup restores
	for _, p := range rep.Problems {
		switch {
		case p.Kind == archive.ProblemQuarantined:
			torn = append(torn, p.Path)
		case p.Kind == archive.ProblemDuplicateID:
			dups = append(dups, p)
		case p.Damaged() && e.palaceHolds(ctx, p):
			bad = append(bad, p)
			held++
		default:
			bad = append(bad, p)
			unheld = append(unheld, p)
		}
	}
	if len(bad) > 0 {
		fix := e.backupFix(unheld)
		switch {
		case len(unheld) == 0:
			fix = fmt.Sprintf("stop engram serve, then run engram repair: it writes the %d %s again from the palace's copies", len(bad), noun(len(bad), "line", "lines"))
		case held > 0:
			fix = fmt.Sprintf("stop engram serve, run engram repair (it restores %d of the %d lines from the palace's copies), then for the rest: %s", held, len(bad), fix)
		}
		kept := ""
		if held > 0 {
			kept = fmt.Sprintf("; the palace holds the turns of %d of them", held)
		}
		r.Add(failCheck(checkArchive, fmt.Sprintf("%d damaged %s (first: %s); recall skips them and serves the rest%s",
			len(bad), noun(len(bad), "line", "lines"), bad[0], kept), fix))
	} else {
		r.Add(okCheck(checkArchive, fmt.Sprintf("%d day %s, %d turns: checksums, order and ids verified",
			rep.Files, noun(rep.Files, "file", "files"), rep.Turns)))
	}
	if len(dups) > 0 {
		r.Add(warnCheck(checkArchive, fmt.Sprintf("%d %s archived a second time (first: %s): re-sends map to the first line, the palace keeps one copy",
			len(dups), noun(len(dups), "id is", "ids are"), dups[0]), ""))
	}
	if len(torn) > 0 {
		r.Add(warnCheck(checkArchive, fmt.Sprintf("%d torn %s cut from a day file after a crash %s held in quarantine, never acknowledged to a client: %s",
			len(torn), noun(len(torn), "line", "lines"), noun(len(torn), "is", "are"), strings.Join(torn, ", ")),
			"rm "+strings.Join(torn, " ")+" (once inspected)"))
	}
	return held
}

// palaceHolds reports whether the palace holds the turn of the damaged line
// p: a turn at its seq, with the id the line still reads as.
func (e *Engine) palaceHolds(ctx context.Context, p archive.Problem) bool {
	if e.palace == nil || p.Seq <= 0 {
		return false
	}
	t, ok, err := e.palace.TurnAt(ctx, p.Seq)
	return err == nil && ok && (p.ID == "" || t.ID == p.ID)
}

// backupFix is the fix of archive lines only a backup restores.
func (e *Engine) backupFix(lines []archive.Problem) string {
	if len(lines) == 0 {
		return ""
	}
	rel, err := filepath.Rel(filepath.Join(e.cfg.Home, homedir.ArchiveDir), lines[0].Path)
	if err != nil {
		rel = filepath.Base(lines[0].Path)
	}
	return fmt.Sprintf("copy archive/%s from a backup (engram backup DIR) over %s, then run %s", rel, lines[0].Path, fixRebuild)
}

// fileCheck adds one of the palace file's own checks (package palace:
// palaceFile.FileCheck, integrity_check; NearKeysCheck) when the palace is
// a file.
func (e *Engine) fileCheck(ctx context.Context, r *engram.DoctorReport, check func(palaceFile, context.Context) engram.DoctorCheck) {
	if f, ok := e.file(); ok {
		r.Add(check(f, ctx))
	}
}

// checkIndex compares the palace with the archive: the watermark, the
// number of turns, and the full-text indexes every turn is written to. The
// palace holds every readable archived turn but those it skipped
// (engram.TurnSkips), and the turns of held damaged lines besides.
func (e *Engine) checkIndex(ctx context.Context, r *engram.DoctorReport, held int64) {
	f, ok := e.file()
	if !ok {
		return
	}
	e.settleIndex(ctx) // a lag left is reported below
	// The archive's count belongs to its last seq only if no turn came in
	// between the two reads.
	var last int64
	var as archive.Stats
	for range 3 {
		last = e.archive.LastSeq()
		var err error
		if as, err = e.archive.Stats(ctx); err != nil {
			r.Add(failCheck(checkIndex, "the archive's turns could not be counted: "+engram.ErrorText(err), ""))
			return
		}
		if e.archive.LastSeq() == last {
			break
		}
	}
	c, err := f.CountTurnIndexes(ctx)
	if err != nil {
		r.Add(failCheck(checkIndex, "the palace's turns could not be counted: "+engram.ErrorText(err), fixRebuild))
		return
	}
	sk, err := e.palace.TurnSkips(ctx, 3)
	if err != nil {
		r.Add(failCheck(checkIndex, "the skipped turns could not be read: "+engram.ErrorText(err), fixRebuild))
		return
	}
	skipped := sk.Count
	var ixErr error
	if e.indexer != nil {
		ixErr = e.indexer.Err()
	}
	defer e.reportSkips(r, sk)
	switch {
	case c.IndexedSeq > last:
		r.Add(failCheck(checkIndex, fmt.Sprintf("the palace is indexed through seq %d but the archive ends at seq %d: it belongs to another archive, or archive files were lost",
			c.IndexedSeq, last), fixRebuild))
	case ixErr != nil:
		r.Add(failCheck(checkIndex, fmt.Sprintf("indexing fails, %d turns behind: %s", last-c.IndexedSeq, engram.ErrorText(ixErr)), fixRebuild))
	case c.IndexedSeq < last:
		r.Add(okCheck(checkIndex, fmt.Sprintf("%d turns indexed, %d more being indexed (through seq %d of %d)",
			c.Turns, last-c.IndexedSeq, c.IndexedSeq, last)))
	case c.Turns != as.Turns-skipped+held:
		var also []string
		if skipped > 0 {
			also = append(also, fmt.Sprintf("%d skipped by the index", skipped))
		}
		if held > 0 {
			also = append(also, fmt.Sprintf("%d more in damaged lines the palace holds", held))
		}
		note := ""
		if len(also) > 0 {
			note = " (" + strings.Join(also, ", ") + ")"
		}
		r.Add(failCheck(checkIndex, fmt.Sprintf("the archive holds %d turns through seq %d%s, the palace %d", as.Turns, last, note, c.Turns), fixRebuild))
	case c.Keyword != c.Turns || c.Trigram+c.TrigramPending != c.Turns:
		r.Add(failCheck(checkIndex, fmt.Sprintf("the keyword index holds %d rows and the substring index %d for %d turns", c.Keyword, c.Trigram, c.Turns), fixRebuild))
	default:
		r.Add(okCheck(checkIndex, fmt.Sprintf("%d turns indexed through seq %d, as archived; keyword and substring indexes match", c.Turns, last)))
	}
}

// settleIndex lets the indexer catch up with the archive for up to
// settleTimeout, so that a turn archived a moment ago is not reported as
// missing or behind.
func (e *Engine) settleIndex(ctx context.Context) {
	if e.indexer != nil {
		wctx, cancel := context.WithTimeout(ctx, settleTimeout)
		_ = e.indexer.WaitCurrent(wctx)
		cancel()
	}
}

// reportSkips reports the archived turns the index passed over: a
// duplicate id loses nothing (the palace keeps the first copy: OK, shown);
// a turn with a time the palace cannot store is missing from recall until
// its line is corrected (WARN).
func (e *Engine) reportSkips(r *engram.DoctorReport, sk engram.TurnSkips) {
	if sk.Count == 0 {
		return
	}
	list := make([]string, len(sk.Latest))
	fix := ""
	for i, s := range sk.Latest {
		list[i] = s.String()
		if s.StoredSeq == 0 && fix == "" {
			fix = fmt.Sprintf("correct the time on the line of seq %d in the archive (years %d to %d), then run %s", s.Seq, engram.MinYear, engram.MaxYear, fixRebuild)
		}
	}
	finding := fmt.Sprintf("%d archived %s not indexed (latest: %s)", sk.Count, noun(int(sk.Count), "turn is", "turns are"), strings.Join(list, "; "))
	if sk.Lost == 0 {
		r.Add(okCheck(checkIndex, finding+": re-sent ids, the palace holds their first copies"))
		return
	}
	r.Add(warnCheck(checkIndex, fmt.Sprintf("%s; %d of them %s missing from recall", finding, sk.Lost, noun(int(sk.Lost), "is", "are")), fix))
}

// checkVectors checks the vectors of the active model: that its embedder
// answers, that every stored vector is usable, that every turn behind the
// watermark has one, and that the index recall searches (the in-memory
// matrix, or the Chroma collection) holds exactly the stored vectors.
func (e *Engine) checkVectors(ctx context.Context, r *engram.DoctorReport) {
	e.vec.mu.Lock()
	side, problem, pending := e.vec.side, e.vec.problem, e.vec.pending
	var reembed *engram.ReembedStatus
	if e.vec.reembed != nil {
		cp := *e.vec.reembed
		reembed = &cp
	}
	e.vec.mu.Unlock()

	active, dim, found, err := e.palace.ActiveModel(ctx)
	if err != nil {
		r.Add(failCheck(checkVectors, "the vector models could not be read: "+engram.ErrorText(err), fixRebuild))
		return
	}
	if e.cfg.Embedder == config.EmbedderNone {
		kept := ""
		if found {
			kept = " (the vectors of " + active + " stay in the palace)"
		}
		r.Add(okCheck(checkVectors, "off: embedder = none, recall searches by keyword"+kept))
		return
	}
	// The embedders first: a model that cannot embed explains the rest.
	embFix := e.checkEmbedders(ctx, r, active, dim, found)
	if !found {
		fix := embFix
		if fix == "" && e.cfg.VectorIndex == config.VectorsChroma {
			fix = chromaFix(e.cfg.ChromaURL)
		}
		r.Add(failCheck(checkVectors, "no vector model is active yet, so recall searches by keyword: "+orNoReason(problem), fix))
		return
	}
	if b := embedder.New().Model(); strings.HasPrefix(active, "builtin-") && active != b {
		r.Add(failCheck(checkVectors, fmt.Sprintf("the vectors were made by the builtin embedder %s, but this engram has %s", active, b),
			"engram reembed --model builtin"))
		return
	}

	// Let the indexer and the Chroma sync finish what they are doing.
	if side != nil {
		wctx, cancel := context.WithTimeout(ctx, settleTimeout)
		if err := side.vx.WaitCurrent(wctx); err == nil && side.ext != nil {
			_ = side.ext.WaitCurrent(wctx)
		}
		cancel()
	}
	store, err := e.palace.Vectors(ctx, active, 0)
	if err != nil {
		r.Add(failCheck(checkVectors, "the vectors could not be opened: "+engram.ErrorText(err), fixRebuild))
		return
	}
	indexed, err := e.palace.IndexedSeq(ctx)
	if err != nil {
		r.Add(failCheck(checkVectors, "the palace watermark could not be read: "+engram.ErrorText(err), fixRebuild))
		return
	}
	wm, err := store.Watermark(ctx)
	if err != nil {
		r.Add(failCheck(checkVectors, "the vector watermark could not be read: "+engram.ErrorText(err), fixRebuild))
		return
	}
	c, err := store.Check(ctx, min(wm, indexed))
	if err != nil {
		r.Add(failCheck(checkVectors, "the vectors could not be read: "+engram.ErrorText(err), fixRebuild))
		return
	}

	// The index recall searches, checked first: an unreachable Chroma
	// explains a vector side that is off.
	var index engram.DoctorCheck
	indexUp := true
	switch e.cfg.VectorIndex {
	case config.VectorsChroma:
		index, indexUp = e.checkChroma(ctx, c, side)
	default:
		index = e.checkMemory(c, side != nil)
	}

	healthy := storedVectorFindings(r, c, active, min(wm, indexed))
	switch {
	case side == nil:
		healthy = false
		finding := orNoReason(problem) + " (recall searches by keyword meanwhile)"
		switch {
		case c.Bad > 0:
			r.Add(failCheck(checkVectors, finding, fixReindex))
		case embFix != "":
			r.Add(failCheck(checkVectors, finding, embFix))
		case !indexUp:
			r.Add(failCheck(checkVectors, finding, chromaFix(e.cfg.ChromaURL)))
		default:
			// What stopped it is gone (a reindex repaired the vectors, a
			// server came up): the engine's retry starts it, within a
			// minute.
			r.Add(warnCheck(checkVectors, finding+"; its causes are gone now, and engram retries on its own within a minute", ""))
		}
	case side.vx.Err() != nil:
		healthy = false
		r.Add(failCheck(checkVectors, fmt.Sprintf("embedding new turns fails, %d behind: %s", side.vx.Lag(), engram.ErrorText(side.vx.Err())), embFix))
	}
	if pending != "" {
		r.Add(warnCheck(checkVectors, pending, "engram reembed"))
	}
	if reembed != nil && reembed.State == engram.ReembedFailed {
		r.Add(warnCheck(checkVectors, fmt.Sprintf("the last re-embed into %s failed: %s", reembed.Model, reembed.Error),
			"engram reembed --model "+reembed.Model))
	}
	if healthy {
		lag := ""
		if n := e.archive.LastSeq() - c.EmbeddedSeq; n > 0 {
			lag = fmt.Sprintf("; %d new %s being embedded", n, noun(int(n), "turn", "turns"))
		}
		r.Add(okCheck(checkVectors, fmt.Sprintf("%s: %d vectors (%d of turns) through seq %d, all readable, none missing%s",
			active, c.Stored, c.ByKind[engram.KindTurn], c.EmbeddedSeq, lag)))
	}
	if index.Name != "" {
		r.Add(index)
	}
}

// checkEmbedders probes the model servers of the active model and the
// configured one, and returns the fix of the first that cannot embed for
// the active model (or for any, when no model is active yet).
func (e *Engine) checkEmbedders(ctx context.Context, r *engram.DoctorReport, active string, dim int, found bool) string {
	embFix := ""
	for _, model := range e.probedModels(active, config.OllamaPrefix, config.EmbedderOllama) {
		if fix := e.checkOllamaEmbedder(ctx, r, model, active, dim); fix != "" && (model == active || !found) {
			embFix = fix
		}
	}
	for _, model := range e.probedModels(active, config.OpenAIPrefix, config.EmbedderOpenAI) {
		if fix := e.checkOpenAIEmbedder(ctx, r, model, active, dim); fix != "" && (model == active || !found) {
			embFix = fix
		}
	}
	return embFix
}

// storedVectorFindings reports what the check of the active model's stored
// vectors (through seq through) found wrong, and whether nothing was.
func storedVectorFindings(r *engram.DoctorReport, c engram.VectorCheck, active string, through int64) bool {
	healthy := true
	if c.Bad > 0 {
		healthy = false
		sample := make([]string, len(c.BadSample))
		for i, b := range c.BadSample {
			sample[i] = b.String()
		}
		r.Add(failCheck(checkVectors, fmt.Sprintf("%d stored %s of %s %s unusable (%s); the index refuses to load them",
			c.Bad, noun(c.Bad, "vector", "vectors"), active, noun(c.Bad, "is", "are"), strings.Join(sample, "; ")), fixReindex))
	}
	if c.Missing > 0 {
		healthy = false
		r.Add(failCheck(checkVectors, fmt.Sprintf("%d %s up to seq %d %s no vector in %s (first: %s): shallow recall cannot find them",
			c.Missing, noun(int(c.Missing), "turn", "turns"), through, noun(int(c.Missing), "has", "have"), active,
			strings.Join(c.MissingIDs, ", ")), fixReindex))
	}
	if c.Orphans > 0 {
		healthy = false
		r.Add(warnCheck(checkVectors, fmt.Sprintf("%d turn %s of %s name turns the palace does not hold", c.Orphans,
			noun(int(c.Orphans), "vector", "vectors"), active), fixRebuild))
	}
	return healthy
}

// checkMemory compares the in-memory matrix with SQLite. It returns no
// check when the vector side is off: checkVectors says why.
func (e *Engine) checkMemory(c engram.VectorCheck, running bool) engram.DoctorCheck {
	switch {
	case !c.Loaded && running:
		return failCheck(checkVecMemory, "the in-memory index is not loaded", fixReindex)
	case !c.Loaded:
		return engram.DoctorCheck{}
	case c.OnlyInMem+c.OnlyInStore+c.Differ > 0 || c.InMemory != c.Stored:
		return failCheck(checkVecMemory, fmt.Sprintf("the in-memory index holds %d vectors, SQLite %d: %d only in memory, %d only in SQLite, %d with other values",
			c.InMemory, c.Stored, c.OnlyInMem, c.OnlyInStore, c.Differ), fixReindex)
	}
	return okCheck(checkVecMemory, fmt.Sprintf("the in-memory index holds the %d stored vectors, values equal", c.Stored))
}

// checkChroma checks that the Chroma server answers, and that the model's
// collection holds as many vectors as SQLite once the sync is current;
// reachable is false when the server does not answer. It gets or creates
// the collection, as the vector side does.
func (e *Engine) checkChroma(ctx context.Context, c engram.VectorCheck, side *vectorSide) (check engram.DoctorCheck, reachable bool) {
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	ci, err := chroma.Open(pctx, chroma.Config{URL: e.cfg.ChromaURL, Database: e.cfg.ChromaDatabase, Model: c.Model, Dim: c.Dim, Timeout: probeTimeout})
	if err != nil {
		if engram.ErrorCode(err) != engram.EUNAVAILABLE {
			return failCheck(checkChroma, engram.ErrorMessage(err), ""), true
		}
		return failCheck(checkChroma, engram.ErrorMessage(err)+"; shallow recall falls back to keyword search, vectors wait in SQLite",
			chromaFix(e.cfg.ChromaURL)), false
	}
	defer ci.Close()
	n, err := ci.Count(pctx)
	if err != nil {
		return failCheck(checkChroma, engram.ErrorMessage(err), chromaFix(e.cfg.ChromaURL)), engram.ErrorCode(err) != engram.EUNAVAILABLE
	}
	behind := c.LastChange - c.SyncedSeq
	var syncErr error
	if side != nil && side.ext != nil {
		syncErr = side.ext.Err()
	}
	switch {
	case syncErr != nil:
		// It answers now: the sync's next retry pushes what is behind.
		return warnCheck(checkChroma, fmt.Sprintf("%s answers now, but the last push failed, %d changes behind (the sync retries on its own): %s",
			e.cfg.ChromaURL, behind, engram.ErrorText(syncErr)), ""), true
	case behind > 0:
		return okCheck(checkChroma, fmt.Sprintf("%s answers; collection %s holds %d vectors, %d changes still to push", e.cfg.ChromaURL, ci.Collection(), n, behind)), true
	}
	// Whatever the count says, no forgotten turn's vector may be left.
	tombs, err := e.archive.Tombstones(pctx)
	if err != nil {
		return failCheck(checkChroma, "the archive's tombstones could not be read: "+engram.ErrorText(err), ""), true
	}
	gone := slices.Sorted(maps.Keys(tombs))
	left, err := ci.Holding(pctx, gone)
	if err != nil {
		return failCheck(checkChroma, engram.ErrorMessage(err), chromaFix(e.cfg.ChromaURL)), engram.ErrorCode(err) != engram.EUNAVAILABLE
	}
	switch {
	case len(left) > 0:
		return failCheck(checkChroma, fmt.Sprintf("collection %s at %s holds the vectors of %d forgotten %s (first: %s)",
			ci.Collection(), e.cfg.ChromaURL, len(left), noun(len(left), "turn", "turns"), left[0]), fixReindex), true
	case n != c.Stored:
		return failCheck(checkChroma, fmt.Sprintf("collection %s at %s holds %d %s, SQLite %d", ci.Collection(), e.cfg.ChromaURL, n, noun(n, "vector", "vectors"), c.Stored), fixReindex), true
	}
	return okCheck(checkChroma, fmt.Sprintf("%s answers; collection %s holds the %d stored vectors and none of the %d forgotten turns", e.cfg.ChromaURL, ci.Collection(), n, len(gone))), true
}

// chromaFix is the command that starts a Chroma server at u.
func chromaFix(u string) string {
	port := "8000"
	if pu, err := url.Parse(u); err == nil && pu.Port() != "" {
		port = pu.Port()
	}
	return "chroma run --port " + port + " (start the Chroma server at " + u + ")"
}

// probedModels lists the models of one kind of embedder (embedder, whose
// model keys start with prefix) that the doctor probes: the active one and
// the configured one.
func (e *Engine) probedModels(active, prefix, embedder string) []string {
	var models []string
	if strings.HasPrefix(active, prefix) {
		models = append(models, active)
	}
	if e.cfg.Embedder == embedder && e.cfg.ModelKey() != active {
		models = append(models, e.cfg.ModelKey())
	}
	return models
}

// checkOpenAIEmbedder embeds a probe text with model (a model key) on the
// OpenAI-compatible server, once, and compares the dimension with the
// stored one. It returns the fix when the model cannot embed.
func (e *Engine) checkOpenAIEmbedder(ctx context.Context, r *engram.DoctorReport, key, active string, dim int) string {
	model := strings.TrimPrefix(key, config.OpenAIPrefix)
	cfg := e.cfg.OpenAIConfig(model)
	cfg.MaxRetries = -1
	emb, err := openai.NewEmbedder(openai.EmbedderConfig{Config: cfg})
	if err != nil {
		r.Add(failCheck(checkOpenAIEmb, engram.ErrorText(err), "set openai_base_url and openai_model in config.toml"))
		return ""
	}
	return probeEmbedder(ctx, r, checkOpenAIEmb, emb, model, key == active, dim, func(error) string {
		return "check openai_base_url, openai_model and $" + e.cfg.OpenAIKeyEnv
	})
}

// checkOllamaEmbedder embeds a probe text with model (a model key) and
// compares the dimension with the stored one. It returns the fix when the
// model cannot embed.
func (e *Engine) checkOllamaEmbedder(ctx context.Context, r *engram.DoctorReport, key, active string, dim int) string {
	model := strings.TrimPrefix(key, config.OllamaPrefix)
	emb, err := ollama.NewEmbedder(ollama.Config{Host: e.cfg.OllamaHost, Model: model, MaxRetries: -1})
	if err != nil {
		r.Add(failCheck(checkEmbedder, engram.ErrorText(err), ""))
		return ""
	}
	return probeEmbedder(ctx, r, checkEmbedder, emb, model, key == active, dim, func(err error) string { return ollamaFix(err, model) })
}

// probedEmbedder is an embedder of a server the doctor probes.
type probedEmbedder interface {
	checkedEmbedder
	Host() string
	Close() error
}

// probeEmbedder asks emb, of model, for its dimension, adds the result to r
// as check, and closes emb. The dimension must be dim when the model is the
// active one. It returns the fix when the model cannot embed: fix(err)
// when the server fails, a re-embed when the dimension changed.
func probeEmbedder(ctx context.Context, r *engram.DoctorReport, check string, emb probedEmbedder, model string, active bool, dim int, fix func(error) string) string {
	defer emb.Close()
	_, got, err := withDim(ctx, emb)
	if err != nil {
		f := fix(err)
		r.Add(failCheck(check, engram.ErrorMessage(err), f))
		return f
	}
	if active && got != dim {
		r.Add(failCheck(check, fmt.Sprintf("model %s at %s embeds in %d dimensions but its stored vectors have %d: the model changed on the server",
			model, emb.Host(), got, dim), fixReembed))
		return fixReembed
	}
	r.Add(okCheck(check, fmt.Sprintf("model %s at %s answers, %d dimensions", model, emb.Host(), got)))
	return ""
}

// checkExtractor checks that the server of an LLM extractor has its chat
// model: the Ollama server's POST /api/show, an OpenAI-compatible server's
// GET /models/{model}.
func (e *Engine) checkExtractor(ctx context.Context, r *engram.DoctorReport) {
	if ox, ok := e.extractor.(*openai.Extractor); ok {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		if err := ox.Check(pctx); err != nil {
			r.Add(failCheck(checkOpenAIExt, engram.ErrorMessage(err)+": the memory job fails until it answers",
				"check openai_base_url, openai_chat_model and $"+e.cfg.OpenAIKeyEnv))
			return
		}
		r.Add(okCheck(checkOpenAIExt, fmt.Sprintf("chat model %s present at %s", ox.Model(), ox.Host())))
		return
	}
	x, isOllama := e.extractor.(*ollama.Extractor)
	if !isOllama {
		return
	}
	base, err := url.Parse(x.Host())
	if err != nil {
		r.Add(failCheck(checkExtractor, err.Error(), ""))
		return
	}
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	client := api.NewClient(base, &http.Client{Timeout: probeTimeout})
	if _, err := client.Show(pctx, &api.ShowRequest{Model: x.Model()}); err != nil {
		var se api.StatusError
		if errors.As(err, &se) && se.StatusCode == http.StatusNotFound {
			r.Add(failCheck(checkExtractor, fmt.Sprintf("chat model %s is not on the ollama server at %s: the memory job fails until it is", x.Model(), base),
				"ollama pull "+x.Model()))
			return
		}
		r.Add(failCheck(checkExtractor, fmt.Sprintf("the ollama server at %s does not answer (%v): the memory job fails until it does", base, err),
			"ollama serve"))
		return
	}
	r.Add(okCheck(checkExtractor, fmt.Sprintf("chat model %s present at %s", x.Model(), base)))
}

// ollamaFix names the command for an Ollama error: pull a missing model,
// else start the server.
func ollamaFix(err error, model string) string {
	var se api.StatusError
	if errors.As(err, &se) && se.StatusCode == http.StatusNotFound {
		return "ollama pull " + model
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) {
		return "ollama serve"
	}
	return ""
}

// checkJobs reports failing jobs and jobs whose last success is older than
// twice their interval. Jobs that never ran only warn: without `engram
// serve`, nothing runs them.
func (e *Engine) checkJobs(ctx context.Context, r *engram.DoctorReport) {
	if e.sched == nil {
		return
	}
	if err := e.sched.Load(ctx); err != nil {
		r.Add(failCheck(checkJobs, "the job state could not be read: "+engram.ErrorText(err), fixRebuild))
		return
	}
	now := time.Now()
	var never []string
	problems := 0
	for _, j := range e.sched.Status() {
		name := "job " + j.Name
		switch {
		case j.Failing:
			problems++
			r.Add(failCheck(name, fmt.Sprintf("failed %d %s in a row: %s", j.Failures, noun(j.Failures, "time", "times"), oneLine(j.LastError, 300)),
				"engram jobs run "+j.Name))
		case j.LastSuccess.IsZero():
			never = append(never, j.Name)
		case now.Sub(j.LastSuccess) > 2*j.Interval:
			problems++
			r.Add(warnCheck(name, fmt.Sprintf("last success %s ago, over twice its interval of %s",
				now.Sub(j.LastSuccess).Round(time.Minute), j.Interval), "engram jobs run "+j.Name))
		}
	}
	if len(never) > 0 {
		r.Add(warnCheck(checkJobs, fmt.Sprintf("never ran: %s (engram serve runs the jobs on their intervals)", strings.Join(never, ", ")),
			"engram jobs run --due"))
	} else if problems == 0 {
		r.Add(okCheck(checkJobs, fmt.Sprintf("%d jobs on schedule", len(e.sched.Status()))))
	}
}

// checkForgotten checks that every tombstone of the archive is recorded as
// forgotten in the palace, and that no index still holds a forgotten id (a
// turn row, a vector, a memory's, scene's, statement's, triple's or
// facet's sources). A forget that stopped between the archive and the
// palace is finished at the next start; a rebuild, which reads the
// tombstones, repairs the rest.
func (e *Engine) checkForgotten(ctx context.Context, r *engram.DoctorReport) {
	gone, err := e.archive.Tombstones(ctx)
	if err != nil {
		r.Add(failCheck(checkForgotten, "the archive's tombstones could not be read: "+engram.ErrorText(err), ""))
		return
	}
	ids := make([]string, 0, len(gone))
	for id := range gone {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	known, err := e.palace.ForgottenIDs(ctx, ids)
	if err != nil {
		r.Add(failCheck(checkForgotten, "the forgotten ids could not be read: "+engram.ErrorText(err), fixRebuild))
		return
	}
	var missing []string
	for _, id := range ids {
		if !known[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		r.Add(failCheck(checkForgotten, fmt.Sprintf("%d forgotten %s of the archive not recorded in the palace (first: %s)",
			len(missing), noun(len(missing), "turn", "turns"), missing[0]), "restart engram (it finishes the forget), or "+fixRebuild))
		return
	}
	left, err := e.palace.ForgottenLeft(ctx, 5)
	if err != nil {
		r.Add(failCheck(checkForgotten, "the indexes could not be searched for forgotten ids: "+engram.ErrorText(err), fixRebuild))
		return
	}
	if len(left) > 0 {
		r.Add(failCheck(checkForgotten, "forgotten turns are still in an index: "+strings.Join(left, "; "), fixRebuild))
		return
	}
	r.Add(okCheck(checkForgotten, fmt.Sprintf("%d forgotten %s, none left in any index", len(ids), noun(len(ids), "turn", "turns"))))
}
