#!/bin/sh
# A BeforeTool hook for run_shell_command: refuses commands that delete
# recursively or rewrite a remote's history, and lets every other one run.
#
# agentry (like gemini-cli) writes the event to stdin as JSON, with the
# command under tool_input.command; a JSON answer on stdout with
# "decision": "deny" blocks the call and its "reason" reaches the model.
# No output (exit 0) lets the call go on. Plain sh and grep, no jq.
event=$(cat)
case "$event" in
*'"rm -rf'* | *' rm -rf'* | *'"rm -fr'* | *' rm -fr'*)
	reason="recursive deletes are not allowed here; delete the files one by one"
	;;
*'push --force'* | *'push -f'*)
	reason="force pushes are not allowed here; push without --force"
	;;
*)
	exit 0
	;;
esac
printf '{"decision": "deny", "reason": "guard-shell: %s"}\n' "$reason"
