// Command traceposts reads the execution trace `engram bench scale --trace`
// writes and says what the slowest single-turn POSTs waited for (or, with
// -region bench.batch, the timed batches): for each of the -n slowest (the
// client's region "bench.post"), the server's regions
// within it (the archive's fsync, the wait for the index, the palace
// writer's gate and transactions, each with its state: running, runnable,
// waiting, in a syscall), the goroutines that ran the most meanwhile (by the
// function that started them), and the fsyncs that overlapped it. Before
// them it prints the fsyncs' and the writer's transactions' durations by
// goroutine or caller.
//
//	engram bench scale --turns 20000 --no-rebuild --mode deep --trace /tmp/t.trace
//	go run ./scripts/traceposts -n 10 /tmp/t.trace
//	go run ./scripts/traceposts -n 5 -region bench.batch /tmp/t.trace
//
// Two causes it found: the archive's fsync waiting behind a WAL checkpoint's
// (palace/checkpoint.go), and requests waiting for a core while background
// work ran on both (work.Scheduler: the background runs on the cores but one).
package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"os"
	"slices"
	"strings"

	"golang.org/x/exp/trace"
)

const module = "github.com/engram-dev/engram/"

// region is one instance of a user region, with the time its goroutine
// spent in each state during it.
type region struct {
	name       string
	g          trace.GoID
	start, end trace.Time
	in         map[trace.GoState]trace.Time
	caller     string // the frames above the region's start
}

// change is a goroutine's change of state, with its stack when it has one.
type change struct {
	at    trace.Time
	g     trace.GoID
	to    trace.GoState
	stack []string
}

type analysis struct {
	regions []*region
	changes []change
	started map[trace.GoID]string // the function each goroutine started in
}

func main() {
	n := flag.Int("n", 10, "slowest POSTs to explain")
	name := flag.String("region", "bench.post", "the client's region of each request: bench.post (single turns) or bench.batch")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: traceposts [-n 10] [-region bench.post] TRACE")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	a, err := read(f)
	if err != nil {
		log.Fatal(err)
	}
	a.summary(os.Stdout)
	a.posts(os.Stdout, *name, *n)
}

func frames(st trace.Stack) []string {
	var out []string
	for fr := range st.Frames() {
		out = append(out, strings.TrimPrefix(fr.Func, module))
	}
	return out
}

func read(r io.Reader) (*analysis, error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, err
	}
	a := &analysis{started: map[trace.GoID]string{}}
	state := map[trace.GoID]trace.GoState{}
	since := map[trace.GoID]trace.Time{}
	open := map[trace.GoID][]*region{}
	// account adds the time g spent in its state since the last change to
	// each of its open regions.
	account := func(g trace.GoID, now trace.Time) {
		if s, ok := since[g]; ok {
			for _, reg := range open[g] {
				reg.in[state[g]] += now - s
			}
		}
		since[g] = now
	}
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch ev.Kind() {
		case trace.EventStateTransition:
			st := ev.StateTransition()
			if st.Resource.Kind != trace.ResourceGoroutine {
				continue
			}
			g := st.Resource.Goroutine()
			from, to := st.Goroutine()
			if from == trace.GoNotExist {
				if fs := frames(st.Stack); len(fs) > 0 {
					a.started[g] = fs[0]
				}
			} else if _, ok := a.started[g]; !ok && ev.Goroutine() == g {
				if fs := frames(ev.Stack()); len(fs) > 0 {
					a.started[g] = fs[len(fs)-1]
				}
			}
			account(g, ev.Time())
			state[g] = to
			var stack []string
			if ev.Goroutine() == g {
				stack = frames(ev.Stack())
			}
			a.changes = append(a.changes, change{ev.Time(), g, to, stack})
		case trace.EventRegionBegin:
			g := ev.Goroutine()
			account(g, ev.Time())
			caller := ""
			if fs := frames(ev.Stack()); len(fs) > 2 {
				caller = strings.Join(fs[2:min(len(fs), 6)], " < ")
			}
			open[g] = append(open[g], &region{name: ev.Region().Type, g: g, start: ev.Time(), in: map[trace.GoState]trace.Time{}, caller: caller})
		case trace.EventRegionEnd:
			g := ev.Goroutine()
			account(g, ev.Time())
			regs := open[g]
			for i := len(regs) - 1; i >= 0; i-- {
				if regs[i].name == ev.Region().Type {
					regs[i].end = ev.Time()
					a.regions = append(a.regions, regs[i])
					open[g] = slices.Delete(regs, i, i+1)
					break
				}
			}
		}
	}
	return a, nil
}

func ms(t trace.Time) float64 { return float64(t) / 1e6 }

// span is a stretch of time a goroutine spent in one state.
type span struct {
	g          trace.GoID
	start, end trace.Time
	stack      []string // at its start
}

// fsyncs returns the syscalls whose stack names a sync: the fsyncs.
func (a *analysis) fsyncs() []span {
	return a.syscalls(func(stack string) bool { return strings.Contains(stack, "sync") })
}

// syscalls returns the syscalls whose stack (its frames joined by spaces)
// keep accepts.
func (a *analysis) syscalls(keep func(stack string) bool) []span {
	var out []span
	in := map[trace.GoID]span{}
	for _, c := range a.changes {
		if s, ok := in[c.g]; ok {
			s.end = c.at
			out = append(out, s)
			delete(in, c.g)
		}
		if c.to == trace.GoSyscall && len(c.stack) > 0 && keep(strings.Join(c.stack, " ")) {
			in[c.g] = span{g: c.g, start: c.at, stack: c.stack}
		}
	}
	return out
}

func quantiles(d []float64) string {
	slices.Sort(d)
	q := func(p float64) float64 { return d[min(len(d)-1, int(p*float64(len(d))))] }
	return fmt.Sprintf("%5d  p50 %7.2f  p99 %7.2f  max %7.2f ms", len(d), q(0.5), q(0.99), d[len(d)-1])
}

func (a *analysis) summary(w io.Writer) {
	fmt.Fprintln(w, "fsyncs, by the function their goroutine started in:")
	by := map[string][]float64{}
	for _, s := range a.fsyncs() {
		by[a.started[s.g]] = append(by[a.started[s.g]], ms(s.end-s.start))
	}
	printBy(w, by)
	fmt.Fprintln(w, "other syscalls of 2 ms or more, by the first frames of their stack:")
	by = map[string][]float64{}
	for _, s := range a.syscalls(func(stack string) bool { return !strings.Contains(stack, "sync") }) {
		if d := ms(s.end - s.start); d >= 2 {
			k := strings.Join(s.stack[:min(len(s.stack), 8)], " < ")
			by[k] = append(by[k], d)
		}
	}
	printBy(w, by)
	fmt.Fprintln(w, "palace writer's transactions (palace.write), by caller:")
	by = map[string][]float64{}
	for _, r := range a.regions {
		if r.name == "palace.write" {
			by[r.caller] = append(by[r.caller], ms(r.end-r.start))
		}
	}
	printBy(w, by)
}

func printBy(w io.Writer, by map[string][]float64) {
	keys := slices.Collect(func(yield func(string) bool) {
		for k := range by {
			if !yield(k) {
				return
			}
		}
	})
	slices.SortFunc(keys, func(x, y string) int { return cmp.Compare(len(by[y]), len(by[x])) })
	for _, k := range keys {
		fmt.Fprintf(w, "  %s  %s\n", quantiles(by[k]), k)
	}
}

func (a *analysis) posts(w io.Writer, name string, n int) {
	var posts []*region
	for _, r := range a.regions {
		if r.name == name {
			posts = append(posts, r)
		}
	}
	if len(posts) == 0 {
		fmt.Fprintf(w, "no region %q: not a trace of engram bench scale --trace\n", name)
		return
	}
	var d []float64
	for _, p := range posts {
		d = append(d, ms(p.end-p.start))
	}
	fmt.Fprintf(w, "%s: %s\n", name, quantiles(d))
	a.average(w, posts)
	slices.SortFunc(posts, func(x, y *region) int { return cmp.Compare(y.end-y.start, x.end-x.start) })
	if slow := posts[:max(1, len(posts)/50)]; n > 0 {
		fmt.Fprintf(w, "the slowest %d (2%%), beside all above:\n", len(slow))
		a.average(w, slow)
	}
	fsyncs := a.fsyncs()
	for _, p := range posts[:min(n, len(posts))] {
		fmt.Fprintf(w, "\nrequest of %.2f ms at %.3f s\n", ms(p.end-p.start), float64(p.start)/1e9)
		for _, r := range a.regions {
			if r == p || strings.HasPrefix(r.name, "bench.") || r.start >= p.end || r.end <= p.start {
				continue
			}
			fmt.Fprintf(w, "  %+8.2f %-15s %7.2f ms (running %.2f, runnable %.2f, waiting %.2f, syscall %.2f)  g%d %s\n",
				ms(r.start-p.start), r.name, ms(r.end-r.start), ms(r.in[trace.GoRunning]), ms(r.in[trace.GoRunnable]),
				ms(r.in[trace.GoWaiting]), ms(r.in[trace.GoSyscall]), r.g, r.caller)
		}
		for _, s := range fsyncs {
			if s.start < p.end && s.end > p.start {
				fmt.Fprintf(w, "  %+8.2f fsync %13.2f ms  g%d %s\n", ms(s.start-p.start), ms(s.end-s.start), s.g, a.started[s.g])
			}
		}
		ran := a.running(p.start, p.end)
		gs := slices.Collect(func(yield func(trace.GoID) bool) {
			for g := range ran {
				if !yield(g) {
					return
				}
			}
		})
		slices.SortFunc(gs, func(x, y trace.GoID) int { return cmp.Compare(ran[y], ran[x]) })
		for _, g := range gs[:min(6, len(gs))] {
			fmt.Fprintf(w, "  ran %7.2f ms  g%d %s\n", ms(ran[g]), g, a.started[g])
		}
	}
}

// average prints, per request, the mean time the server's regions took
// within the requests (by name and caller) and the mean time each kind of
// goroutine (by the function it started in) ran meanwhile: where a
// request's time goes on the whole, beside the slowest ones.
func (a *analysis) average(w io.Writer, reqs []*region) {
	in := map[string]trace.Time{}
	for _, p := range reqs {
		for _, r := range a.regions {
			if r == p || strings.HasPrefix(r.name, "bench.") || r.start >= p.end || r.end <= p.start {
				continue
			}
			in[fmt.Sprintf("%-15s %s", r.name, r.caller)] += min(r.end, p.end) - max(r.start, p.start)
		}
	}
	n := trace.Time(len(reqs))
	fmt.Fprintln(w, "mean per request: the server's regions within it")
	printMeans(w, in, n)
	ran := map[string]trace.Time{}
	for _, p := range reqs {
		for g, d := range a.running(p.start, p.end) {
			ran[a.started[g]] += d
		}
	}
	fmt.Fprintln(w, "mean per request: the goroutines that ran meanwhile, by the function they started in")
	printMeans(w, ran, n)
}

func printMeans(w io.Writer, by map[string]trace.Time, n trace.Time) {
	keys := slices.Collect(maps.Keys(by))
	slices.SortFunc(keys, func(x, y string) int { return cmp.Compare(by[y], by[x]) })
	for _, k := range keys[:min(12, len(keys))] {
		fmt.Fprintf(w, "  %8.2f ms  %s\n", ms(by[k]/n), k)
	}
}

// running returns how long each goroutine ran within [from, to).
func (a *analysis) running(from, to trace.Time) map[trace.GoID]trace.Time {
	ran := map[trace.GoID]trace.Time{}
	since := map[trace.GoID]trace.Time{}
	for _, c := range a.changes {
		if c.at >= to {
			break
		}
		if s, ok := since[c.g]; ok {
			if c.at > from {
				ran[c.g] += c.at - max(s, from)
			}
			delete(since, c.g)
		}
		if c.to == trace.GoRunning {
			since[c.g] = c.at
		}
	}
	for g, s := range since {
		ran[g] += to - max(s, from)
	}
	return ran
}
