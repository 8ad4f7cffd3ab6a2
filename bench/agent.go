package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/harness/generala"
	"github.com/svc-dev/svc/internal/modeltest"
)

// The agent suite measures general-a against the scripted model with no
// delay, so the figures are the harness's own cost: the streaming client,
// the loop, the emit path and the SQLite transcript. The baseline is the
// same reply fetched by a bare streaming HTTP request.
const (
	agentTokens    = 500 // streamed chunks per reply
	agentChunk     = 4   // bytes per chunk: about one token
	agentTurns     = 4   // turns per session before a worker starts a new one
	agentTotal     = 400 // turns per throughput run, spread over the workers
	agentLatencyN  = 200 // sequential turns for the overhead figure
	agentReplyText = "The quick brown fox jumps over the lazy dog. "
)

func benchAgent(ctx context.Context, r *report) error {
	content := strings.Repeat(agentReplyText, agentTokens*agentChunk/len(agentReplyText)+1)[:agentTokens*agentChunk]
	srv, err := modeltest.Start(modeltest.Config{Fallback: func(req modeltest.Request) modeltest.Reply {
		if req.Header.Get(harness.PurposeHeader) == "title" {
			return modeltest.Reply{Content: "Bench session"}
		}
		return modeltest.Reply{Content: content, ChunkSize: agentChunk}
	}})
	if err != nil {
		return err
	}
	defer srv.Close()
	home, err := os.MkdirTemp("", "svc-bench-agent")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	h, err := generala.New(generala.Config{Home: home, ModelBaseURL: srv.URL, Model: "test-model"})
	if err != nil {
		return err
	}
	defer h.Close()
	raw := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}

	sec := r.section("agent")
	sec.line("general-a turns against the scripted model (no delay; each reply streams %d chunks of %d bytes, about one token each).", agentTokens, agentChunk)
	sec.line("Baseline: the same reply read by a bare streaming HTTP request (`raw`). Every general-a turn also reads and writes its session in SQLite.")
	var rows [][]string
	for _, c := range []int{1, 10, 100} {
		if err := ctx.Err(); err != nil {
			return err
		}
		agentTok, turns, agentDur, err := agentThroughput(ctx, h, c)
		if err != nil {
			return fmt.Errorf("general-a at %d sessions: %w", c, err)
		}
		h.Wait()
		rawTok, rawDur, err := rawThroughput(ctx, raw, srv.URL, c, turns)
		if err != nil {
			return fmt.Errorf("raw at %d: %w", c, err)
		}
		a, b := float64(agentTok)/agentDur.Seconds(), float64(rawTok)/rawDur.Seconds()
		rows = append(rows, []string{fmt.Sprint(c), fmt.Sprintf("%.0f", a), fmt.Sprintf("%.0f", b),
			fmt.Sprintf("%.2f", a/b), fmt.Sprintf("%.1f", float64(turns)/agentDur.Seconds())})
	}
	sec.table([]string{"concurrent sessions", "general-a tokens/s (emitted)", "raw tokens/s", "general-a / raw", "general-a turns/s"}, rows)

	agentLat, rawLat, err := agentOverhead(ctx, h, raw, srv.URL)
	if err != nil {
		return err
	}
	sec.line("Per-turn overhead, %d sequential turns on fresh sessions (one model call each):", agentLatencyN)
	sec.table([]string{"", "median", "mean"}, [][]string{
		{"raw streaming request", ms(median(rawLat)), ms(mean(rawLat))},
		{"general-a turn", ms(median(agentLat)), ms(mean(agentLat))},
		{"overhead per turn", ms(median(agentLat) - median(rawLat)), ms(mean(agentLat) - mean(rawLat))},
	})
	return nil
}

// agentThroughput runs agentTotal turns on c sessions at once (each worker
// moves to a fresh session every agentTurns turns, so replayed history
// stays small) and counts the output deltas emitted.
func agentThroughput(ctx context.Context, h *generala.Harness, c int) (tokens int64, turns int, d time.Duration, err error) {
	var n atomic.Int64
	emit := func(e harness.Event) error {
		if e.Name == harness.OutputTextDelta {
			n.Add(1)
		}
		return nil
	}
	errs := make(chan error, c)
	start := time.Now()
	var wg sync.WaitGroup
	var next atomic.Int64
	for range c {
		wg.Go(func() {
			id, k := "", 0
			for next.Add(1) <= agentTotal {
				if k%agentTurns == 0 {
					id = ""
				}
				k++
				res, err := h.Run(ctx, harness.Turn{SessionID: id, NewSession: id == "", Input: "tell me about foxes"}, emit)
				if err != nil {
					errs <- err
					return
				}
				id = res.SessionID
			}
		})
	}
	wg.Wait()
	d = time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, 0, 0, err
	}
	return n.Load(), agentTotal, d, nil
}

// rawThroughput fetches turns replies with c concurrent requests and counts
// the data lines.
func rawThroughput(ctx context.Context, client *http.Client, base string, c, turns int) (int64, time.Duration, error) {
	var n atomic.Int64
	var next atomic.Int64
	errs := make(chan error, c)
	start := time.Now()
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for next.Add(1) <= int64(turns) {
				k, err := rawStream(ctx, client, base)
				if err != nil {
					errs <- err
					return
				}
				n.Add(k)
			}
		})
	}
	wg.Wait()
	d := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, 0, err
	}
	return n.Load(), d, nil
}

// rawStream is the least a client can do: post, read the SSE body, count
// the chunks carrying content.
func rawStream(ctx context.Context, client *http.Client, base string) (int64, error) {
	body, _ := json.Marshal(map[string]any{"model": "test-model", "stream": true, "stream_options": map[string]any{"include_usage": true},
		"messages": []map[string]string{{"role": "user", "content": "tell me about foxes"}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var n int64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Bytes(); bytes.HasPrefix(line, []byte(`data: {`)) && bytes.Contains(line, []byte(`"content":"`)) && !bytes.Contains(line, []byte(`"content":""`)) {
			n++
		}
	}
	return n, sc.Err()
}

func agentOverhead(ctx context.Context, h *generala.Harness, client *http.Client, base string) (agentLat, rawLat []time.Duration, err error) {
	emit := func(harness.Event) error { return nil }
	for range agentLatencyN {
		start := time.Now()
		if _, err := rawStream(ctx, client, base); err != nil {
			return nil, nil, err
		}
		rawLat = append(rawLat, time.Since(start))
		start = time.Now()
		if _, err := h.Run(ctx, harness.Turn{NewSession: true, Input: "tell me about foxes"}, emit); err != nil {
			return nil, nil, err
		}
		agentLat = append(agentLat, time.Since(start))
		h.Wait() // the title call runs outside the measured turn
	}
	return agentLat, rawLat, nil
}
