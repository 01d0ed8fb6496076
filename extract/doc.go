// Package extract reads what the derived layers say from the turns, apart
// from the pipeline that writes them: the offline L1 extractors and what a
// memory means for the persona and the graph.
//
// NLPExtractor, the default, tags each sentence of chat English once
// (prose's tagger) and reads clauses with their subject, verb group and
// complement: decisions with their rationale, preferences, plans, identity
// and relationship facts, events, and actions on things, with pronouns
// resolved to the session's speakers (and, where only one can be meant,
// to the speaker's people and things named just before) and relative
// times resolved against the turn's time (package timeexpr). RulesExtractor, the earlier one, reads
// the same kinds with patterns over sentences, English and Chinese; the
// NLP extractor hands Chinese sentences to it. Both are deterministic: the
// same turns give the same memories with the same ids.
//
// MemoryFacet and MemoryTriple turn a memory with a relation into a persona
// observation (by kind: identity, relationship, preference, project, habit,
// activity, place, possession, plan, pet; and, read from any memory's words, a
// health condition (health.go), a pet of the speaker's or a pastime told
// with "go" or a class (activity.go)) and a knowledge-graph triple; the
// pipeline's PersonaWorker and GraphWorker apply them.
//
// The LLM extractors (packages ollama and openai) write memories to the
// same conventions (internal/llm).
package extract
