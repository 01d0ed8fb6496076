package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readSafetensors decodes what safetensors wrote and checks that the data
// ranges tile the data section exactly.
func readSafetensors(t *testing.T, b []byte) map[string][]float32 {
	t.Helper()
	n := binary.LittleEndian.Uint64(b)
	if n%8 != 0 || 8+n > uint64(len(b)) {
		t.Fatalf("header length %d (file %d bytes)", n, len(b))
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &header); err != nil {
		t.Fatal(err)
	}
	data := b[8+n:]
	out := map[string][]float32{}
	var total int64
	for name, raw := range header {
		if name == "__metadata__" {
			continue
		}
		var e struct {
			DType       string   `json:"dtype"`
			Shape       []int    `json:"shape"`
			DataOffsets [2]int64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		size := int64(4)
		for _, d := range e.Shape {
			size *= int64(d)
		}
		if e.DType != "F32" || e.DataOffsets[1]-e.DataOffsets[0] != size || e.DataOffsets[1] > int64(len(data)) {
			t.Fatalf("%s: %+v does not fit %d data bytes", name, e, len(data))
		}
		total += size
		v := make([]float32, size/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[e.DataOffsets[0]+int64(4*i):]))
		}
		out[name] = v
	}
	if total != int64(len(data)) {
		t.Fatalf("tensors cover %d of %d data bytes", total, len(data))
	}
	return out
}

func TestSafetensors(t *testing.T) {
	b, err := safetensors([]tensor{
		{name: "a", shape: []int{2, 3}, data: []float32{1, 2, 3, 4, 5, 6}},
		filled("b", -0.5, 5),
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := readSafetensors(t, b)
	if got := ts["a"]; len(got) != 6 || got[5] != 6 {
		t.Fatalf("a = %v", got)
	}
	if got := ts["b"]; len(got) != 5 || got[0] != -0.5 {
		t.Fatalf("b = %v", got)
	}
	if _, err := safetensors([]tensor{{name: "x", shape: []int{2}, data: []float32{1}}}); err == nil {
		t.Fatal("a shape that does not match the data was accepted")
	}
}

// checkVocab checks what ollama's converter needs: ids 0..V-1 without gaps,
// V = config vocab_size, and the special tokens among the added tokens.
func checkVocab(t *testing.T, files map[string][]byte, special ...string) {
	t.Helper()
	var config struct {
		VocabSize int `json:"vocab_size"`
	}
	if err := json.Unmarshal(files["config.json"], &config); err != nil {
		t.Fatal(err)
	}
	var tok struct {
		Added []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens"`
		Model struct {
			Vocab map[string]int `json:"vocab"`
		} `json:"model"`
	}
	if err := json.Unmarshal(files["tokenizer.json"], &tok); err != nil {
		t.Fatal(err)
	}
	seen := make([]bool, config.VocabSize)
	for s, id := range tok.Model.Vocab {
		if id < 0 || id >= config.VocabSize || seen[id] {
			t.Fatalf("token %q has id %d (vocab_size %d, or a duplicate)", s, id, config.VocabSize)
		}
		seen[id] = true
	}
	if len(tok.Model.Vocab) != config.VocabSize {
		t.Fatalf("%d tokens, vocab_size %d", len(tok.Model.Vocab), config.VocabSize)
	}
	for _, s := range special {
		found := false
		for _, a := range tok.Added {
			found = found || (a.Content == s && a.Special && tok.Model.Vocab[s] == a.ID)
		}
		if !found {
			t.Fatalf("%s is not a special added token", s)
		}
	}
}

func TestEmbedModel(t *testing.T) {
	files, _ := embedModel()
	checkVocab(t, files, "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
	ts := readSafetensors(t, files["model.safetensors"])
	emb := ts["embeddings.word_embeddings.weight"]
	tokens, _ := embedVocab()
	if len(emb) != len(tokens)*embedHidden {
		t.Fatalf("word embeddings hold %d values for %d tokens", len(emb), len(tokens))
	}
	for _, want := range []string{"the", "company", "##s", "z", "."} {
		found := false
		for _, tok := range tokens {
			found = found || tok == want
		}
		if !found {
			t.Errorf("vocabulary lacks %q", want)
		}
	}
	// Simulate the model: LayerNorm, then the last LayerNorm's affine step,
	// and check that a token's output is its weighted vector.
	ln := func(x []float32) []float64 {
		var m, v float64
		for _, f := range x {
			m += float64(f)
		}
		m /= float64(len(x))
		for _, f := range x {
			v += (float64(f) - m) * (float64(f) - m)
		}
		v /= float64(len(x))
		out := make([]float64, len(x))
		for i, f := range x {
			out[i] = (float64(f) - m) / math.Sqrt(v+1e-12)
		}
		return out
	}
	gamma, beta := ts["encoder.layer.0.output.LayerNorm.weight"], ts["encoder.layer.0.output.LayerNorm.bias"]
	for id, tok := range tokens[:50] {
		row := emb[id*embedHidden : (id+1)*embedHidden]
		y := ln(row)
		var errMax, sig float64
		for i := range y {
			got := y[i]*float64(gamma[i]) + float64(beta[i])
			want := float64(row[i]) * float64(embedHidden) / (embedConst * math.Sqrt(float64(embedHidden-1)))
			if i == embedConstDim {
				want = 0
			}
			errMax = max(errMax, math.Abs(got-want))
			sig = max(sig, math.Abs(want))
		}
		if errMax > 1e-3*sig+1e-7 {
			t.Fatalf("token %q: the LayerNorms distort its vector (max error %g, max value %g)", tok, errMax, sig)
		}
	}
}

func TestChatModel(t *testing.T) {
	files, mf := chatModel()
	checkVocab(t, files, chatSpecial...)
	readSafetensors(t, files["model.safetensors"])
	if !strings.Contains(mf, "PARAMETER stop <|im_end|>") || !strings.Contains(mf, "<|im_start|>assistant\n\"\"\"") {
		t.Fatalf("Modelfile:\n%s", mf)
	}
}

// The generator must write the same bytes on every run: scripts/ollama.sh
// remakes a model only when the generator's source changes.
func TestRunDeterministic(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	for _, d := range dirs {
		if err := run([]string{"-kind", "embed", "-out", d, "-modelfile", filepath.Join(d, "Modelfile")}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"config.json", "modules.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors"} {
		a, err := os.ReadFile(filepath.Join(dirs[0], name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dirs[1], name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs", name)
		}
	}
	if err := run([]string{"-kind", "nope", "-out", t.TempDir()}); err == nil {
		t.Fatal("an unknown -kind was accepted")
	}
}
