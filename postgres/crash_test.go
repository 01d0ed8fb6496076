package postgres_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/archivetest"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/postgres"
)

// childEnv makes this test binary, run again by TestAppendSIGKILL, append
// to the database at its value until it is killed (runChild).
const childEnv = "ENGRAM_POSTGRES_TEST_CHILD_URL"

func TestMain(m *testing.M) {
	url := os.Getenv(childEnv)
	if url == "" {
		os.Exit(m.Run())
	}
	if err := runChild(url); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runChild appends from four goroutines, calls of one to three turns,
// some with ids of their own, and prints "id seq" for every turn once
// Append acknowledged it. It runs until it is killed.
func runChild(url string) error {
	a, err := postgres.Open(context.Background(), url, postgres.Options{Logger: quietLogger()})
	if err != nil {
		return err
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	errc := make(chan error, 4)
	for g := range 4 {
		go func() {
			for i := 0; ; i++ {
				batch := make([]engram.Turn, 1+i%3)
				for j := range batch {
					batch[j] = archivetest.Turn(fmt.Sprintf("p%d-g%d", os.Getpid(), g), fmt.Sprintf("turn %d.%d", i, j))
					if j == 1 {
						batch[j].ID = fmt.Sprintf("p%d-g%d-%d", os.Getpid(), g, i)
					}
				}
				res, err := a.Append(context.Background(), batch)
				if err != nil {
					errc <- err
					return
				}
				mu.Lock()
				for _, r := range res {
					fmt.Fprintf(out, "%s %d\n", r.ID, r.Seq)
				}
				// Flushed at once: a turn the parent has not read is one it
				// does not count as acknowledged.
				err = out.Flush()
				mu.Unlock()
				if err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	return <-errc
}

// TestAppendSIGKILL kills a process appending from several goroutines
// with SIGKILL, again and again, each time after it acknowledged a
// different number of turns: every turn it acknowledged is in the table,
// with its seq and a line whose crc is right, and the table stays
// readable and appendable.
func TestAppendSIGKILL(t *testing.T) {
	testutil.LongRun(t)
	url := pgtest.NewDatabase(t)
	const rounds = 8
	acked := map[string]int64{}
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+url)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killAfter := 20 + round*45 // turns acknowledged before the kill
		r := bufio.NewReader(stdout)
		n := 0
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				// Only a complete line is an acknowledged turn; the child
				// must not have stopped on its own.
				cmd.Process.Kill()
				cmd.Wait()
				if n < killAfter {
					t.Fatalf("round %d: the child stopped after %d turns: %v\n%s", round, n, err, stderr.String())
				}
				break
			}
			id, seq, ok := parseAck(line)
			if !ok {
				t.Fatalf("round %d: child printed %q", round, line)
			}
			if s, dup := acked[id]; dup && s != seq {
				t.Fatalf("id %s acknowledged with seq %d and %d", id, s, seq)
			}
			acked[id] = seq
			if n++; n == killAfter {
				if err := cmd.Process.Kill(); err != nil {
					t.Fatal(err)
				}
				// Read what it printed before it died, then wait.
				rest, _ := io.ReadAll(r)
				for l := range strings.Lines(string(rest)) {
					if id, seq, ok := parseAck(l); ok && strings.HasSuffix(l, "\n") {
						acked[id] = seq
					}
				}
				err := cmd.Wait()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ProcessState.ExitCode() != -1 {
					t.Fatalf("round %d: the child ended with %v, not killed\n%s", round, err, stderr.String())
				}
				break
			}
		}
	}

	a := mustOpen(t, url, postgres.Options{})
	all := archivetest.StreamAll(t, a, 0) // checks every line's crc, and seqs increasing
	s, err := a.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.CorruptRows != 0 || s.Turns != int64(len(all)) {
		t.Fatalf("stats %+v, %d turns read", s, len(all))
	}
	inTable := map[string]int64{}
	for _, tn := range all {
		if _, dup := inTable[tn.ID]; dup {
			t.Fatalf("id %s twice", tn.ID)
		}
		inTable[tn.ID] = tn.Seq
	}
	for id, seq := range acked {
		if got, ok := inTable[id]; !ok || got != seq {
			t.Fatalf("acknowledged turn %s (seq %d) is not in the table (seq %d, %v)", id, seq, got, ok)
		}
	}
	last := archivetest.MustAppend(t, a, archivetest.Turn("s", "after the kills"))[0].Seq
	if last <= all[len(all)-1].Seq {
		t.Fatalf("seq %d after the kills, not above %d", last, all[len(all)-1].Seq)
	}
	t.Logf("%d acknowledged turns of %d in the table survived %d SIGKILLs", len(acked), len(all), rounds)
}

// parseAck reads a line "id seq" the child printed.
func parseAck(line string) (string, int64, bool) {
	id, num, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
	seq, err := strconv.ParseInt(num, 10, 64)
	return id, seq, ok && err == nil && id != "" && seq > 0
}

// TestDatabaseRestart stops the database the way a crash would (pg_ctl
// stop -m immediate) under an open Archive: Append and the readers say the
// archive is unavailable meanwhile, committed turns survive, and the same
// Archive works again as soon as the database is back, at its first call.
func TestDatabaseRestart(t *testing.T) {
	testutil.LongRun(t)
	c := pgtest.StartCluster(t)
	a := mustOpen(t, c.URL(), postgres.Options{})
	ctx := context.Background()
	archivetest.MustAppend(t, a, archivetest.Turn("s", "one"), archivetest.Turn("s", "two"))
	archivetest.MustAppend(t, a, archivetest.Turn("s", "three"))

	c.Kill(t)
	for range 2 { // the broken pooled connection, then no connection at all
		_, err := a.Append(ctx, []engram.Turn{archivetest.Turn("s", "while down")})
		archivetest.WantCode(t, err, engram.EUNAVAILABLE)
		if !strings.Contains(engram.ErrorMessage(err), "nothing was archived") {
			t.Fatalf("message %q", engram.ErrorMessage(err))
		}
	}
	archivetest.WantCode(t, a.Stream(ctx, 0, func(engram.Turn) error { return nil }), engram.EUNAVAILABLE)
	_, err := a.Refresh(ctx)
	archivetest.WantCode(t, err, engram.EUNAVAILABLE)
	if a.LastSeq() != 3 {
		t.Fatalf("LastSeq %d while down", a.LastSeq())
	}

	c.Start(t)
	res := archivetest.MustAppend(t, a, archivetest.Turn("s", "four"))
	if res[0].Seq != 4 {
		t.Fatalf("seq %d after the restart, want 4", res[0].Seq)
	}
	var got []string
	for _, tn := range archivetest.StreamAll(t, a, 0) {
		got = append(got, tn.Content)
	}
	if strings.Join(got, ",") != "one,two,three,four" {
		t.Fatalf("after the restart: %q", got)
	}

	// A restart between two appends, with no call while it was down: the
	// idle connections are broken, and the first call still works.
	c.Kill(t)
	c.Start(t)
	if res := archivetest.MustAppend(t, a, archivetest.Turn("s", "five")); res[0].Seq != 5 {
		t.Fatalf("seq %d after the second restart, want 5", res[0].Seq)
	}
}

// TestLostConnections ends every connection of an open Archive from the
// server's side (as a restart of the database does), right after they were
// used: the next Append and the next Stream work at once, on new ones.
func TestLostConnections(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := mustOpen(t, url, postgres.Options{})
	db := connect(t, url)
	for i := range 3 {
		archivetest.MustAppend(t, a, archivetest.Turn("s", fmt.Sprint(i)))
		archivetest.StreamAll(t, a, 0)
		var ended int
		if err := db.QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&ended); err != nil || ended == 0 {
			t.Fatalf("ended %d connections (%v)", ended, err)
		}
		if got := archivetest.StreamAll(t, a, 0); len(got) != i+1 {
			t.Fatalf("%d turns after the connections ended, want %d", len(got), i+1)
		}
		// The stream made new connections; end them again for the writer.
		mustExec(t, db, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	}
	if res := archivetest.MustAppend(t, a, archivetest.Turn("s", "last")); res[0].Seq != 4 {
		t.Fatalf("seq %d, want 4", res[0].Seq)
	}
}
