// Package textutil holds the small pieces of text handling that several
// packages share: which script a character belongs to (Chinese, Japanese
// and Korean text is cut differently from text that separates words with
// spaces), and the English stopword list.
//
// # Caveats
//
// Keyword search in the palace tokenises and stems inside SQLite (FTS5's
// unicode61 and porter tokenizers); nothing here changes what the palace
// indexes. The stopword list is the core each user starts from: the
// palace's query terms, the builtin embedder's weights and the scene
// segmenter each add the words of their own purpose.
package textutil
