package palace

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	engram "github.com/engram-dev/engram"
)

// The keyword index of the scenes' text (scenes_fts: title, summary and
// participants) in memory, kept as the units' is (kwunits.go): every write
// of a scene takes the next change number (scenes.seq), a deletion (a
// forget) counts in palace_meta (keyScenesDeleted). Deep recall searches
// the scenes at every question: at 100,000 turns FTS5 computing bm25 for
// every scene holding a query word was a third of its CPU.

// keyScenesDeleted counts the deletions of scenes.
const keyScenesDeleted = "scenes_deleted"

// scenesSource is where the scenes' index reads them.
var scenesSource = seqSource{table: "scenes", deletedKey: keyScenesDeleted, kinds: []string{""}, changes: sceneChanges}

// sceneChanges reads the scenes written after a change number, with the
// text scenes_fts holds of each (see PutScenes).
func sceneChanges(ctx context.Context, tx *sql.Tx, after int64, limit int) ([]unitChange, error) {
	rows, err := tx.QueryContext(ctx, `SELECT n, seq, id, namespace, start_ts, end_ts, title, summary, participants
		FROM scenes WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, err
	}
	var changes []unitChange
	err = eachRow(rows, func() error {
		var (
			c                     unitChange
			start, end            sql.NullInt64
			title, summary, parts string
		)
		if err := rows.Scan(&c.add.seq, &c.change, &c.id, &c.add.namespace, &start, &end, &title, &summary, &parts); err != nil {
			return err
		}
		var ps []string
		if err := json.Unmarshal([]byte(parts), &ps); err != nil {
			return fmt.Errorf("scene %s: participants: %w", c.id, err)
		}
		text, err := indexText(title + "\n" + summary + "\n" + strings.Join(ps, " "))
		if err != nil {
			return err
		}
		c.add.text = text
		c.add.ts, c.add.hasTS = start.Int64, start.Valid
		c.add.end, c.add.hasEnd = end.Int64, end.Valid
		changes = append(changes, c)
		return nil
	})
	return changes, err
}

// searchScenesFromMemory is SearchScenes from the index; ok false when the
// index cannot answer.
func (db *DB) searchScenesFromMemory(ctx context.Context, q engram.TextQuery, terms []term, limit int) ([]engram.SceneHit, bool, error) {
	var out []engram.SceneHit
	ok, err := searchOne(ctx, db, &db.skw, terms, limit,
		func(x *kwIndex) (func(*kwDoc) bool, bool) { return spanFilter(x, q) },
		// The row number comes where a search's rank would (scanRanked
		// reads it as a float64, exact for any row number).
		`SELECT `+sceneColumns+`, s.n FROM scenes s WHERE s.n IN (SELECT value FROM json_each(?))`,
		func(rows *sql.Rows, add func(int64, engram.Scene)) error {
			return scanScenes(rows, func(s engram.Scene, n float64) { add(int64(n), s) })
		},
		func(s engram.Scene, score float64) { out = append(out, engram.SceneHit{Scene: s, Score: score}) })
	if err != nil || !ok {
		return nil, false, err
	}
	return out, true, nil
}
