// Package turncost measures what a turn costs in agentry against the
// framework floor, a bare ADK for Go (v2.2.0) runner doing the same turn.
// It holds only tests; the figures and how to run them are in
// docs/benchmarks.md.
//
// A turn is one prompt on a scripted model: the first model call answers
// with a call of a trivial tool, the tool runs, and the second call
// answers with text in three streamed chunks — two model calls, one tool
// call. Before every turn, outside the timed part, the stored session is
// put back to a history of a fixed size: 20, 100 or 500 events of a coding
// conversation (prompts, model text, function calls and their responses
// of a few hundred bytes to a few kilobytes; the model's first request
// holds about 420 KB of contents at 500 events).
//
// Three variants run the same turn over the same history:
//
//   - adk, the floor: ADK's runner over an llmagent with agentry's system
//     prompt, a functiontool and session.InMemoryService, the model a
//     scripted model.LLM that streams as ADK expects (a partial response
//     per text chunk, then the complete one); the runner's events are
//     consumed as they come.
//   - mem: runtime.New as compose.FromSettings builds a session from the
//     default settings — the processor chain (content, masking, routing),
//     the routing service, the default approval policy and loop detection
//     — over ADK's in-memory service, with the same tool as a tools.Tool
//     (the function tool's declaration) and a scripted llm.Backend; the
//     turn is a Send and its Stream read to agent_end, as a driver does.
//   - sqlite: the same over agentry's SQLite store (sessions.OpenSQLite,
//     in the test's temporary directory), with chat compression, which
//     compose adds for a store that can be rewritten.
//
// The agentry variants leave out what compose adds beyond that: the
// transcript recorder, command hooks, telemetry, MCP servers, subagents
// and the built-in tools.
//
// The model gets the same request from every variant: the same system
// instruction, the same tool declaration and the same history; agentry
// adds only its session context at the start of the first user turn and
// the routing's generation settings. TestTurn checks that, and that each
// variant's turn makes two model calls and one tool call whose output
// reaches the second request; every benchmark turn checks the counts and
// that the first request held the whole history and the prompt, so a
// benchmark cannot measure a turn that did not happen.
//
// BenchmarkTurn/history=N runs rounds: the three histories are put back,
// then one turn of each variant runs, each timed and its allocations
// counted on its own, the variant that goes first rotating from round to
// round. Its metrics:
//
//   - ns/op, B/op, allocs/op: a round, the three turns together.
//   - adk-ns/turn, mem-ns/turn, sqlite-ns/turn: a turn's mean wall time.
//   - <variant>-cpu-ns/turn: a turn's mean CPU time of the whole process
//     (Unix only), which leaves out the time other processes took from it
//     but counts every goroutine of this one: agentry's session
//     goroutine, the garbage collector's workers.
//   - <variant>-B/turn, <variant>-allocs/turn: heap bytes and objects a
//     turn allocates, counted exactly as the testing package counts them.
//   - mem/adk-ns, mem/adk-cpu (and sqlite/…): the median, over the
//     rounds, of the round's ratio of the variant's turn to the bare ADK
//     turn run next to it. Pairing and the median make them steady on a
//     shared machine: a turn slowed by another process, or by a garbage
//     collection that happened to land in it, moves them little. The
//     collector's work is thus mostly left out of them; what causes it
//     shows in the bytes ratio, and the mean times include it.
//   - mem/adk-B, mem/adk-allocs (and sqlite/…): ratios of the totals.
//
// The ratios are the figures to compare from one commit to the next; run
// the benchmark with -count and compare with benchstat. BenchmarkVariant
// runs one variant alone, for a CPU profile of it.
//
// Every BenchmarkTurn turn follows a reset that rewrote the stored
// history, and pays a share of the collections that the resets' and the
// other variants' garbage start. BenchmarkGrowth measures how one
// variant's turn grows with the history without either: per round, the
// histories of 20 and 500 events are put back and the garbage collected
// with the timer stopped, then eight turns run on each, alternately (the
// histories grow by four events a turn); it reports each size's CPU,
// wall time, bytes and allocations per turn and the median over the
// rounds of the large history's turns over the small one's.
package turncost
