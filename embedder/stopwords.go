package embedder

import "github.com/engram-dev/engram/internal/textutil"

// stopwords are English function words. Their features keep 0.3 of the
// usual weight: they match everywhere and say little. A fixed list, never
// learned from stored text, so vectors never go stale. Contractions are
// split before the lookup ("don't" is "do" "not").
var stopwords = textutil.StopwordSet(textutil.EnglishStopwords)
