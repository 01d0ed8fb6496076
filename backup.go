package engram

import (
	"context"
	"time"
)

// BackupService copies the home into a folder on the server's machine. The
// engine (package engine) implements it, and httpapi.Client through a
// running server.
type BackupService interface {
	// Backup writes a consistent copy of the home (the archive, the palace
	// and config.toml, with a manifest of their hashes) into req.Dir while
	// the server goes on serving. It returns ECONFLICT when req.Dir is not
	// empty and req.Force does not allow replacing it, EINVALID when
	// req.Dir lies inside the home, and ctx's error when ctx ends (nothing
	// is left behind then).
	Backup(ctx context.Context, req BackupRequest) (BackupReport, error)
}

// BackupRequest is the body of POST /v1/backup.
type BackupRequest struct {
	// Dir is the backup folder, an absolute path on the server's machine;
	// it must not exist or be empty.
	Dir string `json:"dir"`
	// Force replaces an earlier backup in Dir.
	Force bool `json:"force,omitempty"`
}

// BackupReport is what a backup copied.
type BackupReport struct {
	Dir       string    `json:"dir"`
	CreatedAt time.Time `json:"created_at"`
	// ArchiveSeq is the last seq in the copy of the archive, ArchiveTurns
	// the turns it holds.
	ArchiveSeq   int64 `json:"archive_seq"`
	ArchiveTurns int64 `json:"archive_turns"`
	// IndexedSeq is the palace copy's watermark, never above ArchiveSeq;
	// the turns after it are indexed again when the copy is opened.
	IndexedSeq    int64   `json:"indexed_seq"`
	SchemaVersion int     `json:"schema_version"`
	Files         int     `json:"files"`
	Bytes         int64   `json:"bytes"`
	TookMS        float64 `json:"took_ms"`
}
