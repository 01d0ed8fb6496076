package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram"
)

// BackupService copies the home into a folder on the server's machine. The
// engine of `engram serve` implements it.
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

// postBackup answers POST /v1/backup {"dir": "/abs/folder", "force": false}
// with the report of the backup, once it is complete and durable.
func (s *Server) postBackup(c echo.Context) error {
	if s.Backup == nil {
		return engram.Errorf(engram.EUNSUPPORTED, "backups are not available on this server")
	}
	body, err := s.readBody(c)
	if err != nil {
		return err
	}
	req, err := decodeBackup(body)
	if err != nil {
		return err
	}
	rep, err := s.Backup.Backup(c.Request().Context(), req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rep)
}

func decodeBackup(body []byte) (BackupRequest, error) {
	var req BackupRequest
	if !utf8.Valid(body) {
		return req, engram.FieldError("body", "request body is not valid UTF-8")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		return req, engram.FieldError("body", `must be a JSON object like {"dir": "/path/to/backup"}`)
	}
	for k, v := range obj {
		var dst any
		want := "a string"
		switch k {
		case "dir":
			dst = &req.Dir
		case "force":
			dst, want = &req.Force, "true or false"
		default:
			return req, engram.FieldError(k, "unknown field %q (known: dir, force)", k)
		}
		if string(v) == "null" {
			continue
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return req, engram.FieldError(k, "must be %s", want)
		}
	}
	switch {
	case req.Dir == "":
		return req, engram.FieldError("dir", "dir is required: the backup folder, an absolute path on the server's machine")
	case !filepath.IsAbs(req.Dir):
		return req, engram.FieldError("dir", "dir %q must be an absolute path (the server resolves no relative path)", req.Dir)
	}
	req.Dir = filepath.Clean(req.Dir)
	return req, nil
}
