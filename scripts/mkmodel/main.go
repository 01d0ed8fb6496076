// Command mkmodel writes the tiny models that engram's tests load into a real
// Ollama server (see scripts/ollama.sh). No model can be downloaded on the
// machines engram is built and tested on, so the models are made here, as
// Hugging Face-style folders that `ollama create` converts to GGUF:
//
//   - -kind embed (default): a one-layer BERT embedding model, 128-d output.
//     Its token embeddings are deterministic pseudo-random vectors for 5,000
//     common English words (words.txt), weighted so that frequent words count
//     for little; attention and feed-forward weights are zero, so a text's
//     vector is the weighted mean of its words' vectors. Texts that share
//     content words are therefore closer than texts that do not, which is all
//     the tests ask of it.
//   - -kind chat: a random two-layer llama with a byte-level BPE vocabulary.
//     Its output is noise, except that its output layer is biased so that a
//     ChatML prompt is answered with "ok" and a JSON-schema-constrained reply
//     closes at once (for example {"facts":[]}).
//
// Usage:
//
//	go run ./scripts/mkmodel -kind embed -out DIR [-modelfile FILE]
//
// The output is the same, byte for byte, on every run.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mkmodel:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("mkmodel", flag.ContinueOnError)
	kind := fs.String("kind", "embed", "model to write: embed or chat")
	out := fs.String("out", "", "folder to write the model to (created if missing)")
	modelfile := fs.String("modelfile", "", "also write an Ollama Modelfile for the folder to this path")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		return fmt.Errorf("usage: mkmodel -kind embed|chat -out DIR [-modelfile FILE]")
	}

	var files map[string][]byte
	var mf string
	switch *kind {
	case "embed":
		files, mf = embedModel()
	case "chat":
		files, mf = chatModel()
	default:
		return fmt.Errorf("unknown -kind %q: want embed or chat", *kind)
	}

	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := writeFile(filepath.Join(*out, name), data); err != nil {
			return err
		}
	}
	if *modelfile != "" {
		dir, err := filepath.Abs(*out)
		if err != nil {
			return err
		}
		if err := writeFile(*modelfile, []byte("FROM "+dir+"\n"+mf)); err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes data to a temporary file and renames it into place, so an
// interrupted run never leaves a truncated model file behind.
func writeFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
