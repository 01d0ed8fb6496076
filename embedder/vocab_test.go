package embedder

import (
	"errors"
	"strings"
	"testing"
)

func TestVocab(t *testing.T) {
	v, err := loadVocab()
	if err != nil {
		t.Fatal(err)
	}
	if len(v.index) != 40000 || v.dim != WordDim {
		t.Fatalf("vocabulary of %d words of dimension %d, want 40000 of %d", len(v.index), v.dim, WordDim)
	}
	// Every word must be reachable: the generator's filter and the
	// tokenizer must agree, or a word's vector is dead weight.
	s := new(scratch)
	for w := range v.index {
		s.tokenize(w)
		if len(s.toks) != 1 || string(s.toks[0].b) != w || s.toks[0].kind != tokWord {
			t.Errorf("vocabulary word %q tokenizes to %d tokens, first %q", w, len(s.toks), s.toks[0].b)
		}
	}
	for _, w := range []string{"the", "port", "architecture", "decided", "dog", "puppy"} {
		if _, ok := v.index[w]; !ok {
			t.Errorf("%q is missing from the vocabulary", w)
		}
	}
	// SIF: frequent words weigh less than rare ones (per unit of scale).
	the, arch := v.index["the"], v.index["architecture"]
	if v.weight[the] >= v.weight[arch] {
		t.Errorf("weight of %q %.4f, not below %q %.4f", "the", v.weight[the], "architecture", v.weight[arch])
	}
}

func TestParseVocabCorrupt(t *testing.T) {
	good := gloveData[:len(gloveMagic)+12] // header only
	for name, data := range map[string]string{
		"empty":       "",
		"bad magic":   "XGLOVE01" + gloveData[len(gloveMagic):],
		"truncated":   gloveData[:len(gloveData)/2],
		"header only": good,
		"extra bytes": gloveData + "x",
	} {
		if _, err := parseVocab(data); !errors.Is(err, errCorrupt) {
			t.Errorf("%s: parseVocab = %v, want errCorrupt", name, err)
		}
	}
}

func TestTokenize(t *testing.T) {
	s := new(scratch)
	for _, tc := range []struct{ in, want string }{
		{"Hello, World!", "w:hello w:world"},
		{"I don't know", "w:i w:do w:not w:know"},
		{"can't won't shan't", "w:can w:not w:will w:not w:shall w:not"},
		{"Ana's o'neill rock'n'roll", "w:ana w:o w:neill w:rock w:n w:roll"},
		{"it’s", "w:it"},
		{"'s 'hello' x'", "w:s w:hello w:x"},
		{"端口30001を使う", "c:端口 w:30001 c:を使う"},
		{"ＡＰＩ　ｶﾀｶﾅ", "w:api c:カタカナ"},
		{"e\u0301te\u0301", "w:été"},
		{"👍🏽🎉 ok", "s:👍 s:🎉 w:ok"},
		{"\u0301x", "w:x"},
		{"", ""},
	} {
		s.tokenize(tc.in)
		var got []string
		for _, tk := range s.toks {
			got = append(got, map[tokenKind]string{tokWord: "w:", tokCJK: "c:", tokSymbol: "s:"}[tk.kind]+string(tk.b))
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("tokenize(%q) = %q, want %q", tc.in, g, tc.want)
		}
	}
}
