// Generates golden.json: the decisions, load errors and stable JSON of
// gemini-cli 0.61.0's own policy engine for the cases below, which
// policy's tests replay against agentry's engine.
//
// Usage: node gen.mjs <gemini-cli bundle dir> <output file>
// (the bundle dir is <install>/node_modules/@google/gemini-cli/bundle;
// policy's TestGoldenCurrent runs this and compares with golden.json).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [bundle, outFile] = process.argv.slice(2);
if (!bundle || !outFile) {
  console.error('usage: node gen.mjs <bundle dir> <output file>');
  process.exit(2);
}

// The chunk gemini.js imports that defines the policy engine.
const entry = fs.readFileSync(path.join(bundle, 'gemini.js'), 'utf8');
const chunks = [...new Set(entry.match(/chunk-[A-Z0-9]+\.js/g))];
const chunk = chunks.find((c) => fs.readFileSync(path.join(bundle, c), 'utf8').includes('async function loadPoliciesFromToml('));
const src = fs.readFileSync(path.join(bundle, chunk), 'utf8');
const m = await import(path.join(bundle, chunk));
await m.initializeShellParsers();

// stableStringify is not exported: its source is taken from the chunk.
const start = src.indexOf('function stableStringify(obj) {');
const end = src.indexOf('\n}\n', start);
const stableStringify = new Function(src.slice(start, end + 2) + '\nreturn stableStringify;')();

const WORKSPACE = '/nonexistent/agentry-policy-ws';
const policiesDir = path.join(bundle, 'policies');
const defaultFiles = fs.readdirSync(policiesDir).filter((f) => f.endsWith('.toml')).sort();

// Silence the engine's debug logging (it writes to the console).
const quiet = async (fn) => {
  const saved = [console.log, console.debug, console.warn, console.error, console.info];
  console.log = console.debug = console.warn = console.error = console.info = () => {};
  try { return await fn(); } finally { [console.log, console.debug, console.warn, console.error, console.info] = saved; }
};

async function loadDefaults() {
  const rules = [];
  for (const f of defaultFiles) {
    const r = await m.loadPoliciesFromToml([path.join(policiesDir, f)], () => 1);
    rules.push(...r.rules);
  }
  return rules;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'policy-gen-'));
let fileNo = 0;
async function loadToml(toml, tier, name) {
  const dir = path.join(tmp, String(fileNo++));
  fs.mkdirSync(dir);
  const file = path.join(dir, name ?? 'policy.toml');
  fs.writeFileSync(file, toml);
  return m.loadPoliciesFromToml([file], () => tier);
}

function ruleSummary(r) {
  return {
    toolName: r.toolName,
    mcpName: r.mcpName ?? '',
    subagent: r.subagent ?? '',
    argsPattern: r.argsPattern ? r.argsPattern.source : '',
    decision: r.decision,
    priority: r.priority,
    modes: r.modes ?? null,
    interactive: r.interactive ?? null,
    toolAnnotations: r.toolAnnotations ?? null,
    allowRedirection: r.allowRedirection ?? false,
    denyMessage: r.denyMessage ?? '',
    source: r.source ?? '',
  };
}

// ---- parse cases
const parseCases = [
  ['valid', `[[rule]]
toolName = "read_file"
decision = "allow"
priority = 100
name = "ignored"

[[rule]]
toolName = ["glob", "grep_search"]
decision = "deny"
priority = 5
modes = ["default", "autoEdit"]
interactive = false
deny_message = "no"

[[rule]]
toolName = "run_shell_command"
commandPrefix = ["git", "npm test"]
decision = "allow"
priority = 10
allow_redirection = true

[[rule]]
toolName = "run_shell_command"
commandRegex = "ls.*"
decision = "ask_user"
priority = 11

[[rule]]
toolName = "query"
mcpName = "db"
decision = "allow"
priority = 12
toolAnnotations = { readOnlyHint = true }

[[rule]]
toolName = "*"
mcpName = "*"
decision = "ask_user"
priority = 13

[[rule]]
toolName = "invoke_agent"
subagent = "helper"
argsPattern = "\\\\x00\\"agent_name\\":\\"x\\"\\\\x00"
decision = "deny"
priority = 14
denyMessage = "not x"

[[safety_checker]]
toolName = "write_file"
priority = 15
[safety_checker.checker]
type = "in-process"
name = "allowed-path"
`, 4],
  ['toml syntax error', `[[rule]]\ntoolName = "read_file\ndecision = "allow"\n`, 4],
  ['missing fields', `[[rule]]\ntoolName = "read_file"\n`, 4],
  ['bad decision', `[[rule]]\ntoolName = "read_file"\ndecision = "maybe"\npriority = 1\n`, 3],
  ['priority too big', `[[rule]]\ntoolName = "read_file"\ndecision = "allow"\npriority = 1000\n`, 4],
  ['priority negative', `[[rule]]\ntoolName = "read_file"\ndecision = "allow"\npriority = -1\n`, 4],
  ['priority float', `[[rule]]\ntoolName = "read_file"\ndecision = "allow"\npriority = 1.5\n`, 4],
  ['priority string', `[[rule]]\ntoolName = "read_file"\ndecision = "allow"\npriority = "1"\n`, 4],
  ['bad mode', `[[rule]]\ntoolName = "read_file"\ndecision = "allow"\npriority = 1\nmodes = ["auto_edit"]\n`, 4],
  ['bad types', `[[rule]]\ntoolName = 5\ndecision = "allow"\npriority = 1\ninteractive = "yes"\nmcpName = 3\n`, 4],
  ['rule not array', `rule = 5\n`, 4],
  ['second rule bad', `[[rule]]\ntoolName = "a"\ndecision = "allow"\npriority = 1\n[[rule]]\ntoolName = "b"\ndecision = "allow"\n`, 4],
  ['prefix on non-shell', `[[rule]]\ntoolName = "read_file"\ncommandPrefix = "git"\ndecision = "allow"\npriority = 1\n`, 4],
  ['prefix and argsPattern', `[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "git"\nargsPattern = "x"\ndecision = "allow"\npriority = 1\n`, 4],
  ['prefix and regex', `[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "git"\ncommandRegex = "x"\ndecision = "allow"\npriority = 1\n`, 4],
  ['empty toolName in list', `[[rule]]\ntoolName = ["read_file", ""]\ndecision = "allow"\npriority = 1\n`, 4],
  ['double underscore', `[[rule]]\ntoolName = "srv__tool"\ndecision = "allow"\npriority = 1\n`, 4],
  ['near miss', `[[rule]]\ntoolName = "read_fil"\ndecision = "allow"\npriority = 1\n[[rule]]\ntoolName = "grep"\ndecision = "allow"\npriority = 1\n[[rule]]\ntoolName = "my_custom_tool_name"\ndecision = "allow"\npriority = 1\n`, 4],
  ['bad regex', `[[rule]]\ntoolName = "read_file"\nargsPattern = "(unclosed"\ndecision = "allow"\npriority = 1\n[[rule]]\ntoolName = "glob"\ndecision = "allow"\npriority = 1\n`, 4],
  ['unsafe regex', `[[rule]]\ntoolName = "read_file"\nargsPattern = "(a+)+"\ndecision = "allow"\npriority = 1\n[[rule]]\ntoolName = "glob"\ndecision = "allow"\npriority = 2\n`, 4],
  ['long regex', `[[rule]]\ntoolName = "read_file"\nargsPattern = "${'a'.repeat(2049)}"\ndecision = "allow"\npriority = 1\n`, 4],
  ['bad checker', `[[safety_checker]]\ntoolName = "x"\n[safety_checker.checker]\ntype = "nope"\n`, 2],
  ['checker only', `[[safety_checker]]\ntoolName = "*"\npriority = 100\n[safety_checker.checker]\ntype = "in-process"\nname = "conseca"\n`, 1],
  ['empty file', ``, 4],
  ['decision number', `[[rule]]\ntoolName = "a"\ndecision = 5\npriority = 1\n`, 4],
  ['decision bool', `[[rule]]\ntoolName = "a"\ndecision = true\npriority = 1\n`, 4],
  ['mode number', `[[rule]]\ntoolName = "a"\ndecision = "allow"\npriority = 1\nmodes = ["default", 3]\n`, 4],
  ['toolName list with number', `[[rule]]\ntoolName = ["a", 3]\ndecision = "allow"\npriority = 1\n`, 4],
  ['rule element not table', `rule = [1]\n`, 4],
  ['annotations not table', `[[rule]]\ntoolName = "a"\ndecision = "allow"\npriority = 1\ntoolAnnotations = "x"\n`, 4],
  ['datetime', `[[rule]]\ntoolName = "a"\ndecision = "allow"\npriority = 1\ndenyMessage = 1979-05-27T07:32:00Z\n`, 4],
  ['priority float integral', `[[rule]]\ntoolName = "a"\ndecision = "allow"\npriority = 2.0\n`, 4],
  ['empty prefix list', `[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = []\ndecision = "allow"\npriority = 1\n`, 4],
  ['empty prefix string', `[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = ""\ndecision = "allow"\npriority = 1\n`, 4],
  ['mcp star star', `[[rule]]\ntoolName = "*"\nmcpName = "srv"\ndecision = "allow"\npriority = 1\n[[rule]]\ntoolName = "t"\nmcpName = "*"\ndecision = "allow"\npriority = 1\n`, 4],
  ['checker missing checker', `[[safety_checker]]\ntoolName = "x"\n`, 4],
];
const parse = [];
for (const [name, toml, tier] of parseCases) {
  const r = await quiet(() => loadToml(toml, tier, 'case.toml'));
  parse.push({ name, tier, toml, rules: r.rules.map(ruleSummary), errors: r.errors.map((e) => m.formatPolicyError(e)) });
}

// ---- engine cases
const defaults = await quiet(loadDefaults);

async function decide(policies, useDefaults, disableAlwaysAllow, call) {
  let rules = useDefaults ? [...defaults] : [];
  for (const p of policies) {
    const r = await quiet(() => loadToml(p.toml, p.tier));
    rules.push(...r.rules);
  }
  const engine = new m.PolicyEngine({
    rules,
    approvalMode: call.mode ?? 'default',
    nonInteractive: !call.interactive,
    disableAlwaysAllow,
    isTrustedFolder: () => !!call.trusted,
    sandboxManager: new m.NoopSandboxManager({ workspace: WORKSPACE }),
  });
  const name = call.server ? `mcp_${call.server}_${call.serverTool}` : call.tool;
  const fc = { name };
  if (call.args !== undefined) fc.args = call.args;
  const res = await quiet(() => engine.check(fc, call.server || undefined, call.annotations, call.subagent || undefined));
  return { decision: res.decision, source: res.rule?.source ?? '', denyMessage: res.rule?.denyMessage ?? '' };
}

const engineCases = [];
async function addCase(name, policies, useDefaults, disableAlwaysAllow, calls) {
  const out = [];
  for (const call of calls) {
    out.push({ call, want: await decide(policies, useDefaults, disableAlwaysAllow, call) });
  }
  engineCases.push({ name, policies, defaults: useDefaults, disableAlwaysAllow, calls: out });
}

// The built-in tools under the defaults: mode × interactive.
const builtinCalls = [];
const builtinArgs = {
  read_file: { file_path: 'src/a.go' }, read_many_files: { include: ['*.go'] }, write_file: { file_path: 'src/a.go', content: 'x' },
  replace: { file_path: 'src/a.go', old_string: 'a', new_string: 'b' }, glob: { pattern: '*.go' }, grep_search: { pattern: 'foo' },
  search_file_content: { pattern: 'foo' }, list_directory: { dir_path: '.' }, run_shell_command: { command: 'npm test' },
  invoke_agent: { agent_name: 'codebase_investigator', prompt: 'x' }, complete_task: { result: 'x' }, list_mcp_resources: {},
  read_mcp_resource: { uri: 'x' }, web_fetch: { prompt: 'x' }, google_web_search: { query: 'x' }, ask_user: { question: 'x' },
  enter_plan_mode: {}, exit_plan_mode: {}, activate_skill: { name: 'x' }, write_todos: { todos: [] }, unknown_tool: {},
};
for (const mode of ['default', 'autoEdit', 'yolo', 'plan']) {
  for (const interactive of [true, false]) {
    for (const [tool, args] of Object.entries(builtinArgs)) {
      builtinCalls.push({ tool, args, mode, interactive, trusted: true });
    }
    builtinCalls.push({ tool: 'write_file', args: { file_path: '/home/u/.gemini/tmp/abc/plans/plan-1.md', content: 'x' }, mode, interactive, trusted: true });
    builtinCalls.push({ tool: 'write_file', args: { file_path: 'plans/plan-1.md', content: 'x' }, mode, interactive, trusted: true });
    builtinCalls.push({ tool: 'invoke_agent', args: { agent_name: 'other', prompt: 'x' }, mode, interactive, trusted: true });
    builtinCalls.push({ tool: 'write_file', args: { file_path: 'package.json', content: 'x' }, mode, interactive, trusted: true });
    builtinCalls.push({ tool: 'lookup', server: 'docs', serverTool: 'lookup', args: {}, annotations: { readOnlyHint: true, _serverName: 'docs' }, mode, interactive, trusted: true });
    builtinCalls.push({ tool: 'drop', server: 'db', serverTool: 'drop', args: {}, annotations: { destructiveHint: true }, mode, interactive, trusted: true });
  }
}
await addCase('defaults', [], true, false, builtinCalls);

// Matching, field by field (no defaults).
const I = { interactive: true, trusted: true };
await addCase('matching', [{ tier: 4, toml: `
[[rule]]
toolName = "mcp_*"
decision = "ask_user"
priority = 10
[[rule]]
toolName = "mcp_github_*"
decision = "allow"
priority = 20
[[rule]]
toolName = "drop_table"
mcpName = "db"
decision = "deny"
priority = 30
denyMessage = "never drop"
[[rule]]
toolName = "mcp_db_select"
decision = "allow"
priority = 30
[[rule]]
toolName = "*"
mcpName = "*"
toolAnnotations = { readOnlyHint = true }
decision = "allow"
priority = 25
[[rule]]
toolName = "read_*"
decision = "deny"
priority = 90
[[rule]]
toolName = "grep_search"
decision = "deny"
priority = 40
denyMessage = "no grep"
[[rule]]
toolName = "read_file"
subagent = "scout"
decision = "deny"
priority = 80
[[rule]]
toolName = "read_file"
argsPattern = "\\\\x00\\"file_path\\":\\"secret[^\\"]*\\"\\\\x00"
decision = "deny"
priority = 70
[[rule]]
toolName = "read_file"
argsPattern = "secret"
decision = "ask_user"
priority = 60
[[rule]]
toolName = "read_file"
decision = "allow"
priority = 50
[[rule]]
toolName = "write_file"
modes = ["autoEdit"]
decision = "allow"
priority = 50
[[rule]]
toolName = "write_file"
interactive = false
decision = "deny"
priority = 45
[[rule]]
toolName = "codebase_investigator"
decision = "allow"
priority = 50
[[rule]]
toolName = "invoke_agent"
decision = "ask_user"
priority = 5
[[rule]]
toolName = "web_fetch"
argsPattern = "\\"url\\":\\"https://example\\\\.com"
decision = "allow"
priority = 50
` }, { tier: 5, toml: `
[[rule]]
toolName = "glob"
decision = "allow"
priority = 950
` }], false, false, [
  { tool: 'x', server: 'other', serverTool: 'x', args: {}, ...I },
  { tool: 'create_issue', server: 'github', serverTool: 'create_issue', args: {}, ...I },
  { tool: 'drop_table', server: 'db', serverTool: 'drop_table', args: {}, ...I },
  { tool: 'select', server: 'db', serverTool: 'select', args: {}, ...I },
  { tool: 'peek', server: 'fs', serverTool: 'peek', args: {}, annotations: { readOnlyHint: true }, ...I },
  { tool: 'peek', server: 'fs', serverTool: 'peek', args: {}, annotations: { readOnlyHint: false }, ...I },
  { tool: 'read_*', args: {}, ...I },
  { tool: 'read_file', args: { file_path: 'a.go' }, ...I },
  { tool: 'read_file', args: { file_path: 'a.go' }, subagent: 'scout', ...I },
  { tool: 'read_file', args: { file_path: 'secret.txt' }, ...I },
  { tool: 'read_file', args: { file_path: 'a.go', note: 'secret' }, ...I },
  { tool: 'read_file', args: { nested: { file_path: 'secret.txt' } }, ...I },
  { tool: 'read_file', ...I },
  { tool: 'search_file_content', args: { pattern: 'x' }, ...I },
  { tool: 'grep_search', args: { pattern: 'x' }, ...I },
  { tool: 'write_file', args: { file_path: 'a' }, mode: 'autoEdit', ...I },
  { tool: 'write_file', args: { file_path: 'a' }, mode: 'default', ...I },
  { tool: 'write_file', args: { file_path: 'a' }, mode: 'default', interactive: false, trusted: true },
  { tool: 'write_file', args: { file_path: 'a' }, mode: 'yolo', interactive: false, trusted: true },
  { tool: 'invoke_agent', args: { agent_name: 'codebase_investigator' }, ...I },
  { tool: 'invoke_agent', args: { agent_name: 'other' }, ...I },
  { tool: 'web_fetch', args: { url: 'https://example.com/x' }, ...I },
  { tool: 'web_fetch', args: { url: 'https://evil.com/?https://example.com' }, ...I },
  { tool: 'glob', args: { pattern: '*' }, ...I },
  { tool: 'unknown', args: {}, interactive: false, trusted: true },
  { tool: 'unknown', args: {}, mode: 'yolo', interactive: false, trusted: true },
]);
await addCase('always allow disabled', [{ tier: 4, toml: `
[[rule]]
toolName = "glob"
decision = "allow"
priority = 950
` }], false, true, [{ tool: 'glob', args: { pattern: '*' }, ...I }]);

// Shell commands in every scenario.
const commands = [
  'ls -la', 'ls -la && rm x', 'cat foo.txt', 'cat /etc/passwd', 'cat ../outside.txt', 'echo hi > out.txt', 'echo hi >> out.txt',
  'cat < in.txt', 'cat <<EOF\nhi\nEOF', 'grep foo <<< "bar"', 'rm -rf build', 'rm -f x', 'rm x', 'sudo rm -rf /',
  "find . -name '*.go'", 'find . -delete', 'find . -exec rm {} \\;', 'rg --pre cat foo', 'rg foo', 'git status',
  'git log --oneline', 'git diff --output=x', 'git -c core.pager=x log', 'git push', 'git branch', 'git branch -D main',
  'git commit -m x', 'sed -n 10p file', 'sed -i s/a/b/ file', 'base64 file', 'base64 -o out file', 'bash -c "ls -la"',
  "bash -c 'rm -rf x'", 'sh -c "git status && ls"', 'echo $(rm -rf x)', '(cd sub && ls)', 'ls | wc -l', 'ls 2>&1',
  'npm test', 'npm test && git push', 'npm testing', 'FOO=1 git status', 'env git status', 'cd ..', 'cd /tmp', 'echo "unterminated',
  'echo ${x@P}', 'ln -s a b', 'for f in *.go; do cat $f; done', 'head -n 5 file | tail -1', 'which go', 'true || false',
  'git status; ls', 'echo `whoami`', 'cat <(ls)', 'export A=1', '[[ -f x ]] && ls', 'ls -la ', '', 'git status > log.txt',
  'ls > f 2>&1', 'echo hi | tee out', 'cd x && ls | grep y > z', 'sudo git push', '"git" status', "'rm' -rf x", 'echo "a;b"',
  'echo a\\;b', 'nohup ls &', 'ls && { rm x; }', '[[ $a == b ]] || rm x', 'for ((i=0;i<3;i++)); do ls; done',
  'until false; do ls; done', "echo $'a\\nb'", 'printf \'%s\' "$(cat x)"', 'x=(a b)', 'let i=1', 'echo ${a:-$(rm x)}',
  'echo "${a}"', 'cat file | xargs rm', "git log --format='%H'", 'npm run build -- --watch', 'python -c "print(1)"',
  "node -e 'console.log(1)'", 'echo ok > /dev/null 2>&1 &', 'ls\nrm x', '  ls  &&  rm  x  ', "echo 'a'\"b\"c", '${CMD} arg',
  '$(which ls) -la', 'env -i ls', 'command ls', 'exec 3>&1', "trap 'rm x' EXIT", 'set -e; ls', 'source ./x.sh',
  'function f { ls; }', 'ls 2> >(tee err)', 'git -C sub status', 'git --no-pager log', 'grep -r foo .', 'grep -f ../pats x',
  'cat -n ./a', 'ls -la ~', 'head -c 10 $HOME/x', 'wc -l < f', 'sed -n 1,5p a.txt', 'find / -name x', 'git branch --list',
  'git show HEAD~1', 'cat a b c | sort | uniq -c', 'echo hi && echo bye', 'rm -r x', 'sudo ls', 'tail -f log',
];
const prefixRules = { tier: 4, toml: `
[[rule]]
toolName = "run_shell_command"
commandPrefix = ["git", "npm test"]
decision = "allow"
priority = 100
[[rule]]
toolName = "run_shell_command"
commandPrefix = "echo"
decision = "allow"
priority = 100
allowRedirection = true
[[rule]]
toolName = "run_shell_command"
commandPrefix = "rm"
decision = "deny"
priority = 100
denyMessage = "no rm"
` };
const scenarios = [
  ['defaults default', [], { mode: 'default', interactive: true, trusted: true }],
  ['defaults autoEdit', [], { mode: 'autoEdit', interactive: true, trusted: true }],
  ['defaults yolo', [], { mode: 'yolo', interactive: true, trusted: true }],
  ['defaults untrusted', [], { mode: 'default', interactive: true, trusted: false }],
  ['defaults headless', [], { mode: 'default', interactive: false, trusted: true }],
  ['prefix rules default', [prefixRules], { mode: 'default', interactive: true, trusted: true }],
  ['prefix rules autoEdit', [prefixRules], { mode: 'autoEdit', interactive: true, trusted: true }],
  ['prefix rules yolo', [prefixRules], { mode: 'yolo', interactive: true, trusted: true }],
];
for (const [name, policies, ctx] of scenarios) {
  await addCase('shell ' + name, policies, true, false, commands.map((command) => ({ tool: 'run_shell_command', args: { command }, ...ctx })));
}
await addCase('shell dir_path', [], true, false, [
  { tool: 'run_shell_command', args: { command: 'ls', dir_path: 'sub' }, ...I },
  { tool: 'run_shell_command', args: { command: 'ls', dir_path: '/elsewhere' }, ...I },
  { tool: 'run_shell_command', args: { command: 'ls', dir_path: '../up' }, ...I },
  { tool: 'run_shell_command', args: { command: 'ls', dir_path: '/elsewhere' }, mode: 'yolo', interactive: true, trusted: true },
  { tool: 'ShellTool', args: { command: 'ls' }, ...I },
]);

// ---- stable JSON
const stableCases = [
  {}, { b: 2, a: 1 }, { command: 'git status', dir_path: 'x' }, { s: 'q"uo\\te\n\t\u0001\u001f<>&\u2028é😀' },
  { n: [1, 1.5, -0, 1e21, 1e-7, 123456789012345680000, 0.1, 1e300, -2.5e-10, 100, 1e-6] }, { nested: { z: 1, a: { y: [null, true, false] } } },
  { arr: [{ b: 1, a: 2 }, [], {}] }, { 'é': 1, 'e': 2, 'Z': 3, 'a': 4, '😀': 5, '\uffff': 6 }, { nul: null },
];
const stable = stableCases.map((args) => ({ args, want: stableStringify(args) }));

// ---- regex: JavaScript's verdict on patterns and subjects
const regexCases = [
  ['\\x00"file_path":"a\\.go"\\x00', ['\u0000"file_path":"a.go"\u0000', '"file_path":"a.go"']],
  ['\\\\0"file_path":"a\\.go"\\\\0', ['\u0000"file_path":"a.go"\u0000', '\\0"file_path":"a.go"\\0']],
  ['(?:a|b)c', ['ac', 'bc', 'c']], ['\\d+\\s\\w', ['12 a', '12\u00a0a', 'x']], ['a.c', ['abc', 'a\nc', 'a\u2028c']],
  ['[^]x', ['\nx', 'x']], ['\\u00e9', ['é', 'e']], ['a{2}', ['aa', 'a']], ['a{', ['a{', 'a']], ['\\/path', ['/path']],
  ['[\\s\\S]', ['\n', 'x']], ['\\cJ', ['\n', 'J']], ['\\0', ['\u0000']], ['^"command":"git', ['"command":"git', 'x"command":"git']],
  ['\\e', ['e']], ['[\\b]', ['\b', 'b']], ['(?<n>a)', ['a']], ['x$', ['x', 'x\n']],
];
const regex = regexCases.map(([pattern, subjects]) => {
  let ok = true; let re;
  try { re = new RegExp(pattern); } catch { ok = false; }
  return { pattern, valid: ok, safe: ok ? m.isSafeRegExp?.(pattern) ?? null : null, matches: ok ? subjects.map((s) => ({ s, match: re.test(s) })) : [] };
});

// ---- shell parsing: tree-sitter-bash's view of command lines
const parseLines = [
  ...commands, 'a | b | c', 'a && (b || c); d &', 'if true; then ls; fi', 'while read l; do echo $l; done < f',
  'case $x in a) ls;; esac', 'f() { rm -rf x; }; f', 'x=$(ls -la | wc -l)', 'echo "$(whoami)"', "echo '$(whoami)'",
  'ls # comment', 'sudo -u bob ls', 'time ls -la', '! ls', 'ls &>/dev/null', 'ls 1>&2', 'cat > f <<EOF\nx\nEOF',
  'A=1 B=2', 'declare -x A=1', 'local a', 'unset A', '[ -f x ]', 'echo $((1 + 2))', '((i++))', 'ls \\\n -la',
  'echo "a" "b c"', 'coproc ls', 'git status && git diff | head', "bash -c 'ls; ls'", 'exec ls', 'eval "rm -rf x"',
  'ls;', ';;', 'ls |', '&& ls', 'echo $(', 'echo }', 'echo {a,b}', 'echo ~/x', 'diff <(ls a) <(ls b)', 'ls -la   ',
];
const shellParse = [];
for (const line of parseLines) {
  const p = await quiet(() => m.parseCommandDetails(line));
  shellParse.push({
    line,
    details: p ? p.details.map((d) => ({ name: d.name, text: d.text, start: d.startIndex })) : null,
    hasError: p ? p.hasError : true,
    roots: await quiet(() => m.getCommandRoots(line)),
    redirects: await quiet(() => m.hasRedirection(line)),
    stripped: m.stripShellWrapper(line),
  });
}

// ---- auto-saved.toml as gemini-cli's policy updater writes it
const savedFile = path.join(tmp, 'saved', 'auto-saved.toml');
const saveEngine = new m.PolicyEngine({ rules: [] });
const bus = new m.MessageBus(saveEngine);
m.createPolicyUpdater(saveEngine, bus, { getAutoSavedPolicyPath: () => savedFile, getWorkspaceAutoSavedPolicyPath: () => savedFile });
const esc = (t) => t.replace(/[-[\]{}()*+?.,\\^$|#\s"]/g, '\\$&');
const updates = [
  { toolName: 'run_shell_command', commandPrefix: ['git', 'npm'], allowRedirection: true, modes: ['default', 'autoEdit', 'yolo'] },
  // buildFilePathArgsPattern('src/a.go'), with its "\\0" defect.
  { toolName: 'read_file', argsPattern: '\\\\0' + esc('"file_path":"src/a.go"') + '\\\\0', modes: ['default', 'autoEdit', 'yolo'] },
  { toolName: 'mcp_db_query', mcpName: 'db', modes: ['autoEdit', 'yolo'] },
  { toolName: 'web_fetch', modes: ['plan', 'default', 'autoEdit', 'yolo'] },
  { toolName: 'run_shell_command', commandPrefix: ['git', 'npm'], modes: ['yolo'] },
];
for (const u of updates) {
  await quiet(() => bus.publish({ type: 'update-policy', persist: true, persistScope: 'user', ...u }));
  for (let i = 0; i < 100 && !fs.existsSync(savedFile); i++) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 200));
}
const saved = { updates, file: fs.readFileSync(savedFile, 'utf8') };

fs.writeFileSync(outFile, JSON.stringify({ generator: 'gemini-cli ' + JSON.parse(fs.readFileSync(path.join(bundle, '..', 'package.json'), 'utf8')).version, workspace: WORKSPACE, parse, engine: engineCases, stable, regex, shellParse, saved }, null, 1) + '\n');
fs.rmSync(tmp, { recursive: true, force: true });
