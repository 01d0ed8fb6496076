-- No merging of full-text segments inside the transactions that write
-- them. FTS5 merges a table's segments as part of the commit that adds one
-- (automerge): one single-turn commit in some fifty paid for a merge step
-- over every level of four tables, 10 to 20 ms more at 100,000 turns (a
-- POST's p99), and a layer job's transaction held the writer, and so the
-- next POST, that much longer. The palace's merger (palace/merger.go) now
-- does that work in small transactions of its own behind every other
-- write. FTS5 still merges a level in the writing transaction once it holds
-- 16 segments (crisismerge), should the merger fall that far behind.
-- docs/benchmarks.md ("Full-text merges behind the writes") has the figures.
INSERT INTO turns_fts (turns_fts, rank) VALUES ('automerge', 0);
INSERT INTO turns_trigram (turns_trigram, rank) VALUES ('automerge', 0);
INSERT INTO turns_cjk (turns_cjk, rank) VALUES ('automerge', 0);
INSERT INTO memories_fts (memories_fts, rank) VALUES ('automerge', 0);
INSERT INTO scenes_fts (scenes_fts, rank) VALUES ('automerge', 0);
INSERT INTO kg_fts (kg_fts, rank) VALUES ('automerge', 0);
INSERT INTO vault_chunks_fts (vault_chunks_fts, rank) VALUES ('automerge', 0);
INSERT INTO vault_chunks_trigram (vault_chunks_trigram, rank) VALUES ('automerge', 0);
INSERT INTO unit_sessions_fts (unit_sessions_fts, rank) VALUES ('automerge', 0);
INSERT INTO unit_scenes_fts (unit_scenes_fts, rank) VALUES ('automerge', 0);
