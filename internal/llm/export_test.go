package llm

// MaxExcerpt is maxExcerpt for the tests of package llm_test, which import
// llmtest (and through it llm) and so cannot sit in package llm.
const MaxExcerpt = maxExcerpt
