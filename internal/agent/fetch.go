package agent

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
)

func webFetchTool() *tool {
	return &tool{
		def: FunctionDef{
			Name: "web_fetch",
			Description: "Fetch a URL with HTTP GET and return its content as text (HTML is reduced to its readable " +
				"text, JSON and plain text are returned as is).",
			Parameters: schema([]string{"url"}, map[string]map[string]any{
				"url": prop("string", "http or https URL"),
			}),
		},
		label: func(args map[string]any) string { return "Fetching " + oneLine(str(args, "url"), 160) },
		run:   webFetch,
	}
}

func webFetch(ctx context.Context, t *turn, args map[string]any) (string, error) {
	raw, err := required(args, "url")
	if err != nil {
		return "", err
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("not an http(s) URL: %q", raw)
	}
	cfg := t.agent.cfg
	ctx, cancel := context.WithTimeout(ctx, cfg.FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("User-Agent", "svc-agent/1 (+web_fetch)")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain,application/json;q=0.9,*/*;q=0.5")
	resp, err := cfg.FetchClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(cfg.FetchMaxBytes)+1))
	if err != nil {
		return "", err
	}
	truncated := len(body) > cfg.FetchMaxBytes
	if truncated {
		body = body[:cfg.FetchMaxBytes]
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var text string
	switch {
	case ct == "text/html" || ct == "application/xhtml+xml" || (ct == "" && looksHTML(body)):
		text = htmlText(string(body))
	case strings.HasPrefix(ct, "text/") || strings.Contains(ct, "json") || strings.Contains(ct, "xml") || ct == "" && utf8.Valid(body):
		text = string(body)
	default:
		return "", fmt.Errorf("%s: unsupported content type %q (%d bytes)", u, ct, len(body))
	}
	text = clipString(text, cfg.FetchMaxText)
	if truncated {
		text += fmt.Sprintf("\n[truncated: only the first %d bytes were read]", cfg.FetchMaxBytes)
	}
	if resp.StatusCode >= 400 {
		return fmt.Sprintf("HTTP %d\n%s", resp.StatusCode, text), fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return text, nil
}

func looksHTML(b []byte) bool {
	s := strings.ToLower(strings.TrimSpace(string(b[:min(len(b), 512)])))
	return strings.HasPrefix(s, "<!doctype html") || strings.HasPrefix(s, "<html")
}

// skipped elements carry no readable text.
var skipped = map[string]bool{"script": true, "style": true, "noscript": true, "template": true, "svg": true, "head": true, "iframe": true}

// blocks start on a new line.
var blocks = map[string]bool{"p": true, "div": true, "br": true, "li": true, "tr": true, "h1": true, "h2": true, "h3": true,
	"h4": true, "h5": true, "h6": true, "pre": true, "section": true, "article": true, "header": true, "footer": true,
	"blockquote": true, "table": true, "ul": true, "ol": true, "hr": true, "main": true, "nav": true}

// htmlText reduces a page to its text: scripts and styles dropped, block
// elements on their own lines, whitespace collapsed, the title first, links
// kept as "text (href)" so the model can follow them.
func htmlText(doc string) string {
	z := html.NewTokenizer(strings.NewReader(doc))
	var b strings.Builder
	var title string
	skip, pre, inTitle := 0, 0, false
	var href string
	newline := func() {
		s := b.String()
		if len(s) > 0 && !strings.HasSuffix(s, "\n") {
			b.WriteByte('\n')
		}
	}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			out := collapse(b.String())
			if title != "" && !strings.HasPrefix(out, title) {
				out = title + "\n\n" + out
			}
			return out
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			tag := string(name)
			if tag == "title" {
				inTitle = tt == html.StartTagToken
				continue
			}
			if skipped[tag] && tt == html.StartTagToken {
				skip++
			}
			if tag == "pre" && tt == html.StartTagToken {
				pre++
			}
			if blocks[tag] {
				newline()
			}
			if tag == "a" && hasAttr {
				for {
					k, v, more := z.TagAttr()
					if string(k) == "href" {
						href = string(v)
					}
					if !more {
						break
					}
				}
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			tag := string(name)
			switch {
			case tag == "title":
				inTitle = false
			case skipped[tag] && skip > 0:
				skip--
			case tag == "pre" && pre > 0:
				pre--
				newline()
			case blocks[tag]:
				newline()
			case tag == "a" && href != "":
				if strings.HasPrefix(href, "http") || strings.HasPrefix(href, "/") {
					fmt.Fprintf(&b, " (%s)", href)
				}
				href = ""
			}
		case html.TextToken:
			text := string(z.Text())
			if inTitle {
				title += strings.TrimSpace(text)
				continue
			}
			if skip == 0 {
				if pre == 0 {
					// Source line breaks are spaces in HTML; only
					// block elements and <pre> break lines.
					raw := text
					text = strings.Join(strings.Fields(raw), " ")
					if len(raw) > 0 && isSpace(raw[0]) {
						text = " " + text
					}
					if len(raw) > 1 && isSpace(raw[len(raw)-1]) {
						text += " "
					}
				}
				b.WriteString(text)
			}
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' }

// collapse squeezes runs of spaces inside lines and keeps at most one empty
// line between paragraphs.
func collapse(s string) string {
	var out []string
	blank := false
	for _, line := range strings.Split(s, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if line == "" {
			if !blank && len(out) > 0 {
				out = append(out, "")
			}
			blank = true
			continue
		}
		blank = false
		out = append(out, line)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
