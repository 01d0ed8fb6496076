package importer

import (
	"strings"

	"github.com/engram-dev/engram"
)

// Record is one thing an importer read: a turn to archive, something left
// out on purpose (Skip), or a part of the source that could not be read
// (Err). Exactly one of Turn (with Content set), Skip and Err is set.
type Record struct {
	// Where says where in the source the record comes from, for messages:
	// "line 12", or "conversation 3 (ID), message ID".
	Where string
	Turn  engram.TurnInput
	// Skip is why the record is not imported, in a few words that are the
	// same for every record skipped for that reason ("system message"), so
	// callers can count by reason.
	Skip string
	// Err is why this part of the source is malformed; the caller reports it
	// and goes on with the next record.
	Err error
}

// NormalizeRole maps the role names that chat frameworks use onto engram's
// roles. It reports false for a name it does not know.
func NormalizeRole(s string) (engram.Role, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "user", "human", "me", "customer", "person":
		return engram.RoleUser, true
	case "assistant", "ai", "bot", "model", "gpt", "chatgpt", "claude", "agent", "llm":
		return engram.RoleAssistant, true
	case "system", "developer":
		return engram.RoleSystem, true
	case "tool", "function", "tool_result", "tool_call", "function_call", "ipython", "observation":
		return engram.RoleTool, true
	}
	return "", false
}
