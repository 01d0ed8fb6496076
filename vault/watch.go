package vault

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is how long a vault must stay quiet after a change
// before a Watcher syncs it: an editor's save, a git checkout or a pull
// write many files in a burst, and one sync covers them all.
const DefaultDebounce = 2 * time.Second

// Watcher syncs a vault soon after its files change, while `engram serve`
// runs. It is an accelerator, never the only path: the git hook and the
// vault-reconcile job catch whatever it misses (an overflowed event
// queue, a folder it could not watch).
type Watcher struct {
	sync     func(ctx context.Context, root string)
	logger   *slog.Logger
	w        *fsnotify.Watcher
	roots    map[string]string // watched folder -> its vault root
	mu       sync.Mutex
	timers   map[string]*time.Timer
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	debounce time.Duration
}

// Watch watches the vaults at roots and calls sync with a vault's root
// once it has been quiet for DefaultDebounce after a change of one of its
// Markdown files or folders. A folder that cannot be watched is logged
// and left to the reconcile job. Close stops it.
func Watch(roots []string, sync func(ctx context.Context, root string), logger *slog.Logger) (*Watcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	vw := &Watcher{sync: sync, logger: logger, w: w, roots: map[string]string{}, timers: map[string]*time.Timer{}, cancel: cancel, debounce: DefaultDebounce}
	for _, root := range roots {
		vw.addTree(filepath.Clean(root), filepath.Clean(root))
	}
	vw.wg.Add(1)
	go func() {
		defer vw.wg.Done()
		vw.loop(ctx)
	}()
	return vw, nil
}

// SetDebounce sets the quiet period after which the watcher syncs.
func (vw *Watcher) SetDebounce(d time.Duration) {
	vw.mu.Lock()
	defer vw.mu.Unlock()
	vw.debounce = d
}

// addTree watches dir and its sub-folders, dot-folders (.git, .obsidian)
// excepted.
func (vw *Watcher) addTree(root, dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			vw.logger.Warn("vault watch: cannot read a folder; the reconcile job covers it", "path", p, "err", err)
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if p != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if err := vw.w.Add(p); err != nil {
			vw.logger.Warn("vault watch: cannot watch a folder; the reconcile job covers it", "path", p, "err", err)
			return nil
		}
		vw.mu.Lock()
		vw.roots[p] = root
		vw.mu.Unlock()
		return nil
	})
}

func (vw *Watcher) loop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case err, ok := <-vw.w.Errors:
			if !ok {
				return
			}
			vw.logger.Warn("vault watch: event error; the reconcile job covers what was missed", "err", err)
		case ev, ok := <-vw.w.Events:
			if !ok {
				return
			}
			vw.mu.Lock()
			root, known := vw.roots[filepath.Dir(ev.Name)]
			vw.mu.Unlock()
			if !known {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if st, err := os.Stat(ev.Name); err == nil && st.IsDir() && !strings.HasPrefix(filepath.Base(ev.Name), ".") {
					vw.addTree(root, ev.Name)
					// Files can land in the new folder before it is watched
					// (a copied tree, a checkout): no event tells of them,
					// so the vault is synced, which finds them.
					vw.schedule(ctx, root)
					continue
				}
			}
			if !isVaultFile(ev.Name) && !ev.Has(fsnotify.Remove) && !ev.Has(fsnotify.Rename) {
				continue
			}
			vw.schedule(ctx, root)
		}
	}
}

func isVaultFile(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".md" || ext == ".markdown"
}

// schedule (re)starts the quiet period of a vault, after which it syncs.
func (vw *Watcher) schedule(ctx context.Context, root string) {
	vw.mu.Lock()
	defer vw.mu.Unlock()
	// A timer that Stop catches has not fired: it starts its quiet period
	// again. One that fired is syncing, or about to: a new timer follows it,
	// so a change made while a sync reads the vault is synced too.
	if t, ok := vw.timers[root]; ok && t.Stop() {
		t.Reset(vw.debounce)
		return
	}
	vw.wg.Add(1)
	var t *time.Timer
	t = time.AfterFunc(vw.debounce, func() {
		defer vw.wg.Done()
		vw.mu.Lock()
		if vw.timers[root] == t {
			delete(vw.timers, root)
		}
		vw.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		vw.sync(ctx, root)
	})
	vw.timers[root] = t
}

// Close stops watching and waits for a sync in progress. A nil watcher is
// closed already.
func (vw *Watcher) Close() {
	if vw == nil {
		return
	}
	vw.cancel()
	vw.w.Close()
	vw.mu.Lock()
	for root, t := range vw.timers {
		if t.Stop() {
			vw.wg.Done() // its function will not run
		}
		delete(vw.timers, root)
	}
	vw.mu.Unlock()
	vw.wg.Wait()
}
