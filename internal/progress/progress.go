// Package progress draws the CLI's progress bars (re-embed, reindex) on a
// terminal, and nothing elsewhere (logs and CI).
package progress

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// New returns a bar of total steps described by what, drawn on w when w is
// a terminal and silent otherwise.
func New(w io.Writer, total int64, what string) *progressbar.ProgressBar {
	out := io.Discard
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			out = f
		}
	}
	return progressbar.NewOptions64(max(total, 1),
		progressbar.OptionSetWriter(out),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetPredictTime(true),
	)
}

// Phases draws one bar per phase of a job, on W as New does.
type Phases struct {
	W      io.Writer
	Suffix string // after each phase's text, " (on the server)" say

	mu    sync.Mutex
	phase string
	bar   *progressbar.ProgressBar
}

// Show sets the bar of phase (described by text) to done of total, starting
// it when the phase changed.
func (p *Phases) Show(phase, text string, done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if phase != p.phase || p.bar == nil {
		if p.bar != nil {
			p.bar.Finish()
		}
		p.phase = phase
		p.bar = New(p.W, total, text+p.Suffix)
	}
	p.bar.ChangeMax64(max(total, 1))
	p.bar.Set64(done)
}

// Finish ends the current bar.
func (p *Phases) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
}
