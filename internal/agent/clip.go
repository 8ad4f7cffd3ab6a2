package agent

import (
	"strings"
	"unicode/utf8"
)

// ArgClip is the length strings are clipped to in a started event's
// arguments: enough to recognise a command or a path, not a whole file.
const ArgClip = 200

// clipString cuts s to at most n bytes on a rune boundary, marking the cut.
func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// clipArgs returns a copy of a decoded JSON value with long strings clipped.
func clipArgs(v any, n int) any {
	switch x := v.(type) {
	case string:
		return clipString(x, n)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = clipArgs(e, n)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = clipArgs(e, n)
		}
		return out
	}
	return v
}

// oneLine is the first line of s, trimmed and clipped, for labels.
func oneLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	return clipString(s, n)
}
