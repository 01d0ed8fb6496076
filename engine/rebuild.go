package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine/archives"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/atomicfile"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/pipeline"
	"github.com/engram-dev/engram/scheduler"
)

// RebuildReport is what a rebuild built.
type RebuildReport struct {
	Turns, Vectors                int64
	Skipped                       int64  // archived turns not stored (engram.TurnSkips): duplicate ids, unstorable times
	Model                         string // the vector model, "" without vectors
	Memories, Scenes, Facts, Docs int64
	Previous                      string // where the replaced palace is kept, "" if not kept
}

// Rebuild builds a new palace from the archive and the vaults next to the
// current one (palace.db.rebuild), verifies it, and swaps it in:
//
//  1. The archive is opened, which takes the home's lock: no server or
//     other command writes meanwhile.
//  2. The new palace is filled: turns (indexer), the active model's vectors,
//     the L1-L4 layers and their vectors, the vaults.
//  3. It is verified (SQLite integrity, turns and indexed seq equal to the
//     archive's, vectors for every turn) and closed, which checkpoints its
//     WAL into the file.
//  4. The old palace's WAL is checkpointed into it (or, for a palace too
//     damaged to open, dropped), the old file is kept as
//     palace.db.before-rebuild (a hard link, else a copy), and the new file is
//     renamed over palace.db: one atomic rename. The folder is fsynced.
//
// Until step 4 the old palace is untouched, so a kill at any moment leaves a
// working store (and a palace.db.rebuild that the next rebuild removes).
// A home that holds another program's files is refused first (homedir.Check).
//
// With palace = "postgres" the palace is the database's, which every
// server shares: it is emptied (pgpalace.Reset) and filled in place, steps
// 2 and 3 without the file's integrity check, and nothing is swapped or
// kept. Stop the servers first. A kill midway leaves a palace behind the
// archive, which the servers' indexer and jobs fill as they start; a second
// rebuild starts over.
func Rebuild(ctx context.Context, cfg config.Config, logger *slog.Logger, progress func(stage string, done, total int64), keep bool) (RebuildReport, error) {
	var rep RebuildReport
	if progress == nil {
		progress = func(string, int64, int64) {}
	}
	if err := homedir.Claim(cfg.Home, cfg.Version, logger); err != nil {
		return rep, err
	}
	a, err := archives.Open(ctx, cfg, logger)
	if err != nil {
		return rep, err
	}
	defer a.Close()
	p, finish, err := rebuildTarget(ctx, cfg, keep)
	if err != nil {
		return rep, err
	}
	done := false
	defer func() {
		if !done {
			p.Close()
		}
	}()
	last := a.LastSeq()

	// Turns.
	progress("turns", 0, last)
	ix := pipeline.NewIndexer(a, p)
	ix.Logger = logger.With("component", "indexer")
	if err := ix.CatchUp(ctx); err != nil {
		return rep, err
	}
	progress("turns", ix.Indexed(), last)

	// The corrections, before the layers, so that extraction meets them.
	e := &Engine{cfg: cfg, logger: logger, archive: a, palace: p}
	if err := e.openJournal(ctx); err != nil {
		return rep, err
	}

	// Vectors of the configured model.
	var side *vectorSide
	if key := cfg.ModelKey(); key != "" {
		emb, dim, err := e.newEmbedder(ctx, key)
		if err != nil {
			return rep, fmt.Errorf("vectors: %w (or set embedder = \"none\" to rebuild without vectors)", err)
		}
		store, err := p.Vectors(ctx, key, dim)
		if err != nil {
			return rep, err
		}
		if err := p.ActivateModel(ctx, key); err != nil {
			return rep, err
		}
		vx := pipeline.NewVectorIndexer(a, emb, store)
		vx.Logger = logger.With("component", "vectors")
		vx.Shared = e.sharedVectors()
		if err := vx.Init(ctx); err != nil {
			return rep, err
		}
		if err := vx.CatchUp(ctx, func(seq int64) { progress("vectors", seq, last) }); err != nil {
			return rep, err
		}
		side = &vectorSide{model: key, store: store, index: e.indexOf(store), vx: vx}
		rep.Model = key
	}
	e.vec.side = side

	// Layers and their vectors.
	if err := e.openExtractor(); err != nil {
		return rep, err
	}
	if err := runStages(ctx, e.layerJobs(), progress); err != nil {
		return rep, err
	}

	// Vaults.
	for _, v := range cfg.Vaults {
		progress("vault", 0, 0)
		s := e.newSyncer(nil, nil)
		if side != nil {
			s = e.newSyncer(side.store, side.vx.Embedder())
		}
		s.Full = true
		if _, err := s.Sync(ctx, v.Path, v.NamespaceOrDefault()); err != nil {
			return rep, fmt.Errorf("vault %s: %w", v.Path, err)
		}
		if side != nil {
			if err := p.SetWorkerSeq(ctx, vaultMarker(side.model, filepath.Clean(v.Path)), 1); err != nil {
				return rep, err
			}
		}
	}

	// Verify.
	progress("verifying", 0, 0)
	if err := verifyRebuilt(ctx, p, a, side, &rep); err != nil {
		return rep, fmt.Errorf("the rebuilt palace failed verification, the current one is kept: %w", err)
	}
	done = true
	rep.Previous, err = finish(progress)
	return rep, err
}

// rebuildTarget returns the palace a rebuild fills, and what then puts it
// in use: the home's new file beside palace.db, closed and swapped in
// (swapPalace); or, with palace = "postgres", the database's, emptied first
// (pgpalace.Reset: every server's indexes load again; the other servers
// should be stopped, their vector stores fail until they start again),
// closed after.
func rebuildTarget(ctx context.Context, cfg config.Config, keep bool) (palaceStore, func(func(string, int64, int64)) (string, error), error) {
	if cfg.Palace == config.PalacePostgres {
		p, err := openPalace(ctx, cfg, palace.Options{})
		if err != nil {
			return nil, nil, err
		}
		if err := p.(pgPalace).Reset(ctx); err != nil {
			p.Close()
			return nil, nil, err
		}
		return p, func(func(string, int64, int64)) (string, error) { return "", p.Close() }, nil
	}
	live := filepath.Join(cfg.Home, homedir.PalaceFile)
	next := live + homedir.RebuildSuffix
	for _, f := range []string{next, next + "-wal", next + "-shm"} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("remove a stale rebuild: %w", err)
		}
	}
	db, err := palace.Open(next, palace.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("create the new palace: %w", err)
	}
	return sqlitePalace{db}, func(progress func(string, int64, int64)) (string, error) {
		if err := db.Close(); err != nil {
			return "", err
		}
		progress("swapping", 0, 0)
		return swapPalace(live, next, keep)
	}, nil
}

// verifyRebuilt checks the new palace before it replaces the old one.
func verifyRebuilt(ctx context.Context, p palaceStore, a archives.Store, side *vectorSide, rep *RebuildReport) error {
	var problems []string
	if f, ok := p.(sqlitePalace); ok {
		err := f.View(ctx, func(tx *sql.Tx) error {
			var res string
			if err := tx.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&res); err != nil {
				return err
			}
			if res != "ok" {
				problems = append(problems, "SQLite quick_check: "+res)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	seq, err := p.IndexedSeq(ctx)
	if err != nil {
		return err
	}
	if seq != a.LastSeq() {
		problems = append(problems, fmt.Sprintf("indexed through seq %d, the archive ends at %d", seq, a.LastSeq()))
	}
	st, err := p.Stats(ctx)
	if err != nil {
		return err
	}
	for _, l := range st.Layers {
		rep.Turns += l["turns"]
		rep.Memories += l["memories"]
		rep.Scenes += l["scenes"]
		rep.Facts += l["facts"]
	}
	sk, err := p.TurnSkips(ctx, 0)
	if err != nil {
		return err
	}
	rep.Skipped = sk.Count
	if as, err := a.Stats(ctx); err != nil {
		problems = append(problems, "the archive could not be counted: "+engram.ErrorText(err))
	} else if rep.Turns+rep.Skipped != as.Turns {
		problems = append(problems, fmt.Sprintf("%d turns in the palace (and %d skipped), %d in the archive", rep.Turns, rep.Skipped, as.Turns))
	}
	if side != nil {
		n, err := side.store.Count(ctx)
		if err != nil {
			return err
		}
		rep.Vectors = int64(n)
		if w, err := side.store.Watermark(ctx); err != nil {
			return err
		} else if w != a.LastSeq() {
			problems = append(problems, fmt.Sprintf("vectors through seq %d, the archive ends at %d", w, a.LastSeq()))
		}
	}
	docs, err := p.Vault(nil).Docs(ctx, "")
	if err != nil {
		return err
	}
	rep.Docs = int64(len(docs))
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// swapPalace puts the closed palace next in place of live, keeping live as
// live.before-rebuild when keep is set, and returns that name ("" if not
// kept). The rename of next over live is the one step that switches; before
// it, live's WAL is checkpointed into live (SQLite would otherwise apply it
// to the new file) or, when live cannot be opened, removed.
func swapPalace(live, next string, keep bool) (string, error) {
	if _, err := os.Stat(live); err == nil {
		if err := checkpoint(live); err != nil {
			for _, f := range []string{live + "-wal", live + "-shm"} {
				if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return "", fmt.Errorf("remove the damaged palace's %s: %w", filepath.Base(f), err)
				}
			}
		}
	}
	previous := ""
	if keep {
		if _, err := os.Stat(live); err == nil {
			previous = live + homedir.PreviousSuffix
			os.Remove(previous)
			if err := os.Link(live, previous); err != nil {
				if err := copyFile(live, previous); err != nil {
					return "", fmt.Errorf("keep the previous palace: %w", err)
				}
			}
		}
	}
	if err := os.Rename(next, live); err != nil {
		return "", fmt.Errorf("swap the rebuilt palace in: %w", err)
	}
	for _, f := range []string{next + "-wal", next + "-shm"} {
		os.Remove(f)
	}
	if err := atomicfile.SyncDir(filepath.Dir(live)); err != nil {
		return previous, err
	}
	return previous, nil
}

// checkpoint folds a palace's WAL into its main file and empties the WAL.
func checkpoint(path string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return err
	}
	defer db.Close()
	var busy, logFrames, done int
	if err := db.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &done); err != nil {
		return err
	}
	if busy != 0 {
		return errors.New("the palace is busy")
	}
	return nil
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o600)
}

// RefillChroma drops the Chroma collection of the home's active model and
// pushes the palace's vectors into a new one, as `engram reindex vectors`
// does: what a rebuild leaves to do with vector_index = "chroma".
func RefillChroma(ctx context.Context, cfg config.Config, logger *slog.Logger) error {
	e, err := Open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	_, err = e.ReindexVectors(ctx, false, nil)
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	return err
}

// rebuildStage orders the layer jobs of a rebuild by what they read: the
// memories and the scenes read the archive, the persona and the graph the
// memories, the layers' vectors both.
var rebuildStage = map[string]int{pipeline.WorkerMemories: 0, pipeline.WorkerScenes: 0,
	pipeline.WorkerPersona: 1, pipeline.WorkerGraph: 1, pipeline.WorkerLayerVectors: 2}

// runStages runs the jobs stage by stage, the jobs of a stage side by
// side: their writes take turns at the palace's one writer, and their
// reading and extracting use every core (one at a time, a rebuild ran on
// one). The first error ends the rebuild.
func runStages(ctx context.Context, jobs []scheduler.Job, progress func(stage string, done, total int64)) error {
	stages := map[int][]scheduler.Job{}
	last := 0
	for _, j := range jobs {
		st, ok := rebuildStage[j.Name]
		if !ok {
			st = len(rebuildStage) // a job of its own, after the others
		}
		stages[st] = append(stages[st], j)
		last = max(last, st)
	}
	for st := 0; st <= last; st++ {
		g, gctx := errgroup.WithContext(ctx)
		for _, j := range stages[st] {
			progress(j.Name, 0, 0)
			g.Go(func() error {
				if err := j.Run(gctx); err != nil {
					return fmt.Errorf("%s: %w", j.Name, err)
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
	}
	return nil
}
