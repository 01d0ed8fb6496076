// Package fspath holds path tests that several packages make the same way.
package fspath

import (
	"path/filepath"
	"strings"
)

// Within reports whether path lies strictly inside dir (both cleaned, and
// absolute or both relative to the same folder): not dir itself, and not a
// sibling whose name merely starts with dir's.
func Within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
