// Package history indexes mcpspec's runs in an embedded SQLite database, for listing and trends.
//
// Every run of a verb (test, load, the detectors, audit, score) leaves a run directory, the
// source of truth:
//
//	.mcpspec/runs/<kind>/<id>/run.json   the run's header ([Header]): kind, id, start, duration,
//	                                     git branch, server SPEC (masked), verdict, exit code, key figures
//	.mcpspec/runs/<kind>/<id>/<output>   the verb's JSON output (load runs: their metrics.json and reports)
//
// The database, .mcpspec/history.db, only indexes those headers: [DB.Reindex] rebuilds it from
// the directories, so deleting it loses nothing. It is a SQLite file (0600, WAL journal, a busy
// timeout, so that two mcpspec processes may write at once) opened through modernc.org/sqlite, a
// pure-Go driver: no cgo, the static binary and the cross-builds stay as they are. Its schema
// is versioned with PRAGMA user_version and its file is marked with PRAGMA application_id, so a
// database of another program is refused rather than altered.
//
// Retention is bounded: [DB.Prune] keeps the newest runs of each kind and removes the others'
// directories and rows.
package history
