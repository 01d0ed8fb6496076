package layertest

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/palace"
)

// Dump is every derived row of the palace of the engram home at home
// (its layers and their workers' watermarks), as comparable text.
func Dump(tb testing.TB, home string) []string {
	tb.Helper()
	p, err := palace.Open(filepath.Join(home, "palace.db"), palace.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer p.Close()
	var out []string
	err = p.View(context.Background(), func(tx *sql.Tx) error {
		for _, q := range []string{
			`SELECT id, type, subject, text, sources, importance, coalesce(superseded_by, ''), seq FROM memories ORDER BY id`,
			`SELECT id, memory FROM memory_merges ORDER BY id`,
			`SELECT id, session, title, summary, participants, turns, coalesce(draft, ''), seq FROM scenes ORDER BY id`,
			`SELECT speaker, facet, key, value, since, evidence, history FROM persona_facets ORDER BY 1, 2, 3`,
			`SELECT e.name, a.norm FROM kg_aliases a JOIN kg_entities e ON e.n = a.entity ORDER BY 2`,
			`SELECT id, predicate, valid_from, coalesce(valid_to, 0), confidence, sources FROM kg_triples ORDER BY id`,
			`SELECT key, value FROM palace_meta WHERE key LIKE 'worker:%' ORDER BY key`,
		} {
			rows, err := tx.Query(q)
			if err != nil {
				return err
			}
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					rows.Close()
					return err
				}
				row := make([]string, len(vals))
				for i, v := range vals {
					if b, ok := v.([]byte); ok {
						v = string(b)
					}
					row[i] = fmt.Sprint(v)
				}
				out = append(out, strings.Join(row, " | "))
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// ArchiveTurns opens the archive of the engram home at home and returns
// its turns by id and its last seq.
func ArchiveTurns(tb testing.TB, home string) (map[string]engram.Turn, int64) {
	tb.Helper()
	a, err := archive.Open(filepath.Join(home, "archive"), archive.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	defer a.Close()
	turns := map[string]engram.Turn{}
	if err := a.Stream(context.Background(), 0, func(t engram.Turn) error {
		turns[t.ID] = t
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	return turns, a.LastSeq()
}
