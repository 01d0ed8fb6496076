package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/pipeline"
	"github.com/engram-dev/engram/recall"
)

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

// TestFaultDiskFull fills the disk under the archive while eight clients
// post turns, then frees it, several times: the archive, the palace, the
// indexer and the HTTP API on loopback, the archive on a file system whose
// disk fills up. Every refused request answers 507 no_space with a clear
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
	srv.Ingest, srv.Recall, srv.Status = &pipeline.Ingester{Archive: a, Indexer: ix}, rs, status{a, ix, p}
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
		testutil.WaitUntil(t, "turns to be acknowledged", func() bool { return answered.Load() >= ok0+20 || t.Failed() })
		disk.full.Store(true)
		no0 := refused.Load()
		testutil.WaitUntil(t, "the full disk to refuse turns", func() bool { return refused.Load() >= no0+10 || t.Failed() })
		disk.full.Store(false)
		t.Logf("cycle %d: %d acknowledged, %d refused", cycle, answered.Load(), refused.Load())
	}
	ok0 := answered.Load()
	testutil.WaitUntil(t, "turns to be acknowledged after the last cycle", func() bool { return answered.Load() >= ok0+20 || t.Failed() })
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
