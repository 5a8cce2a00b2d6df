package runtime

import "errors"

// Errors of ModifiedArgs.
var (
	// ErrNotEditable reports modified content for a call that writes no
	// file.
	ErrNotEditable = errors.New("only a file edit (write_file or replace) can be modified")
	// ErrNoPreview reports a replace call whose edit could not be
	// previewed, so there is no whole file to replace.
	ErrNoPreview = errors.New("the proposed edit could not be previewed, so it cannot be modified; allow it once or cancel it")
)

// ModifiedArgs rewrites an edit call awaiting approval so that it writes
// content, the file as the user edited it (gemini-cli's "modify with
// external editor", or a client's modified file details): write_file takes
// it as its content; replace becomes a replacement of the whole file as
// previewed, so it fails, rather than clobbering, if the file changed in
// between. req.Args is not changed.
func ModifiedArgs(req ApprovalRequest, content string) (map[string]any, error) {
	args := make(map[string]any, len(req.Args)+1)
	for k, v := range req.Args {
		args[k] = v
	}
	switch req.Tool {
	case "write_file":
		args["content"] = content
	case "replace":
		if req.Diff == nil {
			return nil, ErrNoPreview
		}
		args["old_string"] = req.Diff.Before
		args["new_string"] = content
		args["allow_multiple"] = false
	default:
		return nil, ErrNotEditable
	}
	return args, nil
}
