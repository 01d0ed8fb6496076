package memrule

import (
	"errors"
	"strings"
	"testing"

	engram "github.com/engram-dev/engram"
)

func TestFound(t *testing.T) {
	m, err := Found([]engram.Memory{{ID: "m1"}}, "m1", nil)
	if err != nil || m.ID != "m1" {
		t.Fatalf("Found = %+v, %v", m, err)
	}
	if _, err := Found(nil, "m2", nil); engram.ErrorCode(err) != engram.ENOTFOUND || !strings.Contains(err.Error(), `"m2"`) {
		t.Errorf("none found: %v, want ENOTFOUND naming m2", err)
	}
	boom := errors.New("boom")
	if _, err := Found(nil, "m3", boom); !errors.Is(err, boom) {
		t.Errorf("a failed lookup: %v, want its error", err)
	}
}
