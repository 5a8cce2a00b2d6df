// Package fleethealth shares model health and model-call limits between
// the processes of an agentry fleet (agentry serve replicas, batch
// workers) through PostgreSQL.
//
// A [Health] implements [routing.SharedHealth]: a terminal failure (a
// model out of quota, or at capacity for its TTL) that one process records
// is written to the agentry_model_health table and announced with NOTIFY;
// every other process applies it to its own [routing.Availability], so a
// 429 storm falls back once for the fleet, not once per process. The
// sticky retry-once-per-turn state belongs to a session's turn and is not
// shared.
//
// A Health is also a [routing.Limiter]: per model, at most MaxConcurrent
// calls at once across the fleet (PostgreSQL session advisory locks, one
// per slot, held on a pooled connection for the call: a process that dies
// loses its connection and with it its slots) and at most
// RequestsPerMinute calls a minute (a counter per model and minute window,
// on the database's clock).
//
// The schema is migrated by [Open], versioned, under an advisory lock, so
// several processes may start at once. Everything lives in the DSN's
// current schema, and the NOTIFY channel and lock keys are derived from
// that schema's name, so fleets in separate schemas of one database do
// not see each other.
package fleethealth
