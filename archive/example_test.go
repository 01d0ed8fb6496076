package archive_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
)

func ExampleEncodeLine() {
	line, err := archive.EncodeLine(engram.Turn{
		ID:         "01JTD7W4Q8V3M6Y2K9N5R1X0ZB",
		Seq:        1,
		Namespace:  "default",
		Session:    "s1",
		Role:       engram.RoleUser,
		Content:    "hi",
		TS:         time.Date(2026, 5, 1, 14, 3, 0, 0, time.UTC),
		ReceivedAt: time.Date(2026, 5, 1, 14, 3, 0, 123456789, time.UTC),
	})
	if err != nil {
		panic(err)
	}
	fmt.Print(string(line))
	// Output:
	// {"id":"01JTD7W4Q8V3M6Y2K9N5R1X0ZB","seq":1,"namespace":"default","session":"s1","role":"user","content":"hi","ts":"2026-05-01T14:03:00Z","received_at":"2026-05-01T14:03:00.123456789Z","crc":"84e635ac"}
}

// An indexer follows the archive: it streams what is new, then waits on
// Notify, taking the channel before it streams so no commit slips by.
func ExampleArchive_Notify() {
	home, err := os.MkdirTemp("", "engram")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(home)
	a, err := archive.Open(filepath.Join(home, "archive"), archive.Options{})
	if err != nil {
		panic(err)
	}
	defer a.Close()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var indexed int64
		for {
			ch := a.Notify()
			err := a.Stream(ctx, indexed, func(t engram.Turn) error {
				fmt.Println(t.Seq, t.Content)
				indexed = t.Seq
				return nil
			})
			if err != nil || indexed == 2 {
				return
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
		}
	}()
	for _, c := range []string{"hello", "world"} {
		t := engram.Turn{Namespace: "default", Session: "s", Role: engram.RoleUser, Content: c}
		if _, err := a.Append(ctx, []engram.Turn{t}); err != nil {
			panic(err)
		}
	}
	<-done
	cancel()
	// Output:
	// 1 hello
	// 2 world
}
