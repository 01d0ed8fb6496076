package embed

// stopwords are English function words. Their features keep 0.3 of the
// usual weight: they match everywhere and say little. A fixed list, never
// learned from stored text, so vectors never go stale. Contractions are
// split before the lookup ("don't" is "do" "not").
var stopwords = func() map[string]struct{} {
	m := make(map[string]struct{})
	for _, w := range []string{
		"a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at",
		"be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
		"can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further",
		"had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how",
		"i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself",
		"no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves",
		"out", "over", "own", "same", "shall", "she", "should", "so", "some", "such",
		"than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they",
		"this", "those", "through", "to", "too", "under", "until", "up", "very",
		"was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "whose", "why", "will",
		"with", "would", "you", "your", "yours", "yourself", "yourselves",
	} {
		m[w] = struct{}{}
	}
	return m
}()
