package postgres

// AppendLockKey is appendLockKey, for the tests that hold it.
const AppendLockKey = appendLockKey

// Migrations are the archive's schema steps, for the test of an upgrade.
var Migrations = migrations
