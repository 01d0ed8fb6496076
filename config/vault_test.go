package config_test

import (
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
)

// TestWithPending: the vaults config.toml records but the server does not
// serve come last, marked pending.
func TestWithPending(t *testing.T) {
	cfg := config.Config{Vaults: []config.VaultConfig{{Path: "/notes/"}, {Path: "/added", Namespace: "x"}}}
	got := cfg.WithPending([]engram.VaultStatus{{Path: "/notes", Namespace: "default", Docs: 3}})
	if len(got) != 2 || got[0].Pending != "" || got[1].Path != "/added" || got[1].Namespace != "x" ||
		!strings.Contains(got[1].Pending, "restart it") {
		t.Fatalf("%+v", got)
	}
	if got := (config.Config{}).WithPending(nil); len(got) != 0 {
		t.Fatalf("no vaults: %+v", got)
	}
}
