-- The turns' trigram index without positions (detail=none). It finds the
-- turns that hold a term inside a longer token (KafkaConsumer, 30001x):
-- with positions FTS5 matched the term's trigrams as a phrase; now a lookup
-- matches every trigram of the term and keeps the turns whose text holds
-- the term (palace.search.substring). Writing a turn's trigrams with their
-- positions was two fifths of indexing a turn, and the index a tenth of the
-- palace: at 100,000 turns 47 MB, 14 MB without (docs/benchmarks.md,
-- "The trigram index without positions"). The index is rebuilt from the
-- turns, in NFKC as the palace writes it (engram_nfkc, palace/text.go): a
-- few seconds at 100,000 turns, about a minute at a million.
DROP TABLE turns_trigram;
CREATE VIRTUAL TABLE turns_trigram USING fts5(
	content,
	content = '',
	contentless_delete = 1,
	tokenize = 'trigram',
	detail = none
);
INSERT INTO turns_trigram (turns_trigram, rank) VALUES ('pgsz', 1000);
INSERT INTO turns_trigram (rowid, content) SELECT seq, engram_nfkc(content) FROM turns;
