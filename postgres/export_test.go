package postgres

// AppendLockKey is appendLockKey, for the tests that hold it.
const AppendLockKey = appendLockKey
