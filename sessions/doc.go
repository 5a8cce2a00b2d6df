// Package sessions is agentry's ADK session.Service: sessions kept in
// SQLite (one file, the embedded default) or PostgreSQL, served as live
// objects.
//
// ADK's own services hand out a fresh copy of a session on every Get, so a
// request processor that rewrites an event (tool-output masking) changes
// only a copy that the next turn never sees, and no ADK service can update
// a stored event. Store differs in three ways and otherwise keeps ADK's
// in-memory semantics (checked by ADK's conformance suite):
//
//   - An unfiltered Get, and Create, return the live session object: the
//     same pointer every time, loaded from storage once and then kept in
//     memory. A change a processor makes to one of its events is seen by
//     every later turn, and AppendEvent on it appends once.
//   - Filtered Gets (NumRecentEvents, After) and List return copies.
//   - ReplaceEventContent replaces an event's content in the live object
//     and in storage, in one statement; ReplaceEventContents replaces
//     several in one transaction, all or none.
//   - Live returns the live object to code inside a run (a request
//     processor): in ADK v2.2 a callback's context has no Session.
//
// State keys keep ADK's prefixes: "app:" keys are shared by every session
// of the app and "user:" keys by every session of the user (both stored
// without the prefix), and "temp:" keys live only in memory: AppendEvent
// applies them to the session object it is given, never stores them, and
// strips them from the stored event's StateDelta. ADK drops temp state when
// an invocation ends; a live object outlives invocations, so an unfiltered
// Get (which is how ADK's runner starts each run) drops the temp keys of
// the previous one. Code inside a run uses Live, which keeps them.
//
// Every append is one transaction; an append that returned survives any
// crash of the process (SQLite runs in WAL mode with synchronous=NORMAL:
// a power cut may drop the last appends whole, never tear one).
//
// The Store owns the live objects of its database: sessions are meant to
// be written by one Store at a time. Another process may read the same
// database (the SQLite file is opened with a busy timeout), but its writes
// to a session this Store has loaded are not seen by the live object.
package sessions
