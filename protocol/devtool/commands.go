package devtool

// SlashCommand is a command a client can list (commands/get) and run
// (command/execute).
type SlashCommand struct {
	Name        string                 `json:"name"`
	Description string                 `json:"description"`
	Arguments   []SlashCommandArgument `json:"arguments"`
	SubCommands []SlashCommand         `json:"sub_commands"`
}

// SlashCommandArgument is one argument of a SlashCommand.
type SlashCommandArgument struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	IsRequired  bool   `json:"is_required"`
}

// GetAllSlashCommandsResponse is the result of commands/get.
type GetAllSlashCommandsResponse struct {
	Commands []SlashCommand `json:"commands"`
}

// ExecuteSlashCommandRequest is the params of command/execute. ContextID
// is agentry's addition: the conversation the command acts on (a command
// such as rewind or model needs one; memory and tools do not).
type ExecuteSlashCommandRequest struct {
	CommandPath []string `json:"command_path"`
	Args        string   `json:"args"`
	ContextID   string   `json:"context_id,omitempty"`
}

// CommandExecutionStatus is the initial status of a command execution.
type CommandExecutionStatus string

// The command execution statuses.
const (
	CommandStarted                    CommandExecutionStatus = "STARTED"
	CommandFailedToStart              CommandExecutionStatus = "FAILED_TO_START"
	CommandAwaitingShellConfirmation  CommandExecutionStatus = "AWAITING_SHELL_CONFIRMATION"
	CommandAwaitingActionConfirmation CommandExecutionStatus = "AWAITING_ACTION_CONFIRMATION"
)

// ExecuteSlashCommandResponse is the first result of command/execute.
type ExecuteSlashCommandResponse struct {
	ExecutionID string                 `json:"execution_id"`
	Status      CommandExecutionStatus `json:"status"`
	Message     string                 `json:"message,omitempty"`
}

// ParseExecuteRequest reads command/execute params, accepting the
// lowerCamelCase spelling too.
func ParseExecuteRequest(params map[string]any) (ExecuteSlashCommandRequest, error) {
	var r ExecuteSlashCommandRequest
	if err := remarshal(snakeKeys(params), &r); err != nil {
		return r, err
	}
	return r, nil
}
