package engram

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Forgotten is the tombstone of a forgotten turn: when it was forgotten and
// why. The archive keeps it in place of the turn's line (id, seq and receive
// time stay; namespace, session, speaker, content, ts and meta are gone), so
// that a rebuild brings nothing back and a re-sent id is recognised.
type Forgotten struct {
	At     time.Time `json:"at"`
	Reason string    `json:"reason,omitempty"`
}

// Redaction records that spans of a turn (its content; with engram redact,
// its speaker and meta too) were replaced by a marker: when, why, and how
// many spans (Rules counts the spans the ingest filter replaced, by rule
// name). It never holds what was replaced.
type Redaction struct {
	At     time.Time        `json:"at"`
	Spans  int              `json:"spans"`
	Reason string           `json:"reason,omitempty"`
	Rules  map[string]int64 `json:"rules,omitempty"`
}

// IsTombstone reports whether t is the tombstone of a forgotten turn.
func (t Turn) IsTombstone() bool { return t.Forgotten != nil }

// LiveTurns returns the turns of ts that are not tombstones, in order; ts
// itself when it holds none.
func LiveTurns(ts []Turn) []Turn {
	n := 0
	for _, t := range ts {
		if t.Forgotten == nil {
			n++
		}
	}
	if n == len(ts) {
		return ts
	}
	out := make([]Turn, 0, n)
	for _, t := range ts {
		if t.Forgotten == nil {
			out = append(out, t)
		}
	}
	return out
}

// IndexableTurns returns the turns of ts that the pipelines index: not
// tombstones, and with a ts and a received_at the stores can hold
// (Storable). The palace records each turn it skips for its times
// (TurnSkips), and every other pipeline skips it the same way, so
// that one hand-edited line never stops them. It returns ts itself when it
// drops none.
func IndexableTurns(ts []Turn) []Turn {
	keep := func(t Turn) bool { return t.Forgotten == nil && Storable(t.TS) && Storable(t.ReceivedAt) }
	n := 0
	for _, t := range ts {
		if keep(t) {
			n++
		}
	}
	if n == len(ts) {
		return ts
	}
	out := make([]Turn, 0, n)
	for _, t := range ts {
		if keep(t) {
			out = append(out, t)
		}
	}
	return out
}

// MaxReasonBytes bounds the reason of a forget, a redaction or a correction.
const MaxReasonBytes = 1024

// DefaultRedactionMarker replaces a redacted span when a request names no
// marker.
const DefaultRedactionMarker = "[redacted]"

// ForgetRequest selects the turns to forget: one or more turn ids, or every
// turn of a session (of Namespace), or every turn of a namespace. Exactly
// one selector is set. DryRun reports what would be forgotten and changes
// nothing.
type ForgetRequest struct {
	IDs       []string `json:"ids,omitempty"`
	Session   string   `json:"session,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
	Reason    string   `json:"reason,omitempty"`
	DryRun    bool     `json:"dry_run,omitempty"`
}

// Scope names what the request selects: "turn", "session" or "namespace".
func (r ForgetRequest) Scope() string {
	switch {
	case len(r.IDs) > 0:
		return "turn"
	case r.Session != "":
		return "session"
	}
	return "namespace"
}

// Validate checks that one selector is set (ids, or a session of a
// namespace, or a namespace) and that the reason is short; errors are
// EINVALID naming the field.
func (r ForgetRequest) Validate() error {
	switch {
	case len(r.IDs) > 0 && r.Session != "":
		return FieldError("session", "name turn ids or a session, not both")
	case len(r.IDs) == 0 && r.Session == "" && r.Namespace == "":
		return FieldError("ids", "name what to forget: turn ids, a session or a namespace")
	case r.Namespace == AllNamespaces:
		return FieldError("namespace", "%s: forget one namespace at a time", AllNamespacesRefused)
	}
	for i, id := range r.IDs {
		if strings.TrimSpace(id) == "" {
			return FieldError(fmt.Sprintf("ids[%d]", i), "an id must not be empty")
		}
	}
	return checkReason(r.Reason)
}

func checkReason(reason string) error {
	if len(reason) > MaxReasonBytes {
		return &Error{Code: ETOOLARGE, Field: "reason", Message: fmt.Sprintf("reason is %d bytes, over the limit of %d", len(reason), MaxReasonBytes)}
	}
	return nil
}

// ForgetReport says what a forget did (or, with DryRun, would do).
type ForgetReport struct {
	// Turns are the ids of the turns forgotten now; Already those
	// forgotten before (nothing left to do); Unknown the ids named that no
	// turn has.
	Turns   []string `json:"turns"`
	Already []string `json:"already_forgotten,omitempty"`
	Unknown []string `json:"unknown,omitempty"`
	// What else went with them: derived items that stood only on the
	// forgotten turns, and the items that kept their other sources.
	Memories     int `json:"memories_deleted"`
	MemoriesKept int `json:"memories_updated"`
	Scenes       int `json:"scenes_deleted"`
	// ScenesRemade counts the scenes made again of the other turns of the
	// scenes deleted: a scene's title and summary are made of all its
	// turns, so it is grouped and summarised again without the forgotten.
	ScenesRemade int `json:"scenes_remade"`
	Facts        int `json:"facts_changed"`
	Facets       int `json:"persona_facets_changed"`
	Units        int `json:"units_changed"`
	Vectors      int `json:"vectors_deleted"`
	ArchiveFiles int `json:"archive_files_rewritten"`
	// PreviousPalace is set when the palace an earlier rebuild replaced
	// (palace.db.before-rebuild), which held the turns as they were, was
	// removed.
	PreviousPalace bool    `json:"previous_palace_removed,omitempty"`
	DryRun         bool    `json:"dry_run,omitempty"`
	TookMS         float64 `json:"took_ms"`
}

// RedactRequest replaces every occurrence of each of Texts in the content,
// the speaker and the meta's string values of the selected turns (by id,
// session or namespace, as a ForgetRequest selects them; none selects
// every namespace) by Marker (DefaultRedactionMarker when empty).
type RedactRequest struct {
	Texts     []string `json:"texts"`
	IDs       []string `json:"ids,omitempty"`
	Session   string   `json:"session,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
	Marker    string   `json:"marker,omitempty"`
	Reason    string   `json:"reason,omitempty"`
	DryRun    bool     `json:"dry_run,omitempty"`
}

// MinRedactBytes is the shortest span a redaction replaces: shorter ones
// would rewrite half the archive by mistake.
const MinRedactBytes = 3

// MaxRedactTexts bounds the spans of one redaction. The spans are found in
// one pass over each turn (Spans), so their number costs little there, but
// every one is still looked for in the palace's derived texts and graph
// names; a list of leaked secrets fits, and a longer one is sent in parts.
const MaxRedactTexts = 1000

// Validate checks the request; errors are EINVALID naming the field, and
// ETOOLARGE on texts for over MaxRedactTexts spans.
func (r RedactRequest) Validate() error {
	if len(r.Texts) == 0 {
		return FieldError("texts", "name the text to redact")
	}
	if len(r.Texts) > MaxRedactTexts {
		return &Error{Code: ETOOLARGE, Field: "texts", Message: fmt.Sprintf("texts holds %d spans, over the limit of %d: redact them in parts", len(r.Texts), MaxRedactTexts)}
	}
	for i, s := range r.Texts {
		if len(strings.TrimSpace(s)) < MinRedactBytes {
			return FieldError(fmt.Sprintf("texts[%d]", i), "a span to redact must hold at least %d bytes besides white space", MinRedactBytes)
		}
		if strings.Contains(r.Marker, s) {
			return FieldError("marker", "the marker must not hold the text it replaces")
		}
	}
	if len(r.IDs) > 0 && r.Session != "" {
		return FieldError("session", "name turn ids or a session, not both")
	}
	if r.Namespace == AllNamespaces {
		return FieldError("namespace", "leave namespace out to redact in every namespace")
	}
	if len(r.Marker) > 256 {
		return FieldError("marker", "the marker is over 256 bytes")
	}
	return checkReason(r.Reason)
}

// MarkerOrDefault is the marker the request replaces spans with.
func (r RedactRequest) MarkerOrDefault() string {
	if r.Marker == "" {
		return DefaultRedactionMarker
	}
	return r.Marker
}

// RedactReport says what a redaction did.
type RedactReport struct {
	Turns        []string `json:"turns"` // ids of the turns that changed
	Spans        int      `json:"spans"` // occurrences replaced
	Memories     int      `json:"memories_rederived"`
	Scenes       int      `json:"scenes_rebuilt"`
	ArchiveFiles int      `json:"archive_files_rewritten"`
	// PreviousPalace is set when the palace an earlier rebuild replaced
	// (palace.db.before-rebuild), which held the old text, was removed.
	PreviousPalace bool    `json:"previous_palace_removed,omitempty"`
	DryRun         bool    `json:"dry_run,omitempty"`
	TookMS         float64 `json:"took_ms"`
	// Warnings name what the redaction left to do, though it succeeded:
	// a vector model whose embedder could not be built, whose vectors of
	// the turns are deleted until `engram reembed` makes them again.
	Warnings []string `json:"warnings,omitempty"`
}

// Targets of a correction.
const (
	CorrectMemory = "memory"
	CorrectFact   = "fact"
)

// CorrectionRequest corrects an L1 memory or an L4 triple: marks it wrong,
// or replaces the memory's text or the triple's object. Restore takes a
// correction back.
type CorrectionRequest struct {
	Target string `json:"target"` // CorrectMemory or CorrectFact
	ID     string `json:"id"`
	// Text replaces a memory's text (not for facts).
	Text string `json:"text,omitempty"`
	// Object replaces the object of a triple (not for memories).
	Object string `json:"object,omitempty"`
	// Wrong marks it wrong: recall, the listings, the persona and the
	// graph leave it out.
	Wrong bool `json:"wrong,omitempty"`
	// Restore takes back every correction of it: what extraction produced
	// stands again.
	Restore bool   `json:"restore,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// Validate checks the request; errors are EINVALID naming the field.
func (r CorrectionRequest) Validate() error {
	switch {
	case r.Target != CorrectMemory && r.Target != CorrectFact:
		return FieldError("target", "target %q: want memory or fact", r.Target)
	case strings.TrimSpace(r.ID) == "":
		return FieldError("id", "id is required")
	case r.Target == CorrectFact && r.Text != "":
		return FieldError("text", "a fact has no text of its own: replace its object, or mark it wrong")
	case r.Target == CorrectMemory && r.Object != "":
		return FieldError("object", "a memory's text is corrected with text; object replaces the object of a graph fact")
	case r.Restore && (r.Wrong || r.Text != "" || r.Object != ""):
		return FieldError("restore", "restore takes every correction back; it goes alone")
	case !r.Restore && !r.Wrong && strings.TrimSpace(r.Text) == "" && strings.TrimSpace(r.Object) == "":
		return FieldError("text", "say what is wrong: wrong, a new text, or a new object")
	case r.Wrong && (r.Text != "" || r.Object != ""):
		return FieldError("wrong", "a memory marked wrong needs no new text or object")
	case len(r.Text) > 4000:
		return FieldError("text", "text is %d bytes, over the limit of 4000", len(r.Text))
	case len(r.Object) > DefaultMaxFieldBytes:
		return FieldError("object", "object is %d bytes, over the limit of %d", len(r.Object), DefaultMaxFieldBytes)
	}
	return checkReason(r.Reason)
}

// Correction is a correction as recorded in the home (the archive's
// corrections journal) and applied to the palace: kept apart from what
// extraction produces, it wins over it, and a rebuild applies it again.
type Correction struct {
	ID     string    `json:"id"`
	At     time.Time `json:"at"`
	Target string    `json:"target"`
	// Of is the id of the memory or triple corrected.
	Of      string `json:"of"`
	Text    string `json:"text,omitempty"`
	Object  string `json:"object,omitempty"`
	Wrong   bool   `json:"wrong,omitempty"`
	Restore bool   `json:"restore,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// What the corrected item was, so that a rebuild that gives it another
	// id still finds it: a memory's namespace, type, extracted text and
	// sources; a fact's namespace, subject, predicate and extracted object
	// (Original), and the memories it stands on.
	Namespace string   `json:"namespace"`
	Memories  []string `json:"memories,omitempty"`
	Type      string   `json:"type,omitempty"`
	Subject   string   `json:"subject,omitempty"`
	Predicate string   `json:"predicate,omitempty"`
	Original  string   `json:"original,omitempty"`
	Sources   []string `json:"sources,omitempty"`
	// Key is what the palace matches a fact's statements by: its
	// namespace, the normalised names of subject and object, and the
	// predicate.
	Key string `json:"key,omitempty"`
}

// ForgetService forgets turns: the engine implements it, and
// httpapi.Client through a running server.
type ForgetService interface {
	// Forget forgets the turns req selects: from the palace at once (every
	// index, the vectors, the layers standing only on them) and from the
	// archive (each line rewritten to a tombstone). EINVALID for a bad
	// request, ENOTFOUND when it selects no turn.
	Forget(ctx context.Context, req ForgetRequest) (ForgetReport, error)
}

// RedactService replaces spans of turns (content, speaker, meta)
// everywhere the text lives.
type RedactService interface {
	// Redact replaces the spans in the selected turns. EINVALID for a bad
	// request.
	Redact(ctx context.Context, req RedactRequest) (RedactReport, error)
}

// CorrectService corrects derived memories and graph facts.
type CorrectService interface {
	// Correct records and applies a correction, and returns it.
	// ENOTFOUND for an unknown memory or triple.
	Correct(ctx context.Context, req CorrectionRequest) (Correction, error)
}
