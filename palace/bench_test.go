package palace

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/palacetest"
	"github.com/engram-dev/engram/internal/testutil"
)

// buildBenchDB fills a palace in dir with n generated turns.
func buildBenchDB(b *testing.B, dir string, n int) (*DB, *palacetest.Corpus) {
	b.Helper()
	db, err := Open(filepath.Join(dir, "palace.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	c := palacetest.NewCorpus(1)
	start := time.Now()
	const batch = 1000
	turns := make([]engram.Turn, 0, batch)
	for seq := int64(1); seq <= int64(n); seq++ {
		turns = append(turns, c.Turn(seq))
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
		queries := c.Queries(shape, 500)
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
			c := palacetest.NewCorpus(2)
			ctx := context.Background()
			seq := int64(0)
			next := func(n int) []engram.Turn {
				turns := make([]engram.Turn, n)
				for i := range turns {
					seq++
					turns[i] = c.Turn(seq)
					if run.lang == "zh" {
						var s strings.Builder
						for range 10 + c.Rng.IntN(50) {
							s.WriteString(zhWords[c.Rng.IntN(len(zhWords))])
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
			c := palacetest.NewCorpus(3)
			seq := int64(0)
			for range run.after / 100 {
				turns := make([]engram.Turn, 100)
				for i := range turns {
					seq++
					turns[i] = c.Turn(seq)
				}
				if err := db.PutTurns(ctx, turns); err != nil {
					b.Fatal(err)
				}
			}
			var lat []time.Duration
			for b.Loop() {
				seq++
				t := c.Turn(seq)
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
	c := palacetest.NewCorpus(1)
	before := liveHeap()
	x := kwindex.New(speakerWeight)
	for seq := int64(1); seq <= 100_000; seq++ {
		t := c.Turn(seq)
		text, err := kwindex.SegmentText(kwindex.NFKC(t.Content))
		if err != nil {
			b.Fatal(err)
		}
		x.Add(kwindex.Doc{Key: seq, Namespace: t.Namespace, TS: t.TS.UnixNano(), HasTS: true, Text: text, Second: t.Speaker})
	}
	x.Trim()
	heapMB := float64(liveHeap()-before) / 1e6
	var queries [][]string
	for _, q := range c.Queries("words", 500) {
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
			c := palacetest.NewCorpus(3)
			ctx := context.Background()
			var texts []string
			id := 0
			next := func(n int) []engram.Memory {
				mems := make([]engram.Memory, n)
				for i := range mems {
					id++
					text := c.Sentence()
					if len(texts) > 0 && i%5 == 0 {
						w := strings.Fields(texts[c.Rng.IntN(len(texts))])
						w[c.Rng.IntN(len(w))] = c.Word()
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
