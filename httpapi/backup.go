package httpapi

import (
	"net/http"
	"path/filepath"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram"
)

// postBackup answers POST /v1/backup {"dir": "/abs/folder", "force": false}
// with the report of the backup, once it is complete and durable.
func (s *Server) postBackup(c echo.Context) error {
	return serve(c, http.StatusOK, s.Backup, "backups are not available on this server",
		fromBody(s, decodeBackup), engram.BackupService.Backup)
}

func decodeBackup(body []byte) (engram.BackupRequest, error) {
	var req engram.BackupRequest
	err := decodeBody(body, bodyShape{like: `{"dir": "/path/to/backup"}`, fields: []field{
		{"dir", &req.Dir, "a string"},
		{"force", &req.Force, "true or false"},
	}})
	if err != nil {
		return req, err
	}
	if err := engram.CheckPath("dir", req.Dir); err != nil {
		return req, err
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
