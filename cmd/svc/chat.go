package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/svc-dev/svc/sdk"
)

// chatCmd streams turns to the terminal: reasoning dimmed, tool calls as
// one-line labels, the answer as it arrives. Without a message it reads
// one per line from stdin, continuing the same session.
func chatCmd(c *cli) *cobra.Command {
	var session, agent, model, effort string
	cmd := &cobra.Command{
		Use:   "chat ID [MESSAGE...]",
		Short: "Chat with an instance's agent (streams the turn; --session continues one)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			in, err := cl.Instance(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			g := cl.Gateway(in.URL)
			p := &printer{w: c.stdout, color: isTerminal(c.stdout), json: c.json}
			turn := func(input string) error {
				sid, err := p.turn(cmd.Context(), g, sdk.ResponseRequest{Input: input, SessionID: session, Agent: agent, Model: model, ReasoningEffort: effort})
				if sid != "" {
					session = sid
				}
				return err
			}
			if len(args) > 1 {
				err := turn(strings.Join(args[1:], " "))
				p.sessionHint(c.stderr, args[0], session)
				return err
			}
			sc := bufio.NewScanner(c.stdin)
			sc.Buffer(make([]byte, 64<<10), 2<<20)
			prompt := func() {
				if isTerminal(c.stdout) {
					fmt.Fprint(c.stdout, "\n> ")
				}
			}
			prompt()
			for sc.Scan() {
				line := strings.TrimSpace(sc.Text())
				if line == "" {
					prompt()
					continue
				}
				if err := turn(line); err != nil {
					fmt.Fprintln(c.stderr, "svc:", err)
				}
				if cmd.Context().Err() != nil {
					break
				}
				prompt()
			}
			p.sessionHint(c.stderr, args[0], session)
			return sc.Err()
		},
	}
	cmd.Flags().StringVarP(&session, "session", "s", "", "continue this session")
	cmd.Flags().StringVar(&agent, "agent", "", "harness to route to (default: the instance's)")
	cmd.Flags().StringVarP(&model, "model", "m", "", "model for this turn")
	cmd.Flags().StringVar(&effort, "effort", "", "reasoning effort: none, minimal, low, medium, high, xhigh, max, ultra")
	return cmd
}

type printer struct {
	w     io.Writer
	color bool
	json  bool
}

const (
	dim   = "\x1b[2m"
	red   = "\x1b[31m"
	reset = "\x1b[0m"
)

func (p *printer) style(code, s string) string {
	if !p.color {
		return s
	}
	return code + s + reset
}

// turn streams one turn and returns its session id. An interrupt (ctx
// done) cancels the turn on the instance, then returns.
func (p *printer) turn(ctx context.Context, g *sdk.Gateway, req sdk.ResponseRequest) (string, error) {
	st, err := g.Stream(context.WithoutCancel(ctx), req)
	if err != nil {
		return "", err
	}
	defer st.Close()
	var responseID, sessionID string
	stop := context.AfterFunc(ctx, func() {
		if responseID != "" {
			g.Cancel(context.Background(), responseID)
		}
	})
	defer stop()
	inReasoning, midLine := false, false
	endReasoning := func() {
		if inReasoning {
			fmt.Fprintln(p.w)
			inReasoning, midLine = false, false
		}
	}
	newline := func() {
		if midLine {
			fmt.Fprintln(p.w)
			midLine = false
		}
	}
	last, err := st.Collect(func(ev sdk.Event) {
		var d map[string]any
		json.Unmarshal(ev.Data, &d)
		if p.json {
			fmt.Fprintf(p.w, "{\"event\":%q,\"data\":%s}\n", ev.Name, ev.Data)
		}
		switch ev.Name {
		case "response.created":
			responseID, _ = d["id"].(string)
			sessionID, _ = d["session_id"].(string)
		}
		if p.json {
			return
		}
		switch ev.Name {
		case "response.reasoning.delta":
			if !inReasoning {
				newline()
				inReasoning = true
			}
			fmt.Fprint(p.w, p.style(dim, ev.Text()))
			midLine = true
		case "response.output_text.delta":
			endReasoning()
			fmt.Fprint(p.w, ev.Text())
			midLine = !strings.HasSuffix(ev.Text(), "\n")
		case "response.tool_call.started":
			endReasoning()
			newline()
			label, _ := d["label"].(string)
			if label == "" {
				label, _ = d["tool"].(string)
			}
			fmt.Fprintln(p.w, p.style(dim, "⚙ "+label))
		case "response.tool_call.failed":
			endReasoning()
			newline()
			msg, _ := d["error"].(string)
			fmt.Fprintln(p.w, p.style(red, fmt.Sprintf("✗ %v failed: %s", d["tool"], msg)))
		}
	})
	endReasoning()
	newline()
	if err != nil {
		return sessionID, err
	}
	var end struct {
		OutputText string         `json:"output_text"`
		Error      *sdk.TurnError `json:"error"`
	}
	json.Unmarshal(last.Data, &end)
	if last.Name == "response.failed" && end.Error != nil {
		msg := end.Error.Code + ": " + end.Error.Message
		if end.Error.Hint != "" {
			msg += " (" + end.Error.Hint + ")"
		}
		return sessionID, fmt.Errorf("turn failed: %s", msg)
	}
	if ctx.Err() != nil {
		return sessionID, fmt.Errorf("turn cancelled")
	}
	return sessionID, nil
}

func (p *printer) sessionHint(w io.Writer, id, session string) {
	if session != "" && !p.json {
		fmt.Fprintf(w, "%s\n", p.style(dim, "session "+session+" (continue: svc chat "+id+" --session "+session+")"))
	}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
