package postgres

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
)

// DumpInfo says what Export or Import copied, and what both sides were
// checked to hold alike.
type DumpInfo struct {
	Files     int   // day files written (Export) or read (Import)
	Lines     int64 // archive lines copied: rows, tombstones included
	Turns     int64 // readable turns, tombstones left out
	Forgotten int64 // tombstones
	// Damaged counts the rows whose line does not read (see Verify),
	// which Export copies as they are; Import refuses them.
	Damaged int64
	Bytes   int64 // bytes of the lines, each with its '\n'
	LastSeq int64 // the highest readable seq
	// SHA256 is the SHA-256 (lowercase hex) of the lines, each with its
	// '\n', in seq order: the same on both sides.
	SHA256 string
	// Corrections counts the lines of the corrections journal copied,
	// CorrectionsSHA256 is their SHA-256 (each with its '\n').
	Corrections       int64
	CorrectionsSHA256 string
	// Config counts the bytes of the home's config.toml copied (0: none),
	// ConfigSHA256 is their SHA-256.
	Config       int64
	ConfigSHA256 string
}

// HomeFiles names the files of a home that Import and Export copy beside
// the archive's day files, each "" for none: the corrections journal,
// whose lines go to archive_corrections, and config.toml (models, vaults,
// jobs; it holds no secret: keys come from the environment), kept whole
// in home_config.
type HomeFiles struct {
	Journal, Config string
}

// homeConfigName is config.toml's name in home_config.
const homeConfigName = "config.toml"

// Export writes every row of the archive into dir as the file archive's
// day files: dir/YYYY/MM/YYYY-MM-DD.jsonl by the UTC day of received_at,
// as the file archive files a turn when it archives it; each row's line is
// written as it is, with a '\n', in seq order. It reads one snapshot of
// the table (a REPEATABLE READ transaction), so appends may go on. dir
// must not exist or be empty (EINVALID otherwise); files are created
// 0600, directories 0700, each fsynced.
//
// When home.Journal is not "", the corrections journal in the database
// (archive_corrections, which Import fills) is written there, line by
// line; when home.Config is not "", the config.toml Import kept, if any,
// is written there whole. Neither may exist but empty.
//
// Export then checks the copy: it opens dir with archive.Open, compares
// its counts, its last seq and every id (forgotten or not) with the rows,
// and the SHA-256 of its lines with the rows'. Errors: EINVALID for a dir
// or a home file that is not empty; EUNAVAILABLE when the database fails;
// EINTERNAL when the copy does not check out (dir then holds it, for a
// look); an error of the file system as is.
func (a *Archive) Export(ctx context.Context, dir string, home HomeFiles) (DumpInfo, error) {
	var info DumpInfo
	if a.closed.Load() {
		return info, errClosed()
	}
	if err := checkEmptyDir(dir); err != nil {
		return info, err
	}
	for _, f := range []string{home.Journal, home.Config} {
		if f != "" {
			if err := checkEmptyFile(f); err != nil {
				return info, err
			}
		}
	}
	tx, err := a.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return info, readFailure(ctx, err)
	}
	defer tx.Rollback(ctx)

	want := map[string]bool{} // id -> forgotten, of the latest readable row
	w := &dayWriter{dir: dir, sum: sha256.New()}
	defer w.close()
	rows, err := tx.Query(ctx, `SELECT seq, id, crc, received_at, line FROM archive_turns ORDER BY seq`)
	if err != nil {
		return info, readFailure(ctx, err)
	}
	var (
		seq, crc int64
		id       string
		recv     time.Time
		line     []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&seq, &id, &crc, &recv, &line}, func() error {
		if err := w.write(recv.UTC().Format(time.DateOnly), line); err != nil {
			return err
		}
		info.Lines++
		t, err := a.decode(seq, id, crc, line)
		switch {
		case err != nil:
			info.Damaged++
		case t.IsTombstone():
			info.Forgotten++
			want[t.ID] = true
			info.LastSeq = t.Seq
		default:
			info.Turns++
			want[t.ID] = false
			info.LastSeq = t.Seq
		}
		return nil
	})
	if err == nil {
		err = w.close()
	}
	if err != nil {
		if _, ok := isServerError(err); ok || !errors.As(err, new(*fs.PathError)) {
			return info, readFailure(ctx, err)
		}
		return info, err
	}
	info.Files, info.Bytes, info.SHA256 = w.files, w.bytes, hex.EncodeToString(w.sum.Sum(nil))
	if home.Journal != "" {
		n, sum, err := exportCorrections(ctx, tx, home.Journal)
		if err != nil {
			return info, err
		}
		info.Corrections, info.CorrectionsSHA256 = n, sum
	}
	if home.Config != "" {
		if info.Config, info.ConfigSHA256, err = exportConfig(ctx, tx, home.Config); err != nil {
			return info, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return info, readFailure(ctx, err)
	}
	return info, checkExport(dir, info, want)
}

// checkExport opens the exported archive and checks that it holds what
// the rows held.
func checkExport(dir string, info DumpInfo, want map[string]bool) error {
	fa, err := archive.Open(dir, archive.Options{Logger: quiet()})
	if err != nil {
		return fmt.Errorf("open the exported archive: %w", err)
	}
	defer fa.Close()
	mismatch := func(format string, args ...any) error {
		return engram.Errorf(engram.EINTERNAL, "the exported archive in %s does not match the database: "+format, append([]any{dir}, args...)...)
	}
	st := fa.Stats()
	if st.Turns != info.Turns || st.Forgotten != info.Forgotten || st.CorruptLines != info.Damaged {
		return mismatch("it reads %d turns, %d forgotten, %d damaged; the rows hold %d, %d, %d",
			st.Turns, st.Forgotten, st.CorruptLines, info.Turns, info.Forgotten, info.Damaged)
	}
	if fa.LastSeq() != info.LastSeq {
		return mismatch("its last seq is %d, the rows' %d", fa.LastSeq(), info.LastSeq)
	}
	for id, gone := range want {
		if !fa.Known(id) || fa.Forgotten(id) != gone {
			return mismatch("id %q is not archived there as in the database", id)
		}
	}
	files, err := dayFiles(dir)
	if err != nil {
		return err
	}
	sum, _, n, err := hashFiles(files)
	if err != nil {
		return err
	}
	if n != info.Lines || sum != info.SHA256 {
		return mismatch("its %d lines hash to %s, the rows' %d to %s", n, sum, info.Lines, info.SHA256)
	}
	return nil
}

// Import copies the file archive in dir (a home's archive directory) into
// this database, which must hold no turn, no correction and no home file
// (EINVALID otherwise): every line of every day file as it is, tombstones
// and redactions included, each row's seq, id, crc and times taken from
// its line. When home.Journal names a corrections journal (a missing one
// is empty), its complete lines are copied into archive_corrections; when
// home.Config names a config.toml that exists, it is copied whole into
// home_config. It all
// happens in one transaction under the append lock: a failure leaves the
// database empty.
//
// Import opens the file archive first (archive.Open takes its lock: stop
// the server that holds it) and refuses an archive with a damaged line or
// an id on two live lines, naming them (engram doctor and engram repair
// fix them). It then checks the database against the files: the counts of
// turns and tombstones against the file archive's, the last seq, and the
// SHA-256 of the lines in seq order (and of the journal's and the
// config's). Errors:
// EINVALID as above; ELOCKED when a server holds the archive;
// EUNAVAILABLE when the database fails; EINTERNAL when the copy does not
// check out.
func (a *Archive) Import(ctx context.Context, dir string, home HomeFiles) (DumpInfo, error) {
	var info DumpInfo
	if a.closed.Load() {
		return info, errClosed()
	}
	fa, err := archive.Open(dir, archive.Options{Logger: a.log})
	if err != nil {
		return info, err
	}
	defer fa.Close()
	st := fa.Stats()
	if st.CorruptLines > 0 {
		return info, engram.Errorf(engram.EINVALID,
			"the archive in %s has %d damaged lines, which a table cannot hold: run engram doctor, then engram repair", dir, st.CorruptLines)
	}
	files, err := dayFiles(dir)
	if err != nil {
		return info, err
	}
	var corrections [][]byte
	if home.Journal != "" {
		if corrections, err = journalLines(home.Journal); err != nil {
			return info, err
		}
	}
	var config []byte
	if home.Config != "" {
		if config, err = os.ReadFile(home.Config); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return info, err
		}
	}

	conn, err := a.pool.Acquire(ctx)
	if err != nil {
		return info, readFailure(ctx, err)
	}
	defer conn.Release()
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return info, readFailure(ctx, err)
	}
	defer tx.Rollback(ctx)
	var rowsHeld, corrHeld int64
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, appendLockKey); err != nil {
		return info, readFailure(ctx, err)
	}
	var configHeld int64
	if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM archive_turns), (SELECT count(*) FROM archive_corrections), (SELECT count(*) FROM home_config)`).
		Scan(&rowsHeld, &corrHeld, &configHeld); err != nil {
		return info, readFailure(ctx, err)
	}
	if rowsHeld > 0 || corrHeld > 0 || configHeld > 0 {
		return info, engram.Errorf(engram.EINVALID,
			"the database is not empty (%d archived turns, %d corrections, %d home files): migrate into an empty database", rowsHeld, corrHeld, configHeld)
	}
	src := &lineSource{files: files, sum: sha256.New(), live: map[string]string{}}
	defer src.close()
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"archive_turns"},
		[]string{"seq", "id", "ts", "received_at", "crc", "line", "redacted"}, src); err != nil {
		if src.err != nil {
			return info, src.err
		}
		return info, &engram.Error{Code: engram.EUNAVAILABLE, Message: "cannot copy the archive into PostgreSQL; nothing was copied", Err: err}
	}
	info.Files, info.Lines, info.Turns, info.Forgotten = len(files), src.lines, src.turns, src.forgotten
	info.Bytes, info.LastSeq, info.SHA256 = src.bytes, src.last, hex.EncodeToString(src.sum.Sum(nil))
	if len(corrections) > 0 {
		ns := make([]int64, len(corrections))
		for i := range ns {
			ns[i] = int64(i + 1)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO archive_corrections (n, line) SELECT * FROM unnest($1::bigint[], $2::bytea[])`,
			ns, corrections); err != nil {
			return info, &engram.Error{Code: engram.EUNAVAILABLE, Message: "cannot copy the corrections into PostgreSQL; nothing was copied", Err: err}
		}
	}
	info.Corrections, info.CorrectionsSHA256 = int64(len(corrections)), sumLines(corrections)
	if config != nil {
		if _, err := tx.Exec(ctx, `INSERT INTO home_config (name, body) VALUES ($1, $2)`, homeConfigName, config); err != nil {
			return info, &engram.Error{Code: engram.EUNAVAILABLE, Message: "cannot copy config.toml into PostgreSQL; nothing was copied", Err: err}
		}
		info.Config, info.ConfigSHA256 = int64(len(config)), sumBytes(config)
	}
	if err := tx.Commit(ctx); err != nil {
		return info, &engram.Error{Code: engram.EUNAVAILABLE, Message: "PostgreSQL did not confirm the commit of the copy", Err: err}
	}
	a.advance(info.LastSeq)
	if info.Turns != st.Turns || info.Forgotten != st.Forgotten || info.LastSeq != fa.LastSeq() {
		return info, engram.Errorf(engram.EINTERNAL, "the files hold %d turns, %d forgotten, last seq %d; the archive counts %d, %d, %d",
			info.Turns, info.Forgotten, info.LastSeq, st.Turns, st.Forgotten, fa.LastSeq())
	}
	return info, a.checkImport(ctx, info)
}

// checkImport rereads the table and the corrections and checks them
// against what Import read from the files.
func (a *Archive) checkImport(ctx context.Context, info DumpInfo) error {
	var got DumpInfo
	sum := sha256.New()
	rows, err := a.pool.Query(ctx, `SELECT line, ts IS NULL FROM archive_turns ORDER BY seq`)
	if err != nil {
		return readFailure(ctx, err)
	}
	var line []byte
	var tomb bool
	if _, err := pgx.ForEachRow(rows, []any{&line, &tomb}, func() error {
		got.Lines++
		if tomb {
			got.Forgotten++
		} else {
			got.Turns++
		}
		sum.Write(line)
		sum.Write([]byte{'\n'})
		return nil
	}); err != nil {
		return readFailure(ctx, err)
	}
	got.SHA256 = hex.EncodeToString(sum.Sum(nil))
	corr, err := readCorrections(ctx, a.pool)
	if err != nil {
		return err
	}
	config, _, err := readConfig(ctx, a.pool)
	if err != nil {
		return err
	}
	if info.Config > 0 && (int64(len(config)) != info.Config || sumBytes(config) != info.ConfigSHA256) {
		return engram.Errorf(engram.EINTERNAL, "the database's config.toml (%d bytes, SHA-256 %s) is not the home's (%d bytes, %s)",
			len(config), sumBytes(config), info.Config, info.ConfigSHA256)
	}
	if got.Lines != info.Lines || got.Turns != info.Turns || got.Forgotten != info.Forgotten || got.SHA256 != info.SHA256 ||
		int64(len(corr)) != info.Corrections || sumLines(corr) != info.CorrectionsSHA256 {
		return engram.Errorf(engram.EINTERNAL,
			"the database does not match the files: %d lines (%d turns, %d forgotten) hashing to %s and %d corrections; the files %d (%d, %d) hashing to %s and %d corrections",
			got.Lines, got.Turns, got.Forgotten, got.SHA256, len(corr), info.Lines, info.Turns, info.Forgotten, info.SHA256, info.Corrections)
	}
	return nil
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// readCorrections returns the lines of archive_corrections in order.
func readCorrections(ctx context.Context, q querier) ([][]byte, error) {
	rows, err := q.Query(ctx, `SELECT line FROM archive_corrections ORDER BY n`)
	if err != nil {
		return nil, readFailure(ctx, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, readFailure(ctx, err)
	}
	return out, nil
}

// readConfig returns the config.toml that Import kept; ok is false when
// it kept none.
func readConfig(ctx context.Context, q querier) (body []byte, ok bool, err error) {
	rows, err := q.Query(ctx, `SELECT body FROM home_config WHERE name = $1`, homeConfigName)
	if err != nil {
		return nil, false, readFailure(ctx, err)
	}
	bodies, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, false, readFailure(ctx, err)
	}
	if len(bodies) == 0 {
		return nil, false, nil
	}
	return bodies[0], true, nil
}

// exportConfig writes the config.toml in the database, if any, to path,
// and returns its size and SHA-256 as written.
func exportConfig(ctx context.Context, q querier, path string) (int64, string, error) {
	body, ok, err := readConfig(ctx, q)
	if err != nil || !ok {
		return 0, "", err
	}
	if err := writeSynced(path, body); err != nil {
		return 0, "", err
	}
	written, err := os.ReadFile(path)
	if err != nil {
		return 0, "", err
	}
	if sumBytes(written) != sumBytes(body) {
		return 0, "", engram.Errorf(engram.EINTERNAL, "%s does not hold the database's config.toml", path)
	}
	return int64(len(body)), sumBytes(body), nil
}

// sumBytes is the SHA-256 of b, lowercase hex.
func sumBytes(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// exportCorrections writes the corrections in the database to path.
func exportCorrections(ctx context.Context, q querier, path string) (int64, string, error) {
	lines, err := readCorrections(ctx, q)
	if err != nil {
		return 0, "", err
	}
	if len(lines) == 0 {
		return 0, sumLines(nil), nil
	}
	var b []byte
	for _, l := range lines {
		b = append(append(b, l...), '\n')
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return 0, "", err
	}
	if err := writeSynced(path, b); err != nil {
		return 0, "", err
	}
	got, err := journalLines(path)
	if err != nil {
		return 0, "", err
	}
	if sumLines(got) != sumLines(lines) {
		return 0, "", engram.Errorf(engram.EINTERNAL, "the corrections written to %s do not read back as the database's", path)
	}
	return int64(len(lines)), sumLines(lines), nil
}

// writeSynced creates path (it must not exist) with b, 0600, and fsyncs
// it and its directory.
func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// journalLines returns the complete lines of the corrections journal at
// path (none when it does not exist), without their '\n'. A torn last
// line, which was never acknowledged, is left out, as the journal does.
func journalLines(path string) ([][]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for {
		i := slices.Index(b, '\n')
		if i < 0 {
			return out, nil
		}
		out = append(out, b[:i:i])
		b = b[i+1:]
	}
}

// sumLines is the SHA-256 of lines, each with its '\n'.
func sumLines(lines [][]byte) string {
	h := sha256.New()
	for _, l := range lines {
		h.Write(l)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// checkEmptyDir refuses a dir that exists and holds anything.
func checkEmptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return engram.Errorf(engram.EINVALID, "%s is not empty: export into a new or empty folder", dir)
	}
	return nil
}

// checkEmptyFile refuses a file that exists and is not empty.
func checkEmptyFile(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Size() > 0 || fi.IsDir() {
		return engram.Errorf(engram.EINVALID, "%s exists and is not empty", path)
	}
	return os.Remove(path)
}

// dayWriter writes lines into day files, one after the other.
type dayWriter struct {
	dir   string
	day   string
	f     *os.File
	w     *bufio.Writer
	sum   hash.Hash
	files int
	bytes int64
	dirs  map[string]bool // created, to fsync at the end
}

// write appends line and a '\n' to the file of day, opening it when the
// day changes. Days only go forward: rows in seq order have received_at
// in order.
func (d *dayWriter) write(day string, line []byte) error {
	if day != d.day {
		if err := d.closeFile(); err != nil {
			return err
		}
		mdir := filepath.Join(d.dir, day[0:4], day[5:7])
		if err := d.mkdir(mdir); err != nil {
			return err
		}
		f, err := os.OpenFile(filepath.Join(mdir, day+".jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		d.f, d.w, d.day = f, bufio.NewWriterSize(f, 256<<10), day
		d.files++
	}
	d.sum.Write(line)
	d.sum.Write([]byte{'\n'})
	d.bytes += int64(len(line)) + 1
	if _, err := d.w.Write(line); err != nil {
		return err
	}
	return d.w.WriteByte('\n')
}

// mkdir creates dir and the ones above it up to d.dir, 0700.
func (d *dayWriter) mkdir(dir string) error {
	if d.dirs == nil {
		d.dirs = map[string]bool{}
	}
	for p := dir; ; p = filepath.Dir(p) {
		d.dirs[p] = true
		if p == d.dir || p == filepath.Dir(p) {
			break
		}
	}
	return os.MkdirAll(dir, 0o700)
}

// closeFile flushes, fsyncs and closes the current file.
func (d *dayWriter) closeFile() error {
	if d.f == nil {
		return nil
	}
	err := d.w.Flush()
	if err == nil {
		err = d.f.Sync()
	}
	if cerr := d.f.Close(); err == nil {
		err = cerr
	}
	d.f = nil
	return err
}

// close closes the current file and fsyncs every directory written to.
func (d *dayWriter) close() error {
	if err := d.closeFile(); err != nil {
		return err
	}
	dirs := make([]string, 0, len(d.dirs))
	for p := range d.dirs {
		dirs = append(dirs, p)
	}
	slices.Sort(dirs)
	for _, p := range slices.Backward(dirs) {
		if err := syncDir(p); err != nil {
			return err
		}
	}
	if d.dirs != nil {
		if err := syncDir(filepath.Dir(d.dir)); err != nil {
			return err
		}
	}
	d.dirs = nil
	return nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// dayFiles lists the day files of the archive in dir, in name order,
// which is seq order.
func dayFiles(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "[0-9][0-9][0-9][0-9]", "[0-9][0-9]", "*.jsonl"))
	if err != nil {
		return nil, err
	}
	out := files[:0]
	for _, p := range files {
		day := strings.TrimSuffix(filepath.Base(p), ".jsonl")
		if _, err := time.Parse(time.DateOnly, day); err == nil &&
			filepath.Base(filepath.Dir(filepath.Dir(p))) == day[0:4] && filepath.Base(filepath.Dir(p)) == day[5:7] {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}

// hashFiles returns the SHA-256 of the files' bytes one after the other,
// their size and their lines.
func hashFiles(files []string) (string, int64, int64, error) {
	h := sha256.New()
	var size, lines int64
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return "", 0, 0, err
		}
		r := bufio.NewReaderSize(f, 256<<10)
		for {
			b, err := r.ReadSlice('\n')
			h.Write(b)
			size += int64(len(b))
			if len(b) > 0 && b[len(b)-1] == '\n' {
				lines++
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				f.Close()
				return "", 0, 0, err
			}
		}
		f.Close()
	}
	return hex.EncodeToString(h.Sum(nil)), size, lines, nil
}

// lineSource feeds CopyFrom the lines of the day files, in order, each
// checked: readable, its seq above the one before, its id not live on
// another line.
type lineSource struct {
	files []string
	i     int // the next file
	f     *os.File
	r     *bufio.Reader
	path  string
	num   int // line number in path
	row   []any
	err   error
	sum   hash.Hash
	live  map[string]string // live id -> where its line is

	// What was read.
	lines, turns, forgotten, bytes, last int64
}

func (s *lineSource) Next() bool {
	for s.err == nil {
		if s.r == nil {
			if s.i == len(s.files) {
				return false
			}
			s.path = s.files[s.i]
			s.i++
			s.num = 0
			f, err := os.Open(s.path)
			if err != nil {
				s.err = err
				return false
			}
			s.f, s.r = f, bufio.NewReaderSize(f, 256<<10)
		}
		line, err := s.r.ReadBytes('\n')
		if len(line) == 0 && errors.Is(err, io.EOF) {
			s.close()
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			s.err = err
			return false
		}
		s.num++
		s.err = s.take(line)
		return s.err == nil
	}
	return false
}

// take checks one line (with its '\n' unless it is a file's last) and
// makes it the row.
func (s *lineSource) take(line []byte) error {
	where := fmt.Sprintf("%s:%d", s.path, s.num)
	if line[len(line)-1] != '\n' {
		return engram.Errorf(engram.EINVALID, "%s: the last line has no end: run engram doctor", where)
	}
	s.sum.Write(line)
	s.bytes += int64(len(line))
	line = line[:len(line)-1]
	t, err := archive.DecodeLine(line)
	if err != nil {
		return engram.Errorf(engram.EINVALID, "%s: a damaged line (%v): run engram doctor, then engram repair", where, err)
	}
	if t.Seq <= s.last {
		return engram.Errorf(engram.EINVALID, "%s: seq %d after seq %d: run engram doctor", where, t.Seq, s.last)
	}
	if first, dup := s.live[t.ID]; dup && !t.IsTombstone() {
		return engram.Errorf(engram.EINVALID, "%s: id %q is also on the live line %s: run engram doctor", where, t.ID, first)
	}
	crc, _ := archive.LineCRC(line)
	var ts any
	if t.IsTombstone() {
		delete(s.live, t.ID)
		s.forgotten++
	} else {
		s.live[t.ID] = where
		ts = t.TS
		s.turns++
	}
	s.last = t.Seq
	s.lines++
	s.row = []any{t.Seq, t.ID, ts, t.ReceivedAt, int64(crc), line, t.Redacted != nil && !t.IsTombstone()}
	return nil
}

func (s *lineSource) Values() ([]any, error) { return s.row, nil }
func (s *lineSource) Err() error             { return s.err }

func (s *lineSource) close() {
	if s.f != nil {
		s.f.Close()
		s.f, s.r = nil, nil
	}
}

// quiet is a logger for an archive opened only to be checked.
func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }
