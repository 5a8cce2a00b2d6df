package compose

import (
	"testing"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/runtime"
)

// TestApprovalModesAgree: every approval mode the settings accept is the
// policy's mode of the same name and rank, and a mode the settings refuse
// the policy refuses too.
func TestApprovalModesAgree(t *testing.T) {
	for _, m := range []string{config.ApprovalPlan, config.ApprovalDefault, config.ApprovalAutoEdit, config.ApprovalYolo, "reckless", ""} {
		if got, want := runtime.ApprovalMode(m).Rank(), config.ApprovalRank(m); got != want {
			t.Errorf("%q: runtime rank %d, config rank %d", m, got, want)
		}
		_, err := runtime.NewPolicy(runtime.ApprovalMode(m), nil)
		if valid := config.ApprovalRank(m) >= 0; (err == nil) != valid {
			t.Errorf("%q: NewPolicy error %v, settings accept it: %v", m, err, valid)
		}
	}
	if runtime.ApprovalYolo != runtime.ApprovalMode(config.ApprovalYolo) || runtime.ApprovalPlan != runtime.ApprovalMode(config.ApprovalPlan) ||
		runtime.ApprovalAutoEdit != runtime.ApprovalMode(config.ApprovalAutoEdit) || runtime.ApprovalDefault != runtime.ApprovalMode(config.ApprovalDefault) {
		t.Error("runtime's approval modes are not spelled as the settings spell them")
	}
}
