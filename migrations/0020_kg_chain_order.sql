-- A chain's triples in the order of their first statements (valid_from,
-- predicate, object: a triple holds its first statement's key), so that
-- palace.ApplyTriples rebuilds a chain from the group before its first
-- new statement on instead of from its beginning. Rebuilding every
-- triple of a chain for each statement added made the graph's cost grow
-- with the square of a chain's length. It serves every lookup the index
-- on (namespace, chain) served.
CREATE INDEX kg_triples_chain_order ON kg_triples (namespace, chain, valid_from, predicate, object);
DROP INDEX kg_triples_chain;
