package textutil_test

import (
	"testing"

	"github.com/engram-dev/engram/internal/textutil"
)

func TestScriptOf(t *testing.T) {
	for _, c := range []struct {
		r    rune
		want textutil.Script
	}{
		{'a', textutil.ScriptOther}, {'7', textutil.ScriptOther}, {'é', textutil.ScriptOther}, {'Ж', textutil.ScriptOther},
		{'数', textutil.ScriptHan}, {'國', textutil.ScriptHan},
		{'の', textutil.ScriptHiragana}, {'サ', textutil.ScriptKatakana}, {'ー', textutil.ScriptKatakana},
		{'한', textutil.ScriptHangul}, {'ᄀ', textutil.ScriptHangul},
		{'。', textutil.ScriptOther}, {'，', textutil.ScriptOther},
	} {
		if got := textutil.ScriptOf(c.r); got != c.want {
			t.Errorf("ScriptOf(%q) = %d, want %d", c.r, got, c.want)
		}
		if got := textutil.IsCJK(c.r); got != (c.want != textutil.ScriptOther) {
			t.Errorf("IsCJK(%q) = %v", c.r, got)
		}
	}
}

func TestStopwordSet(t *testing.T) {
	m := textutil.StopwordSet(textutil.EnglishStopwords, "please  tell\nlet")
	for _, w := range []string{"the", "yourselves", "now", "please", "let"} {
		if !m[w] {
			t.Errorf("%q is not a stopword", w)
		}
	}
	for _, w := range []string{"", "port", "redis", "migration"} {
		if m[w] {
			t.Errorf("%q is a stopword", w)
		}
	}
	if n := len(textutil.StopwordSet(textutil.EnglishStopwords)); n != 128 {
		t.Errorf("%d English stopwords, want 128", n)
	}
}
