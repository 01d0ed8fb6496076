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

// FromCheckpoint reports whether Open took the archive's state from the
// checkpoint a clean Close left.
func (a *Archive) FromCheckpoint() bool { return a.fromCheckpoint }

// CheckpointName is the checkpoint's file in the archive's directory.
const CheckpointName = checkpointName

// SetLoadIDsHook makes the background load of a checkpoint's id map call f
// first; nil removes it. Set it before opening an archive.
func SetLoadIDsHook(f func()) { testHookLoadIDs = f }
