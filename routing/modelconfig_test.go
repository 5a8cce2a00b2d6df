package routing

import (
	"testing"

	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"
)

func toolNames(req *model.LLMRequest) (decls []string, dict []string) {
	for _, t := range req.Config.Tools {
		for _, fd := range t.FunctionDeclarations {
			decls = append(decls, fd.Name)
		}
	}
	for n := range req.Tools {
		dict = append(dict, n)
	}
	return decls, dict
}

// TestSnapshotApply: applying one model's config, then another's, gives
// exactly the second model's request: nothing of the first survives, and
// what neither owns (a hook's field) is kept.
func TestSnapshotApply(t *testing.T) {
	configs, err := NewModelConfigs(map[string]ModelConfig{
		"gemini-2.5-pro": {Temperature: ptr[float32](0.1), Instruction: "PRO", ExcludeTools: []string{"shell"}},
		"openai:llama":   {Temperature: ptr[float32](0.7), ExcludeTools: []string{"read"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	req := &model.LLMRequest{
		Model: "auto",
		Config: &genai.GenerateContentConfig{
			SystemInstruction: genai.NewContentFromText("base prompt", genai.RoleUser),
			Tools:             []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "read"}, {Name: "shell"}}}},
		},
		Tools: map[string]any{"read": 1, "shell": 2},
	}
	snap := takeSnapshot(req)
	snap.apply(req, "gemini-2.5-pro", configs.For("gemini-2.5-pro"))
	decls, dict := toolNames(req)
	if req.Model != "gemini-2.5-pro" || *req.Config.Temperature != 0.1 || len(decls) != 1 || decls[0] != "read" || len(dict) != 1 {
		t.Fatalf("pro request: model %q temp %v decls %v dict %v", req.Model, req.Config.Temperature, decls, dict)
	}
	if n := len(req.Config.SystemInstruction.Parts); n != 2 || req.Config.SystemInstruction.Parts[1].Text != "PRO" {
		t.Errorf("pro instruction = %+v", req.Config.SystemInstruction.Parts)
	}
	if tc := req.Config.ThinkingConfig; tc == nil || *tc.ThinkingBudget != DefaultThinkingBudget || !tc.IncludeThoughts {
		t.Errorf("pro thinking config = %+v", tc)
	}
	req.Config.Labels = map[string]string{"hook": "kept"}

	snap.apply(req, "openai:llama", configs.For("openai:llama"))
	decls, dict = toolNames(req)
	if req.Model != "openai:llama" || *req.Config.Temperature != 0.7 || len(decls) != 1 || decls[0] != "shell" || len(dict) != 1 || req.Tools["shell"] != 2 {
		t.Errorf("llama request: model %q temp %v decls %v dict %v", req.Model, *req.Config.Temperature, decls, dict)
	}
	if req.Config.ThinkingConfig != nil || req.Config.TopK != nil {
		t.Errorf("Gemini-only config leaked to an OpenAI model: %+v", req.Config)
	}
	if n := len(req.Config.SystemInstruction.Parts); n != 1 {
		t.Errorf("instruction parts = %d: the pro instruction survived", n)
	}
	if req.Config.Labels["hook"] != "kept" {
		t.Errorf("labels = %v", req.Config.Labels)
	}
	// The snapshot itself is untouched.
	if len(snap.tools[0].FunctionDeclarations) != 2 || len(snap.dict) != 2 || len(snap.sys.Parts) != 1 {
		t.Errorf("snapshot changed: %+v", snap)
	}
}

func TestFamilyConfig(t *testing.T) {
	if c := familyConfig("gemini-3-pro-preview"); c.ThinkingLevel != "HIGH" || c.ThinkingBudget != nil {
		t.Errorf("gemini 3: %+v", c)
	}
	if c := familyConfig("replay:x.jsonl"); c.Temperature != nil || c.IncludeThoughts != nil {
		t.Errorf("replay: %+v", c)
	}
	if _, err := NewModelConfigs(map[string]ModelConfig{"m": {ThinkingLevel: "ludicrous"}}); err == nil {
		t.Error("a bad thinking level was accepted")
	}
}
