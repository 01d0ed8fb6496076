package bench

import (
	"errors"
	"slices"
	"strings"
)

// ListFlag is a flag (flag.Value) that may be repeated or given a comma-separated list.
// Repeats are dropped; the order of first appearance is kept.
type ListFlag []string

// String implements flag.Value.
func (f *ListFlag) String() string { return strings.Join(*f, ",") }

// Set implements flag.Value: each comma-separated value is added once.
func (f *ListFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			return errors.New("empty value")
		}
		if !slices.Contains(*f, s) {
			*f = append(*f, s)
		}
	}
	return nil
}
