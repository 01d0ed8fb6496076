// Package querytext reads the words of a query that are not search terms:
// the trigger phrases that make auto recall run deep ("do you remember",
// "认真回忆", "覚えてる?"), and temporal expressions ("last week", "on April
// 30", "三个月前", "先月"), resolved to a time range. Both compare text after
// one normalisation (NFKC, lower case, white space folded) and cut what they
// find out of the original, tidied at the seam.
//
// Recall uses both (package recall re-exports them); the rules extractor of
// package pipeline reads the time expression that opens a plan ("Next week
// I'll...") with TimeSuffix.
package querytext
