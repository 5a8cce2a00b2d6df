// Package routes builds a session's model routing service from settings:
// the fallback policy chains, the per-model configs, the router's settings
// and the attempt budget. The composition root calls it; it knows nothing
// of the session.
package routes

import (
	"fmt"
	"log/slog"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/routing"
	"github.com/agentry-dev/agentry/runtime/llm"
)

// New returns the model routing service of one session built from the
// settings: the policy chains (the user's before the built-in ones), the
// per-model configs, the router's settings and the attempt budget. avail
// may be shared with other sessions; nil gives the session its own. An
// error names the setting at fault.
func New(s *config.Settings, avail *routing.Availability, handler routing.FallbackHandler, log *slog.Logger) (*routing.Service, error) {
	chains := make([]routing.Chain, len(s.Model.FallbackChains))
	for i, entries := range s.Model.FallbackChains {
		chain := make(routing.Chain, len(entries))
		for j, e := range entries {
			p := routing.Policy{Model: e.Model, LastResort: e.LastResort, MaxAttempts: e.MaxAttempts}
			if len(e.Actions) > 0 {
				p.Actions = map[routing.FailureKind]routing.Action{}
				for k, a := range e.Actions {
					p.Actions[routing.FailureKind(k)] = routing.Action(a)
				}
			}
			if len(e.Transitions) > 0 {
				p.Transitions = map[routing.FailureKind]routing.Transition{}
				for k, tr := range e.Transitions {
					p.Transitions[routing.FailureKind(k)] = routing.Transition(tr)
				}
			}
			if _, err := llm.ParseModel(e.Model); err != nil {
				return nil, fmt.Errorf("settings model.fallbackChains[%d][%d]: %w", i, j, err)
			}
			chain[j] = p
		}
		chains[i] = chain
	}
	catalog, err := routing.NewCatalog(routing.CatalogConfig{
		Access: routing.Access{Preview: s.Model.PreviewAccess},
		Chains: chains,
	})
	if err != nil {
		return nil, fmt.Errorf("settings model.fallbackChains: %w", err)
	}
	user := make(map[string]routing.ModelConfig, len(s.Model.Configs))
	for name, c := range s.Model.Configs {
		user[name] = routing.ModelConfig(c)
	}
	configs, err := routing.NewModelConfigs(user)
	if err != nil {
		return nil, fmt.Errorf("settings model.configs: %w", err)
	}
	rs := routing.DefaultRouterSettings()
	rs.NumericalRouting = s.Model.Routing.NumericalRouting
	rs.PlanRouting = s.Model.Routing.PlanRouting
	rs.NumericalThreshold = s.Model.Routing.NumericalThreshold
	if s.Model.Routing.ClassifierModel != "" {
		rs.ClassifierModel = s.Model.Routing.ClassifierModel
	}
	return routing.NewService(routing.ServiceConfig{
		Model:        s.Model.Name,
		ApprovalMode: s.General.DefaultApprovalMode,
		Availability: avail,
		Catalog:      catalog,
		Configs:      configs,
		Settings:     rs,
		Handler:      handler,
		MaxAttempts:  s.General.MaxAttempts,
		Logger:       log,
	})
}
