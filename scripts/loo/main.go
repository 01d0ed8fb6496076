// Command loo chooses a setting by leaving one conversation out. It reads
// the JSON reports of `engram bench locomo` runs, one set per candidate
// setting, and for each conversation picks the setting with the best
// question-weighted any@10 + recall@10 over all the other conversations,
// then scores the held-out conversation with it. The figures it prints per
// corpus are the cross-validated ones: what a setting chosen without a
// conversation scores on it.
//
//	for w in 0.1 0.2 0.3; do for c in locomo-dev realtalk-dev; do
//	  ENGRAM_DEEP_NEIGHBOUR_WEIGHT=$w engram bench locomo --data ../shared/bench/$c \
//	    --mode deep --session-k 0 --json --out /tmp/loo/n$w.$c.json >/dev/null
//	done; done
//	go run ./scripts/loo -mode deep /tmp/loo/*.json
//
// A report file is named SETTING.CORPUS.json, CORPUS being the base name of
// the report's data folder; the reports of one setting must cover the same
// conversations as every other's. A conversation is named by its corpus
// and file. Ties go to the setting whose name sorts first.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// scores are one conversation's figures under one setting.
type scores struct {
	corpus                 string
	n                      float64
	any5, any10, rec10, al float64
}

type report struct {
	Data  string `json:"data"`
	Modes []struct {
		Mode          string `json:"mode"`
		Conversations []struct {
			Name      string `json:"name"`
			Questions int    `json:"questions"`
			At        []struct {
				K      int     `json:"k"`
				Any    float64 `json:"any"`
				Recall float64 `json:"recall"`
				All    float64 `json:"all"`
			} `json:"at"`
		} `json:"conversations"`
	} `json:"modes"`
}

func main() {
	mode := flag.String("mode", "deep", "the recall `mode` whose figures choose")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: loo [-mode deep] SETTING.CORPUS.json ...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	data := map[string]map[string]scores{} // setting -> conversation -> scores
	for _, f := range flag.Args() {
		if err := read(f, *mode, data); err != nil {
			log.Fatal(err)
		}
	}
	names := slices.Sorted(maps.Keys(data))
	var convs []string
	for c := range data[names[0]] {
		convs = append(convs, c)
	}
	slices.Sort(convs)
	for _, name := range names[1:] {
		if len(data[name]) != len(convs) {
			log.Fatalf("%s has %d conversations, %s %d: every setting needs the same reports", name, len(data[name]), names[0], len(convs))
		}
	}
	objective := func(name string, held string) float64 {
		sum := 0.0
		for _, c := range convs {
			if c != held {
				s := data[name][c]
				sum += s.n * (s.any10 + s.rec10)
			}
		}
		return sum
	}
	total := map[string]*scores{}
	var corpora, picks []string
	for _, held := range convs {
		best := names[0]
		for _, name := range names[1:] {
			if objective(name, held) > objective(best, held) {
				best = name
			}
		}
		picks = append(picks, held+": "+best)
		s := data[best][held]
		t := total[s.corpus]
		if t == nil {
			t = &scores{corpus: s.corpus}
			total[s.corpus] = t
			corpora = append(corpora, s.corpus)
		}
		t.n += s.n
		t.any5 += s.n * s.any5
		t.any10 += s.n * s.any10
		t.rec10 += s.n * s.rec10
		t.al += s.n * s.al
	}
	slices.Sort(corpora)
	for _, c := range corpora {
		t := total[c]
		fmt.Printf("cross-validated %s %s: any@5 %.1f any@10 %.1f recall@10 %.1f all@10 %.1f (%d questions)\n",
			*mode, c, 100*t.any5/t.n, 100*t.any10/t.n, 100*t.rec10/t.n, 100*t.al/t.n, int(t.n))
	}
	fmt.Println("chosen without each conversation:")
	for _, p := range picks {
		fmt.Println("  " + p)
	}
	fmt.Println("each setting on all conversations (any@10 / recall@10):")
	for _, name := range names {
		line := "  " + name + ":"
		for _, c := range corpora {
			var n, a, r float64
			for _, s := range data[name] {
				if s.corpus == c {
					n, a, r = n+s.n, a+s.n*s.any10, r+s.n*s.rec10
				}
			}
			line += fmt.Sprintf("  %s %.1f / %.1f", c, 100*a/n, 100*r/n)
		}
		fmt.Println(line)
	}
}

// read adds the conversations of mode in the report file to the figures of
// its setting in into.
func read(file, mode string, into map[string]map[string]scores) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	corpus := filepath.Base(rep.Data)
	setting, ok := strings.CutSuffix(filepath.Base(file), "."+corpus+".json")
	if !ok || setting == "" {
		return fmt.Errorf("%s: want a name SETTING.%s.json", file, corpus)
	}
	if into[setting] == nil {
		into[setting] = map[string]scores{}
	}
	for _, m := range rep.Modes {
		if m.Mode != mode {
			continue
		}
		if len(m.Conversations) == 0 {
			return fmt.Errorf("%s: mode %s has no conversations' figures (a report of an older engram?)", file, mode)
		}
		for _, c := range m.Conversations {
			s := scores{corpus: corpus, n: float64(c.Questions)}
			for _, at := range c.At {
				switch at.K {
				case 5:
					s.any5 = at.Any
				case 10:
					s.any10, s.rec10, s.al = at.Any, at.Recall, at.All
				}
			}
			into[setting][corpus+"/"+c.Name] = s
		}
		return nil
	}
	return fmt.Errorf("%s: no mode %s", file, mode)
}
