package tools

import (
	"context"
	"fmt"
)

// cancelled is the error of a call stopped by ctx: of type ErrCancelled,
// wrapping context.Cause(ctx).
func cancelled(ctx context.Context, tool string) error {
	return &Error{Type: ErrCancelled, Msg: fmt.Sprintf("The %s call was cancelled.", tool), Err: context.Cause(ctx)}
}
