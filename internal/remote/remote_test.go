package remote_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"syscall"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/remote"
)

func TestNewTransport(t *testing.T) {
	a, b := remote.NewTransport(5*time.Second, time.Minute), remote.NewTransport(5*time.Second, time.Minute)
	if a == b || a.DialContext == nil || a.Proxy == nil {
		t.Fatal("want a fresh copy of the default transport, with its proxy setting, and a dialer")
	}
}

func TestUnavailable(t *testing.T) {
	cause := &url.Error{Op: "Post", URL: "http://127.0.0.1:1/api/embed", Err: syscall.ECONNREFUSED}
	err := remote.Unavailable("server at http://127.0.0.1:1 not reachable: start it", cause)
	if engram.ErrorCode(err) != engram.EUNAVAILABLE || engram.ErrorMessage(err) != "server at http://127.0.0.1:1 not reachable: start it" ||
		err.Error() != engram.ErrorMessage(err) {
		t.Fatalf("error %q (message %q, code %s)", err, engram.ErrorMessage(err), engram.ErrorCode(err))
	}
	var ue *url.Error
	if !errors.As(err, &ue) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("error %v: the cause must stay in the chain", err)
	}
	if got := remote.Cause(err); got != syscall.ECONNREFUSED {
		t.Fatalf("Cause = %v, want the error under the *url.Error", got)
	}
	if other := errors.New("other"); remote.Cause(other) != other {
		t.Fatal("Cause must return an error without a *url.Error as it is")
	}
}

func TestNoAnswer(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{context.DeadlineExceeded, true},
		{fmt.Errorf("post: %w", io.EOF), true},
		{io.ErrUnexpectedEOF, true},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{context.Canceled, false},
		{errors.New("400 Bad Request"), false},
	} {
		if got := remote.NoAnswer(tc.err); got != tc.want {
			t.Errorf("NoAnswer(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestInBatches(t *testing.T) {
	var calls [][]string
	embed := func(_ context.Context, texts []string) ([][]float32, error) {
		calls = append(calls, texts)
		out := make([][]float32, len(texts))
		for i, s := range texts {
			out[i] = []float32{float32(len(s))}
		}
		return out, nil
	}
	in := []string{"a", "bb", "ccc", "dddd", "eeeee"}
	vecs, err := remote.InBatches(context.Background(), in, 2, embed)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 3 || len(calls[2]) != 1 || len(vecs) != len(in) {
		t.Fatalf("%d calls %q, %d vectors; want 3 calls of at most 2 and 5 vectors", len(calls), calls, len(vecs))
	}
	for i, v := range vecs {
		if int(v[0]) != len(in[i]) {
			t.Fatalf("vector %d is %v, out of order", i, v)
		}
	}
	calls = nil
	if vecs, err := remote.InBatches(context.Background(), nil, 2, embed); err != nil || vecs == nil || len(vecs) != 0 || len(calls) != 0 {
		t.Fatalf("no texts: %v, %v after %d calls; want an empty result and no call", vecs, err, len(calls))
	}
	boom := errors.New("boom")
	failing := func(_ context.Context, texts []string) ([][]float32, error) {
		if texts[0] == "ccc" {
			return nil, boom
		}
		return embed(context.Background(), texts)
	}
	if vecs, err := remote.InBatches(context.Background(), in, 2, failing); !errors.Is(err, boom) || vecs != nil {
		t.Fatalf("a failed batch: %v, %v; want no vectors and its error", vecs, err)
	}
}

func TestProbe(t *testing.T) {
	var sent []string
	dim, err := remote.Probe(context.Background(), func(_ context.Context, texts []string) ([][]float32, error) {
		sent = texts
		return [][]float32{make([]float32, 7)}, nil
	})
	if err != nil || dim != 7 || !slices.Equal(sent, []string{remote.ProbeText}) {
		t.Fatalf("Probe = %d, %v after sending %q", dim, err, sent)
	}
	boom := errors.New("boom")
	if _, err := remote.Probe(context.Background(), func(context.Context, []string) ([][]float32, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("Probe = %v, want the embedder's error", err)
	}
}

func TestDim(t *testing.T) {
	var d remote.Dim
	if d.Load() != 0 {
		t.Fatal("a new Dim must be 0")
	}
	if got := d.Record(384); got != 384 || d.Load() != 384 {
		t.Fatalf("first Record = %d, Load %d; want 384", got, d.Load())
	}
	if got := d.Record(768); got != 384 || d.Load() != 384 {
		t.Fatalf("Record of another dimension = %d, Load %d; want the first, 384", got, d.Load())
	}
}
