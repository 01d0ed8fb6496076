package httpapi

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram"
)

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

func decodeBackup(body []byte) (engram.BackupRequest, error) {
	var req engram.BackupRequest
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
