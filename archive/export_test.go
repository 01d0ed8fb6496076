package archive

// SetCrashHook makes a rewrite call f at its crash points
// ("rewrite-partial", "rewrite-synced", "rewrite-renamed"); nil removes it.
// Set it before opening an archive.
func SetCrashHook(f func(point string)) { crashHook = f }

// PeekSeq is peekSeq.
var PeekSeq = peekSeq

// DecodeCanonical is decodeCanonical.
var DecodeCanonical = decodeCanonical

// CRCSuffixLen is the length of a line's crc field and closing brace.
const CRCSuffixLen = crcSuffixLen
