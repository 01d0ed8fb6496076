-- Full-text leaf pages of 1,000 bytes instead of FTS5's 4,050. FTS5 merges
-- its segments inside the transaction that writes: every 64 leaf pages
-- written, it merges 64 pages per level of the index, at 100,000 turns some
-- 400 pages, which made one single-turn commit in about fifty take 20 to 60
-- ms more (a POST's p99). The merge step is counted in pages, so smaller
-- pages make each step a quarter of the work; a one-turn write still writes
-- one leaf a table. Existing segments keep their pages until merged.
-- docs/benchmarks.md ("Smaller full-text pages") has the figures.
INSERT INTO turns_fts (turns_fts, rank) VALUES ('pgsz', 1000);
INSERT INTO turns_trigram (turns_trigram, rank) VALUES ('pgsz', 1000);
INSERT INTO turns_cjk (turns_cjk, rank) VALUES ('pgsz', 1000);
INSERT INTO memories_fts (memories_fts, rank) VALUES ('pgsz', 1000);
INSERT INTO scenes_fts (scenes_fts, rank) VALUES ('pgsz', 1000);
INSERT INTO kg_fts (kg_fts, rank) VALUES ('pgsz', 1000);
INSERT INTO vault_chunks_fts (vault_chunks_fts, rank) VALUES ('pgsz', 1000);
INSERT INTO vault_chunks_trigram (vault_chunks_trigram, rank) VALUES ('pgsz', 1000);
INSERT INTO unit_sessions_fts (unit_sessions_fts, rank) VALUES ('pgsz', 1000);
INSERT INTO unit_scenes_fts (unit_scenes_fts, rank) VALUES ('pgsz', 1000);
