package generala

import (
	"context"
	"strings"
	"time"

	"github.com/svc-dev/svc/internal/agent"
)

// TitlePurpose marks title model calls (harness.PurposeHeader).
const TitlePurpose = "title"

const titlePrompt = "Write a title of three to seven words for the conversation below. " +
	"Reply with the title only: no quotes, no punctuation at the end."

// maybeTitle generates an untitled session's title in the background after
// a completed turn: the turn's answer is not held up by a side call, and a
// session whose title call failed gets another chance on its next turn.
func (h *Harness) maybeTitle(id, model string) {
	if _, busy := h.titling.LoadOrStore(id, true); busy {
		return
	}
	h.b.Go(func(ctx context.Context) {
		defer h.titling.Delete(id)
		sess, err := h.b.Store.Get(ctx, id)
		if err != nil || sess == nil || sess.Title != nil {
			return
		}
		hist, err := h.b.Store.History(ctx, id)
		if err != nil {
			return
		}
		var question, answer string
		for _, m := range hist {
			if m.Role == "user" && question == "" {
				question = m.Content
			}
			if m.Role == "assistant" && answer == "" && question != "" {
				answer = m.Content
			}
		}
		if question == "" {
			return
		}
		title := h.generateTitle(ctx, model, question, answer)
		h.b.Store.SetGeneratedTitle(ctx, id, title)
	})
}

// generateTitle asks the model; without an answer it falls back to the
// opening words of the question, so every session ends up titled.
func (h *Harness) generateTitle(ctx context.Context, model, question, answer string) string {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	convo := "User: " + clip(question, 2000) + "\n\nAssistant: " + clip(answer, 2000)
	comp, err := h.b.Client.Stream(ctx, agent.Call{Model: model, Purpose: TitlePurpose, Messages: []agent.Message{
		{Role: "system", Content: titlePrompt}, {Role: "user", Content: convo}}}, agent.Handler{})
	if err == nil {
		if t := cleanTitle(comp.Content); t != "" {
			return t
		}
	}
	if t := cleanTitle(strings.Join(firstWords(question, 6), " ")); t != "" {
		return t
	}
	return "Untitled"
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func firstWords(s string, n int) []string {
	w := strings.Fields(s)
	return w[:min(n, len(w))]
}

// cleanTitle keeps the first non-empty line without markdown, quotes, a
// "Title:" label or a final period, at most 60 characters cut at a word.
func cleanTitle(s string) string {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		line = strings.Trim(strings.TrimLeft(line, "#*-> "), "\"'`*“”‘’ ")
		if l := strings.ToLower(line); strings.HasPrefix(l, "title:") {
			line = strings.Trim(line[len("title:"):], "\"'`*“”‘’ ")
		}
		line = strings.TrimRight(line, ".")
		line = strings.Join(strings.Fields(line), " ")
		if line == "" {
			continue
		}
		if r := []rune(line); len(r) > 60 {
			cut := string(r[:60])
			if i := strings.LastIndexByte(cut, ' '); i > 20 {
				cut = cut[:i]
			}
			line = cut
		}
		return line
	}
	return ""
}
