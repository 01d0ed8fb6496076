package palace

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/testutil"
)

// The benchmark corpus: generated, deterministic English-like conversation.

// functionWords take the top Zipf ranks, as they do in English.
var functionWords = strings.Fields(`the to and of a in is it that for we you this on with be
	i not are have was but at so can do if as just what they will be or my from all
	there an about would one get our should use like me think need it's then now by
	also been more when which some out up no how could know see make yes ok did does
	here any than maybe still had going want us only into them over well because right`)

// stems are content words; each appears with a few English endings.
var stems = strings.Fields(`database port server deploy migration cache query index user session
	request response error timeout config setting build test release branch merge review
	commit bug fix issue ticket feature design layout button page screen form field value
	token auth login password account email message queue worker job schedule cron task
	report metric dashboard alert incident outage latency throughput memory disk cpu network
	cluster node pod container image registry storage bucket backup restore snapshot replica
	shard partition table column row schema record document file folder path upload download
	client api endpoint route handler service proxy gateway balancer certificate domain host
	customer order invoice payment price plan budget meeting agenda decision note summary
	project milestone deadline sprint estimate priority roadmap goal team manager engineer
	vendor contract license policy security audit log trace debug profile benchmark load
	search result filter sort page limit offset cursor stream event topic consumer producer
	model prompt embedding vector recall memory context window answer question idea draft
	travel flight hotel trip weekend dinner lunch coffee birthday gift family friend doctor
	appointment school class lesson book movie music game photo video phone laptop screen
	kitchen garden car bike train ticket rent house move paint repair clean cook bake order
	call reply write read send share open close start stop restart update upgrade install
	remove rename create delete change check verify compare measure plan discuss agree decide
	approve reject ask answer explain remember forget track follow lead help support train
	migrate rollback provision monitor scale split join parse format render compile link`)

var endings = []string{"", "s", "ed", "ing", "er"}

var speakers = []string{"Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi",
	"Ivan", "Judy", "Mallory", "Niaj", "Olivia", "Peggy", "Rupert", "Sybil", "Trent", "Victor", "Walter", "Zoe"}

type corpus struct {
	vocab []string // by Zipf rank
	zipf  *rand.Zipf
	rng   *rand.Rand
	ids   []string // rare identifiers, each in a handful of turns
}

func newCorpus(seed uint64) *corpus {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	c := &corpus{rng: rng}
	var content []string
	seen := make(map[string]bool)
	for _, s := range stems {
		for _, e := range endings {
			if w := s + e; !seen[w] {
				seen[w] = true
				content = append(content, w)
			}
		}
	}
	// A long tail of names and jargon: pronounceable made-up words.
	cons, vows := "bcdfghklmnprstvz", "aeiou"
	for len(content) < 3200 {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteByte(cons[rng.IntN(len(cons))])
			b.WriteByte(vows[rng.IntN(len(vows))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			content = append(content, w)
		}
	}
	rng.Shuffle(len(content), func(i, j int) { content[i], content[j] = content[j], content[i] })
	c.vocab = append(append([]string(nil), functionWords...), content...)
	c.zipf = rand.NewZipf(rng, 1.07, 2, uint64(len(c.vocab)-1))
	for i := range 200 {
		c.ids = append(c.ids, fmt.Sprintf("%s%s%d", strings.ToUpper(cons[i%16:i%16+1]), "xq", 10000+rng.IntN(90000)))
	}
	return c
}

func (c *corpus) word() string { return c.vocab[c.zipf.Uint64()] }

// sentence returns 4 to 20 Zipf-distributed words with an occasional number.
func (c *corpus) sentence() string {
	n := 4 + c.rng.IntN(17)
	words := make([]string, n)
	for i := range words {
		words[i] = c.word()
	}
	if c.rng.IntN(8) == 0 {
		words[c.rng.IntN(n)] = strconv.Itoa(1000 + c.rng.IntN(64000))
	}
	words[0] = strings.ToUpper(words[0][:1]) + words[0][1:]
	return strings.Join(words, " ") + [...]string{".", ".", ".", "?", "!"}[c.rng.IntN(5)]
}

func (c *corpus) turn(seq int64) engram.Turn {
	var b strings.Builder
	for i := range 1 + c.rng.IntN(4) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.sentence())
	}
	if c.rng.IntN(100) == 0 { // ~1,000 turns of 100k carry one of 200 identifiers
		b.WriteString(" See " + c.ids[c.rng.IntN(len(c.ids))] + ".")
	}
	ns := engram.DefaultNamespace
	switch r := c.rng.IntN(20); {
	case r < 5:
		ns = "work"
	case r < 6:
		ns = "personal"
	}
	ts := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(seq) * 37 * time.Second)
	return engram.Turn{
		ID:         "b" + strconv.FormatInt(seq, 10),
		Seq:        seq,
		Namespace:  ns,
		Session:    "sess-" + strconv.Itoa(int(seq/40)),
		Role:       []engram.Role{engram.RoleUser, engram.RoleAssistant}[seq%2],
		Speaker:    speakers[c.rng.IntN(len(speakers))],
		Content:    b.String(),
		TS:         ts,
		ReceivedAt: ts.Add(time.Second),
	}
}

// midWord returns a content word of middling frequency (Zipf rank 100-2000).
func (c *corpus) midWord() string {
	for {
		if r := 100 + c.rng.IntN(1900); r < len(c.vocab) {
			return c.vocab[r]
		}
	}
}

// queries returns n queries of one shape.
func (c *corpus) queries(shape string, n int) []string {
	out := make([]string, n)
	for i := range out {
		switch shape {
		case "words":
			w := []string{c.midWord(), c.midWord()}
			if c.rng.IntN(2) == 0 {
				w = append(w, c.midWord())
			}
			out[i] = strings.Join(w, " ")
		case "question":
			out[i] = fmt.Sprintf([]string{
				"what did we decide about the %s %s?",
				"when did %s say the %s was ready?",
				"do you remember where we put the %s for the %s?",
				"why was the %s %s changed last week?",
			}[c.rng.IntN(4)], c.midWord(), c.midWord())
		case "identifier":
			out[i] = c.ids[c.rng.IntN(len(c.ids))]
		case "substring": // the tail of an identifier: only the trigram index finds it
			id := c.ids[c.rng.IntN(len(c.ids))]
			out[i] = id[2:]
		case "cjk-absent": // short CJK terms no turn holds: the worst case, a full LIKE scan
			out[i] = []string{"日本", "会議", "端口", "決定", "数据"}[c.rng.IntN(5)]
		}
	}
	return out
}

// buildBenchDB fills a palace in dir with n generated turns.
func buildBenchDB(b *testing.B, dir string, n int) (*DB, *corpus) {
	b.Helper()
	db, err := Open(filepath.Join(dir, "palace.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	c := newCorpus(1)
	start := time.Now()
	const batch = 1000
	turns := make([]engram.Turn, 0, batch)
	for seq := int64(1); seq <= int64(n); seq++ {
		turns = append(turns, c.turn(seq))
		if len(turns) == batch || seq == int64(n) {
			if err := db.PutTurns(context.Background(), turns); err != nil {
				b.Fatal(err)
			}
			turns = turns[:0]
		}
	}
	b.Logf("built %d turns in %v", n, time.Since(start).Round(time.Millisecond))
	return db, c
}

// BenchmarkSearchTurns measures SearchTurns over 100,000 turns, reporting
// the median and 99th percentile latency besides the mean (ns/op).
//
//	go test -run '^$' -bench SearchTurns -benchtime 2000x ./palace/
func BenchmarkSearchTurns(b *testing.B) {
	db, c := buildBenchDB(b, b.TempDir(), 100_000)
	ctx := context.Background()
	for _, shape := range []string{"words", "question", "identifier", "substring", "cjk-absent"} {
		queries := c.queries(shape, 500)
		for _, ns := range []string{engram.DefaultNamespace, ""} {
			name := shape + "/ns=" + ns
			if ns == "" {
				name = shape + "/all"
			}
			b.Run(name, func(b *testing.B) {
				var lat []time.Duration
				var hits int
				i := 0
				for b.Loop() {
					start := time.Now()
					res, err := db.SearchTurns(ctx, engram.TextQuery{Namespace: ns, Text: queries[i%len(queries)], Limit: 10})
					lat = append(lat, time.Since(start))
					if err != nil {
						b.Fatal(err)
					}
					hits += len(res)
					i++
				}
				testutil.ReportLatency(b, lat)
				b.ReportMetric(float64(hits)/float64(len(lat)), "hits/op")
			})
		}
	}
}

// zhWords make up the Chinese turns of BenchmarkPutTurns.
var zhWords = strings.Fields(`我们 决定 使用 端口 数据库 迁移 已经 完成 服务器 部署 配置 缓存 查询 索引
	用户 会话 请求 错误 超时 版本 测试 发布 分支 合并 审查 提交 问题 修复 功能 设计 页面 按钮
	明天 今天 会议 讨论 计划 预算 客户 订单 付款 价格 团队 经理 工程师 安全 日志 性能 内存 磁盘
	网络 集群 节点 容器 镜像 存储 备份 恢复 快照 的 了 是 在 和 也 很 都 就 还 要 可以 需要 应该`)

// BenchmarkPutTurns measures ingest into the palace in batches (one op = one
// batch): of 100 turns of English and of Chinese text into an empty palace,
// and of 500 English turns (what `engram bench scale` posts at once) into one
// that holds 100,000 already. turns/s counts the whole of PutTurns;
// searchable-turns/s the first transaction, which a batch's
// acknowledgement waits for (PutTurnsSearchable); the rest is
// IndexSecondary's, in steps of SecondaryBatch turns.
//
//	go test -run '^$' -bench PutTurns/ ./palace/
func BenchmarkPutTurns(b *testing.B) {
	if _, err := kwindex.PreloadCJK(); err != nil {
		b.Fatal(err)
	}
	for _, run := range []struct {
		lang         string
		batch, after int
	}{{"en", 100, 0}, {"zh", 100, 0}, {"en", 500, 100_000}} {
		name := run.lang
		if run.after > 0 {
			name = fmt.Sprintf("%s/batch=%d/after=%d", run.lang, run.batch, run.after)
		}
		b.Run(name, func(b *testing.B) {
			db, err := Open(filepath.Join(b.TempDir(), "palace.db"), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			c := newCorpus(2)
			ctx := context.Background()
			seq := int64(0)
			next := func(n int) []engram.Turn {
				turns := make([]engram.Turn, n)
				for i := range turns {
					seq++
					turns[i] = c.turn(seq)
					if run.lang == "zh" {
						var s strings.Builder
						for range 10 + c.rng.IntN(50) {
							s.WriteString(zhWords[c.rng.IntN(len(zhWords))])
						}
						s.WriteString("。")
						turns[i].Content = s.String()
					}
				}
				return turns
			}
			for range run.after / run.batch {
				if err := db.PutTurns(ctx, next(run.batch)); err != nil {
					b.Fatal(err)
				}
			}
			var elapsed, searchable time.Duration
			n, steps := 0, 0
			for b.Loop() {
				b.StopTimer()
				turns := next(run.batch)
				b.StartTimer()
				start := time.Now()
				if err := db.PutTurnsSearchable(ctx, turns); err != nil {
					b.Fatal(err)
				}
				searchable += time.Since(start)
				for done := false; !done; steps++ {
					if done, err = db.IndexSecondary(ctx, turns[len(turns)-1].Seq, 0, nil); err != nil {
						b.Fatal(err)
					}
				}
				elapsed += time.Since(start)
				n += len(turns)
			}
			b.ReportMetric(float64(n)/elapsed.Seconds(), "turns/s")
			b.ReportMetric(float64(n)/searchable.Seconds(), "searchable-turns/s")
			b.ReportMetric(float64(steps)/float64(b.N), "steps/op")
		})
	}
}

// BenchmarkPutTurnSingle measures what an acknowledged POST of one turn
// waits for in the palace: one turn a transaction (one op), into a palace
// that already holds 20,000. The latency percentiles are the point, with
// the WAL checkpointed in the background (the product) and, for the
// comparison, inside the commit that crosses 1,000 pages (SQLite's default,
// which the palace used before).
//
//	go test -run '^$' -bench PutTurnSingle -benchtime 3000x -count 3 ./palace/
func BenchmarkPutTurnSingle(b *testing.B) {
	for _, run := range []struct {
		mode  string
		after int // turns written first, in batches of 100
	}{{"background", 20_000}, {"in-commit", 20_000}, {"background", 100_000}} {
		name := "checkpoint=" + run.mode
		if run.after != 20_000 {
			name += "/after=" + strconv.Itoa(run.after)
		}
		b.Run(name, func(b *testing.B) {
			db, err := Open(filepath.Join(b.TempDir(), "palace.db"), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			ctx := context.Background()
			if run.mode == "in-commit" {
				if _, err := db.w.ExecContext(ctx, `PRAGMA wal_autocheckpoint = 1000`); err != nil {
					b.Fatal(err)
				}
				if err := db.ckpt.close(); err != nil {
					b.Fatal(err)
				}
				db.ckpt = nil
			}
			c := newCorpus(3)
			seq := int64(0)
			for range run.after / 100 {
				turns := make([]engram.Turn, 100)
				for i := range turns {
					seq++
					turns[i] = c.turn(seq)
				}
				if err := db.PutTurns(ctx, turns); err != nil {
					b.Fatal(err)
				}
			}
			var lat []time.Duration
			for b.Loop() {
				seq++
				t := c.turn(seq)
				start := time.Now()
				if err := db.PutTurns(ctx, []engram.Turn{t}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			at := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
			b.ReportMetric(at(0.5), "p50-ms")
			b.ReportMetric(at(0.99), "p99-ms")
			b.ReportMetric(at(1), "max-ms")
		})
	}
}

// BenchmarkKWIndexRank measures the in-memory keyword index alone: the
// best 10 of 100,000 turns of the corpus for queries of a few words, in
// every namespace and in one, and reports the index's live heap.
//
//	go test -run '^$' -bench KWIndexRank -benchtime 2000x ./palace/
func BenchmarkKWIndexRank(b *testing.B) {
	c := newCorpus(1)
	before := liveHeap()
	x := kwindex.New(speakerWeight)
	for seq := int64(1); seq <= 100_000; seq++ {
		t := c.turn(seq)
		text, err := kwindex.SegmentText(kwindex.NFKC(t.Content))
		if err != nil {
			b.Fatal(err)
		}
		x.Add(kwindex.Doc{Key: seq, Namespace: t.Namespace, TS: t.TS.UnixNano(), HasTS: true, Text: text, Second: t.Speaker})
	}
	x.Trim()
	heapMB := float64(liveHeap()-before) / 1e6
	var queries [][]string
	for _, q := range c.queries("words", 500) {
		var toks []string
		kwindex.Tokens(q, func(tok string) { toks = append(toks, tok) })
		queries = append(queries, toks)
	}
	for _, ns := range []string{"", engram.DefaultNamespace} {
		b.Run("ns="+ns, func(b *testing.B) {
			var lat []time.Duration
			i := 0
			for b.Loop() {
				start := time.Now()
				x.Best(queries[i%len(queries)], kwindex.Filter{Namespace: ns}, 10)
				lat = append(lat, time.Since(start))
				i++
			}
			testutil.ReportLatency(b, lat)
			b.ReportMetric(heapMB, "index-MB")
		})
	}
	runtime.KeepAlive(x)
}

// liveHeap collects and returns the bytes of live heap objects.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkPutMemories stores memories in batches of 50 into a palace
// already holding after of them, in four subjects and two types (the
// groups a near-duplicate lookup reads), a fifth of each batch repeating
// an earlier memory with one word changed: the memory job's store, whose
// near-duplicate lookups grew with the palace.
func BenchmarkPutMemories(b *testing.B) {
	for _, after := range []int{0, 30_000} {
		b.Run(fmt.Sprintf("after=%d", after), func(b *testing.B) {
			db, err := Open(filepath.Join(b.TempDir(), "palace.db"), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			c := newCorpus(3)
			ctx := context.Background()
			var texts []string
			id := 0
			next := func(n int) []engram.Memory {
				mems := make([]engram.Memory, n)
				for i := range mems {
					id++
					text := c.sentence()
					if len(texts) > 0 && i%5 == 0 {
						w := strings.Fields(texts[c.rng.IntN(len(texts))])
						w[c.rng.IntN(len(w))] = c.word()
						text = strings.Join(w, " ")
					}
					texts = append(texts, text)
					mems[i] = engram.Memory{ID: "m" + strconv.Itoa(id), Namespace: "default",
						Type: []string{engram.MemoryFact, engram.MemoryEvent}[id%2], Subject: []string{"Ana", "Ben", "Cy", "Di"}[id%4],
						Text: text, Sources: []string{"t" + strconv.Itoa(id)}, TS: time.Unix(int64(id), 0)}
				}
				return mems
			}
			for range after / 500 {
				if _, err := db.PutMemories(ctx, "bench", next(500), 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for range b.N {
				if _, err := db.PutMemories(ctx, "bench", next(50), 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(50*b.N), "µs/memory")
		})
	}
}
