package tools

// ModifiedByUser is the argument an approver sets on a write_file or
// replace call whose content the user changed before approving it
// (gemini-cli's modified_by_user): the tool's result then tells the model
// what the user made of it, in gemini-cli's words.
const ModifiedByUser = "modified_by_user"

// modifiedByUser reports whether the call's content came from the user.
func modifiedByUser(a map[string]any) bool {
	v, _ := a[ModifiedByUser].(bool)
	return v
}
