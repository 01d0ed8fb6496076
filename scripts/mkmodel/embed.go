package main

import (
	_ "embed"
	"encoding/json"
	"math"
	"strings"
)

//go:embed words.txt
var wordsTxt string

// Shape of the embedding model. The output vector has embedHidden dimensions.
const (
	embedHidden   = 128
	embedMaxPos   = 512
	embedConstDim = embedHidden - 1 // holds embedConst in every token embedding
	embedConst    = 1000.0
)

// Weights of the tokens that are not ranked words. Frequent words get their
// weight from their rank (sifWeight); these sit between a stop word and a
// content word, so that punctuation and markup barely move a text's vector.
const (
	weightSpecial     = 0.01 // [CLS], [SEP]: in every text
	weightUnknown     = 0.1
	weightPunctuation = 0.02
	weightPiece       = 0.3 // single letters and digits, and ##x word pieces
)

const punctuation = `.,!?;:'"()[]{}-_/\&@#$%*+=<>|~^` + "`"

// words returns the ranked word list, most frequent first.
func words() []string {
	var ws []string
	for _, line := range strings.Split(wordsTxt, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			ws = append(ws, line)
		}
	}
	return ws
}

// sifWeight is the smooth inverse frequency weight a/(a+p(w)) of the word at
// rank (0 = most frequent), with p(w) estimated by Zipf's law over the
// 225,555 words of the list words.txt was cut from. It takes "the" to about
// 0.013 and a word ranked 1,000th to about 0.93.
func sifWeight(rank int) float64 {
	const a = 1e-3
	harmonic := math.Log(225555) + 0.5772
	p := 1 / (float64(rank+1) * harmonic)
	return a / (a + p)
}

// embedVocab returns the vocabulary in id order and each token's weight.
// Ids 0 to 4 are [PAD], [UNK], [CLS], [SEP] and [MASK].
func embedVocab() (tokens []string, weight []float64) {
	seen := map[string]bool{}
	add := func(tok string, w float64) {
		if !seen[tok] {
			seen[tok] = true
			tokens = append(tokens, tok)
			weight = append(weight, w)
		}
	}
	add("[PAD]", 0)
	add("[UNK]", weightUnknown)
	add("[CLS]", weightSpecial)
	add("[SEP]", weightSpecial)
	add("[MASK]", 0)
	for rank, w := range words() {
		add(w, sifWeight(rank))
	}
	// Every lowercase word then tokenizes into a known prefix plus pieces,
	// instead of turning into [UNK] as a whole.
	const alnum = "abcdefghijklmnopqrstuvwxyz0123456789"
	for _, c := range alnum {
		add(string(c), weightPiece)
	}
	for _, c := range punctuation {
		add(string(c), weightPunctuation)
	}
	for _, c := range alnum {
		add("##"+string(c), weightPiece)
	}
	return tokens, weight
}

// embedModel returns the files of the BERT embedding model and the Modelfile
// lines after FROM.
//
// How it works: the encoder layer's attention and feed-forward weights are
// zero, so each token's hidden state is its embedding passed through three
// LayerNorms, and the model's output is the normalized mean of those states.
// A token embedding is weight x (a random unit vector with mean 0 in
// dimensions 0 to 126), plus a large constant in dimension 127. The constant
// dominates each LayerNorm's mean and variance, so the LayerNorms scale every
// token by nearly the same factor and the token weights survive; the last
// LayerNorm's gamma and beta then zero dimension 127 and undo the mean shift.
func embedModel() (map[string][]byte, string) {
	tokens, weight := embedVocab()
	v, h := len(tokens), embedHidden

	emb := make([]float32, v*h)
	for id, tok := range tokens {
		row := emb[id*h : (id+1)*h]
		if weight[id] > 0 {
			for i, x := range unitZeroMean(tok, embedConstDim) {
				row[i] = float32(weight[id] * x)
			}
		}
		row[embedConstDim] = embedConst
	}

	// LayerNorm of a token embedding: mean m = C/H; the standard deviation
	// varies with the token's weight by under 1e-7 relative, so take w = 0.5.
	m := embedConst / float64(h)
	std := math.Sqrt((0.25+embedConst*embedConst)/float64(h) - m*m)
	outGamma := filled("encoder.layer.0.output.LayerNorm.weight", 1, h)
	outBeta := filled("encoder.layer.0.output.LayerNorm.bias", float32(m/std), h)
	outGamma.data[embedConstDim] = 0
	outBeta.data[embedConstDim] = 0

	l := "encoder.layer.0."
	ts := []tensor{
		{name: "embeddings.word_embeddings.weight", shape: []int{v, h}, data: emb},
		filled("embeddings.position_embeddings.weight", 0, embedMaxPos, h),
		filled("embeddings.token_type_embeddings.weight", 0, 2, h),
		filled("embeddings.LayerNorm.weight", 1, h),
		filled("embeddings.LayerNorm.bias", 0, h),
	}
	for _, name := range []string{"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense", "intermediate.dense", "output.dense"} {
		ts = append(ts, filled(l+name+".weight", 0, h, h), filled(l+name+".bias", 0, h))
	}
	ts = append(ts,
		filled(l+"attention.output.LayerNorm.weight", 1, h),
		filled(l+"attention.output.LayerNorm.bias", 0, h),
		outGamma, outBeta,
	)
	st, err := safetensors(ts)
	if err != nil {
		panic(err) // the shapes above are fixed: a mistake here is a bug
	}

	config := map[string]any{
		"architectures":                     []string{"BertModel"},
		"model_type":                        "bert",
		"hidden_size":                       h,
		"num_hidden_layers":                 1,
		"num_attention_heads":               2,
		"intermediate_size":                 h,
		"hidden_act":                        "gelu",
		"max_position_embeddings":           embedMaxPos,
		"type_vocab_size":                   2,
		"layer_norm_eps":                    1e-12,
		"vocab_size":                        v,
		"pad_token_id":                      0,
		"torch_dtype":                       "float32",
		"pooling_mode_mean_tokens":          true,  // ollama create keeps base names only, so
		"pooling_mode_cls_token":            false, // 1_Pooling/config.json would overwrite
		"pooling_mode_max_tokens":           false, // this file: the pooling settings live here.
		"pooling_mode_mean_sqrt_len_tokens": false,
	}
	modules := []map[string]any{
		{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
		{"idx": 1, "name": "1", "path": ".", "type": "sentence_transformers.models.Pooling"},
		{"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
	}
	vocab := make(map[string]int, v)
	var added []map[string]any
	for id, tok := range tokens {
		vocab[tok] = id
		if id < 5 {
			added = append(added, map[string]any{
				"id": id, "content": tok, "special": true,
				"single_word": false, "lstrip": false, "rstrip": false, "normalized": false,
			})
		}
	}
	tokenizer := map[string]any{
		"version":      "1.0",
		"added_tokens": added,
		"normalizer": map[string]any{
			"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
			"strip_accents": nil, "lowercase": true,
		},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"model": map[string]any{
			"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
			"max_input_chars_per_word": 100, "vocab": vocab,
		},
	}
	tokenizerConfig := map[string]any{
		"tokenizer_class":  "BertTokenizer",
		"do_lower_case":    true,
		"model_max_length": embedMaxPos,
		"pad_token":        "[PAD]",
		"unk_token":        "[UNK]",
		"cls_token":        "[CLS]",
		"sep_token":        "[SEP]",
		"mask_token":       "[MASK]",
	}

	return map[string][]byte{
		"config.json":           mustJSON(config),
		"modules.json":          mustJSON(modules),
		"tokenizer.json":        mustJSON(tokenizer),
		"tokenizer_config.json": mustJSON(tokenizerConfig),
		"model.safetensors":     st,
	}, modelfileThreads
}

// modelfileThreads pins the runner to one thread. ggml's CPU threads spin at
// a barrier after each operation; on a machine whose cores are busy (CI, two
// shared cores) two threads are far slower than one, waiting on each other.
// The models are far too small to gain from a second.
const modelfileThreads = "PARAMETER num_thread 1\n"

// mustJSON encodes v, indented; map keys come out sorted, so the files are
// the same on every run.
func mustJSON(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}
