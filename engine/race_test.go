//go:build race

package engine_test

// raceEnabled reports a build with the race detector, whose code runs
// several times slower: the crash tests then use smaller conversations,
// which their kills still land in the middle of.
const raceEnabled = true
