package ide

// SetQueuedHook sets the hook called when an OpenDiff of path starts
// waiting for the diff before it. Call it before any OpenDiff.
func SetQueuedHook(c *Client, f func(path string)) { c.queued = f }
