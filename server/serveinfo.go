package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/internal/atomicfile"
)

// ServeInfo is the home's homedir.ServeFile: where the process serving the
// home listens. CLI commands read it to talk to that server instead of
// opening the home, which the server has locked.
type ServeInfo struct {
	Addr      string    `json:"addr"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
}

// WriteServeInfo records in home's ServeFile, atomically, that this process
// serves the home at addr.
func WriteServeInfo(home, addr string) error {
	b, err := json.Marshal(ServeInfo{Addr: addr, PID: os.Getpid(), StartedAt: time.Now().UTC()})
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(home, homedir.ServeFile), b, 0o600)
}

// ReadServeInfo reads home's ServeFile. A missing file is fs.ErrNotExist;
// one that does not parse or names no address is an error too.
func ReadServeInfo(home string) (ServeInfo, error) {
	var info ServeInfo
	b, err := os.ReadFile(filepath.Join(home, homedir.ServeFile))
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("%s: %w", homedir.ServeFile, err)
	}
	if info.Addr == "" {
		return info, fmt.Errorf("%s names no address", homedir.ServeFile)
	}
	return info, nil
}

// RemoveServeInfo removes home's ServeFile, when the server stops; a
// missing one is no error.
func RemoveServeInfo(home string) error {
	if err := os.Remove(filepath.Join(home, homedir.ServeFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Discover returns a client of the server the ServeFile of cfg's home
// names, if it answers /v1/health within DiscoverWait; nil otherwise.
func Discover(ctx context.Context, cfg Config) *httpapi.Client {
	return discoverWithin(ctx, cfg, DiscoverWait)
}

// discoverWithin is Discover waiting up to wait.
func discoverWithin(ctx context.Context, cfg Config, wait time.Duration) *httpapi.Client {
	info, err := ReadServeInfo(cfg.Home)
	if err != nil {
		return nil
	}
	c := httpapi.NewClient("http://"+info.Addr, cfg.Token)
	hctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var h engram.Health
	if err := c.Do(hctx, http.MethodGet, "/v1/health", nil, &h); err != nil {
		return nil
	}
	return c
}

// awaitPoll is how often awaitServer asks again.
const awaitPoll = 100 * time.Millisecond

// awaitServer is Discover asked again until the server answers or wait
// ends: a server holds the home's lock from the start of its catch-up, and
// writes serve.json and answers health only once it listens.
func awaitServer(ctx context.Context, cfg Config, wait time.Duration) *httpapi.Client {
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		if c := discoverWithin(wctx, cfg, wait); c != nil {
			return c
		}
		select {
		case <-wctx.Done():
			return nil
		case <-time.After(awaitPoll):
		}
	}
}
