package kwindex

import (
	"fmt"
	"sync"
	"time"

	"github.com/go-ego/gse"
)

// The gse segmenter is shared by every DB in the process and loaded on first
// use, by the first Chinese or Japanese text indexed or searched: loading the
// simplified-Chinese dictionary takes time and a large heap, which an
// English-only installation should never pay. After loading, gse
// only reads its dictionary and HMM tables, so one segmenter serves
// concurrent callers.
var segmenter struct {
	once sync.Once
	seg  gse.Segmenter
	err  error
	took time.Duration
}

// loadSegmenter returns the segmenter, loading its dictionary once per process.
func loadSegmenter() (*gse.Segmenter, error) {
	segmenter.once.Do(load)
	return &segmenter.seg, segmenter.err
}

// load loads gse's embedded "zh_s" dictionary, but not "ja": the Japanese one
// costs several times as much again, and its word weights (MeCab costs,
// not frequencies) skew gse's shortest-path search so badly that even
// Chinese text falls apart into single characters when both are loaded.
// Japanese is instead handled by splitting kana from kanji before gse sees
// it (see IndexText), with gse's HMM finding kanji words such as 会議 that
// the Chinese dictionary lacks.
func load() {
	start := time.Now()
	segmenter.seg.SkipLog = true
	if err := segmenter.seg.LoadDictEmbed("zh_s"); err != nil {
		segmenter.err = fmt.Errorf("kwindex: load gse dictionary: %w", err)
	}
	segmenter.took = time.Since(start)
}

// PreloadCJK loads the Chinese/Japanese word segmenter now rather than at the
// first CJK turn or query, which would otherwise wait about a second for it.
// It returns how long the load took, zero if it was loaded before.
func PreloadCJK() (time.Duration, error) {
	loaded := false
	segmenter.once.Do(func() {
		loaded = true
		load()
	})
	if !loaded {
		return 0, segmenter.err
	}
	return segmenter.took, segmenter.err
}

// cutIndex splits a run of Han characters into words for the index, in gse's
// search mode with HMM (words plus the dictionary words inside them).
func cutIndex(s string) ([]string, error) {
	seg, err := loadSegmenter()
	if err != nil {
		return nil, err
	}
	return seg.CutSearch(s, true), nil
}

// cutQuery splits a run of Han characters of a query into words, in gse's
// accurate mode with HMM.
func cutQuery(s string) ([]string, error) {
	seg, err := loadSegmenter()
	if err != nil {
		return nil, err
	}
	return seg.Cut(s, true), nil
}
