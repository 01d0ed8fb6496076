package main

import (
	"strconv"
	"strings"
)

// Shape of the chat model.
const (
	chatHidden       = 64
	chatHeads        = 4
	chatIntermediate = 128
	chatLayers       = 2
	chatNoise        = 0.02 // standard deviation of every random weight
)

// chatMerges are a few byte-level BPE merges: llama.cpp's runner rejects a
// byte-level BPE vocabulary without any. "ok" is the model's unconstrained
// reply.
var chatMerges = []string{"o k", "Ġ t", "h e", "e r", "i n"}

var chatSpecial = []string{"<|begin_of_text|>", "<|end_of_text|>", "<|im_start|>", "<|im_end|>"}

// bytesToUnicode is GPT-2's byte-level alphabet: printable bytes stand for
// themselves, the others for code points from 256 up (space is "Ġ", newline
// "Ċ").
func bytesToUnicode() []string {
	var out [256]string
	n := 0
	for b := range 256 {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			out[b] = string(rune(b))
		} else {
			out[b] = string(rune(256 + n))
			n++
		}
	}
	return out[:]
}

// chatModel returns the files of the llama chat model and its Modelfile lines
// after FROM.
//
// The weights are small random numbers except for three hand-set directions
// of the residual stream: dimension 0 is 1 in every token embedding, so after
// the final RMSNorm it carries a constant that lm_head turns into a per-token
// bias; dimension 1 marks a newline and dimension 2 marks "ok", so lm_head can
// hold two bigrams. The layers add little (weights of 0.02), so greedy
// decoding follows the embeddings:
//
//   - after the newline that ends "<|im_start|>assistant\n": "ok", then
//     <|im_end|> (the reply to any prompt is "ok");
//   - otherwise the bias ranks "]" over "}" over <|im_end|> over everything
//     else, whitespace last. Under a JSON schema, where the grammar forbids
//     "ok", the reply opens, closes every array and object as soon as the
//     schema allows, and stops: {"facts":[]}. Without the whitespace penalty a
//     constrained reply can loop on blanks until num_predict.
func chatModel() (map[string][]byte, string) {
	alphabet := bytesToUnicode()
	tokens := append([]string{}, alphabet...)
	for _, m := range chatMerges {
		a, b, _ := strings.Cut(m, " ")
		tokens = append(tokens, a+b)
	}
	tokens = append(tokens, chatSpecial...)
	id := make(map[string]int, len(tokens))
	for i, t := range tokens {
		id[t] = i
	}
	v, h := len(tokens), chatHidden
	st, err := safetensors(chatTensors(id, v))
	if err != nil {
		panic(err)
	}

	config := map[string]any{
		"architectures":           []string{"LlamaForCausalLM"},
		"model_type":              "llama",
		"hidden_size":             h,
		"num_hidden_layers":       chatLayers,
		"num_attention_heads":     chatHeads,
		"num_key_value_heads":     chatHeads,
		"intermediate_size":       chatIntermediate,
		"hidden_act":              "silu",
		"max_position_embeddings": 2048,
		"rms_norm_eps":            1e-5,
		"rope_theta":              10000.0,
		"vocab_size":              v,
		"bos_token_id":            id["<|begin_of_text|>"],
		"eos_token_id":            id["<|im_end|>"],
		"tie_word_embeddings":     false,
		"torch_dtype":             "float32",
	}
	tokenizer := chatTokenizer(tokens)
	tokenizerConfig := map[string]any{
		"tokenizer_class":  "PreTrainedTokenizerFast",
		"bos_token":        "<|begin_of_text|>",
		"eos_token":        "<|im_end|>",
		"add_bos_token":    true,
		"model_max_length": 2048,
	}
	modelfile := `TEMPLATE """{{- range .Messages }}<|im_start|>{{ .Role }}
{{ .Content }}<|im_end|>
{{ end }}<|im_start|>assistant
"""
PARAMETER stop <|im_end|>
PARAMETER num_predict 48
PARAMETER num_ctx 512
PARAMETER temperature 0
` + modelfileThreads
	return map[string][]byte{
		"config.json":           mustJSON(config),
		"tokenizer.json":        mustJSON(tokenizer),
		"tokenizer_config.json": mustJSON(tokenizerConfig),
		"model.safetensors":     st,
	}, modelfile
}

// chatTensors returns the weights of the chat model (see chatModel) for a
// vocabulary of v tokens, id naming each.
func chatTensors(id map[string]int, v int) []tensor {
	h, in := chatHidden, chatIntermediate

	const (
		dimBias, dimNewline, dimOK = 0, 1, 2
		firstNoise                 = 3
	)
	r := rng("chat")
	row := func(m []float32, i int) []float32 { return m[i*h : (i+1)*h] }
	noisy := func() []float32 {
		m := make([]float32, v*h)
		for i := range v {
			copy(row(m, i)[firstNoise:], gaussian(r, h-firstNoise, chatNoise))
		}
		return m
	}

	emb := noisy()
	for i := range v {
		row(emb, i)[dimBias] = 1
	}
	row(emb, id["Ċ"])[dimNewline] = 1
	row(emb, id["ok"])[dimOK] = 1

	head := noisy()
	bias := map[string]float32{"]": 1.0, "}": 0.9, "<|im_end|>": 0.8, "{": 0.2, "Ġ": -1, "Ċ": -1, "ĉ": -1, "č": -1}
	for tok, b := range bias {
		row(head, id[tok])[dimBias] = b
	}
	row(head, id["ok"])[dimNewline] = 3
	row(head, id["<|im_end|>"])[dimOK] = 3

	ts := []tensor{
		{name: "model.embed_tokens.weight", shape: []int{v, h}, data: emb},
		{name: "lm_head.weight", shape: []int{v, h}, data: head},
		filled("model.norm.weight", 1, h),
	}
	for l := range chatLayers {
		p := "model.layers." + strconv.Itoa(l) + "."
		for _, name := range []string{"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"} {
			ts = append(ts, tensor{name: p + name + ".weight", shape: []int{h, h}, data: gaussian(r, h*h, chatNoise)})
		}
		ts = append(ts,
			tensor{name: p + "mlp.gate_proj.weight", shape: []int{in, h}, data: gaussian(r, in*h, chatNoise)},
			tensor{name: p + "mlp.up_proj.weight", shape: []int{in, h}, data: gaussian(r, in*h, chatNoise)},
			tensor{name: p + "mlp.down_proj.weight", shape: []int{h, in}, data: gaussian(r, h*in, chatNoise)},
			filled(p+"input_layernorm.weight", 1, h),
			filled(p+"post_attention_layernorm.weight", 1, h),
		)
	}
	return ts
}

// chatTokenizer returns the chat model's tokenizer.json, of tokens (the
// special ones last).
func chatTokenizer(tokens []string) map[string]any {
	v := len(tokens)
	vocab := make(map[string]int, v)
	var added []map[string]any
	for i, t := range tokens {
		vocab[t] = i
		if i >= v-len(chatSpecial) {
			added = append(added, map[string]any{
				"id": i, "content": t, "special": true,
				"single_word": false, "lstrip": false, "rstrip": false, "normalized": false,
			})
		}
	}
	return map[string]any{
		"version":       "1.0",
		"added_tokens":  added,
		"pre_tokenizer": map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
		"decoder":       map[string]any{"type": "ByteLevel"},
		"model":         map[string]any{"type": "BPE", "vocab": vocab, "merges": chatMerges},
	}
}
