package palace

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	engram "github.com/engram-dev/engram"
)

// The keyword index of the memories' text (memories_fts) in memory, kept
// as the scenes' is (kwscenes.go): every insert and update of a memory
// takes the next change number (memories.seq), a deletion (a forget)
// counts in palace_meta (keyMemoriesDeleted). Superseded and wrong
// memories stay in it, as they stay in memories_fts, whose statistics
// count them; a search leaves them out. Deep recall searches the memories
// at every question: at 100,000 turns FTS5 computing bm25 for every
// memory holding a query word was a tenth of its CPU.

// keyMemoriesDeleted counts the deletions of memories.
const keyMemoriesDeleted = "memories_deleted"

// memoriesSource is where the memories' index reads them.
var memoriesSource = seqSource{table: "memories", deletedKey: keyMemoriesDeleted, kinds: []string{""}, changes: memoryChanges}

// memoryChanges reads the memories written after a change number, with the
// text memories_fts holds of each (see putMemory).
func memoryChanges(ctx context.Context, tx *sql.Tx, after int64, limit int) ([]unitChange, error) {
	rows, err := tx.QueryContext(ctx, `SELECT n, seq, id, namespace, ts, text, rationale, entities,
			superseded_by IS NOT NULL OR wrong <> 0
		FROM memories WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, err
	}
	var changes []unitChange
	err = eachRow(rows, func() error {
		var (
			c    unitChange
			m    engram.Memory
			ents string
			ts   sql.NullInt64
		)
		if err := rows.Scan(&c.add.seq, &c.change, &c.id, &c.add.namespace, &ts, &m.Text, &m.Rationale, &ents, &c.add.hidden); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(ents), &m.Entities); err != nil {
			return fmt.Errorf("memory %s: entities: %w", c.id, err)
		}
		text, err := indexText(memoryIndexText(m))
		if err != nil {
			return err
		}
		c.add.text = text
		c.add.ts, c.add.hasTS = ts.Int64, ts.Valid
		changes = append(changes, c)
		return nil
	})
	return changes, err
}

// searchMemoriesFromMemory is SearchMemories from the index; ok false when
// the index cannot answer.
func (db *DB) searchMemoriesFromMemory(ctx context.Context, q engram.TextQuery, terms []term, limit int) ([]engram.MemoryHit, bool, error) {
	var out []engram.MemoryHit
	ok, err := searchOne(ctx, db, &db.mkw, terms, limit,
		func(x *kwIndex) (func(*kwDoc) bool, bool) {
			return x.pointFilter(q.Namespace, nanosOrZero(q.From), nanosOrZero(q.To))
		},
		`SELECT `+memoryColumns+` FROM memories m WHERE m.n IN (SELECT value FROM json_each(?))`,
		func(rows *sql.Rows, add func(int64, engram.Memory)) error {
			return scanMemories(rows, func(n int64, m engram.Memory, _ float64) { add(n, m) })
		},
		func(m engram.Memory, score float64) {
			// Superseded or marked wrong since it was ranked: left out,
			// as FTS5 would have.
			if m.SupersededBy == "" && !m.Wrong {
				out = append(out, engram.MemoryHit{Memory: m, Score: score})
			}
		})
	if err != nil || !ok {
		return nil, false, err
	}
	return out, true, nil
}
