package agent

import (
	"bufio"
	"bytes"
	"io"

	"github.com/svc-dev/svc/internal/harness"
)

// maxEventBytes bounds one SSE event; a model chunk is a few KB at most, so
// anything near this is a broken or hostile stream.
const maxEventBytes = 8 << 20

// errEventTooLarge is a turn error: the stream is unusable.
var errEventTooLarge = harness.Errorf("agent_error", "model stream: event larger than 8 MiB")

// readEvents parses a Server-Sent Events body and calls fn with the data of
// each event (multiple data lines joined by "\n", as the SSE spec says).
// Comments, event names and ids are ignored: chat-completions streams carry
// everything in data. It stops at EOF, at the "[DONE]" sentinel or when fn
// returns an error. Lines may end in "\n", "\r\n" or "\r".
func readEvents(r io.Reader, fn func(data []byte) error) error {
	br := bufio.NewReaderSize(r, 32<<10)
	var data []byte
	has := false
	dispatch := func() error {
		if !has {
			return nil
		}
		d := data
		data, has = data[:0], false
		if bytes.Equal(d, []byte("[DONE]")) {
			return io.EOF
		}
		return fn(d)
	}
	for {
		line, err := readLine(br)
		if err != nil && len(line) == 0 {
			if err == io.EOF {
				err = dispatch() // a last event without its blank line
			}
			if err == io.EOF {
				return nil
			}
			return err
		}
		switch {
		case len(line) == 0:
			if err := dispatch(); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
		case line[0] == ':':
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
			if string(field) != "data" {
				continue
			}
			if has {
				data = append(data, '\n')
			}
			if len(data)+len(value) > maxEventBytes {
				return errEventTooLarge
			}
			data, has = append(data, value...), true
		}
		if err != nil {
			continue // the next call reports the error with an empty line
		}
	}
}

// readLine returns one line without its terminator ("\n", "\r\n" or "\r").
// At the end of input it returns the unterminated rest with io.EOF. It
// scans the buffered bytes in bulk rather than byte by byte: a token is one
// line, so this is the hottest loop of a turn.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		if br.Buffered() == 0 {
			if _, err := br.Peek(1); err != nil {
				return line, err
			}
		}
		buf, _ := br.Peek(br.Buffered())
		i := bytes.IndexAny(buf, "\r\n")
		end := i
		if i < 0 {
			end = len(buf)
		}
		if len(line)+end > maxEventBytes {
			return nil, errEventTooLarge
		}
		line = append(line, buf[:end]...)
		if i < 0 {
			br.Discard(len(buf))
			continue
		}
		br.Discard(i + 1)
		if buf[i] == '\r' {
			if next, err := br.Peek(1); err == nil && next[0] == '\n' {
				br.Discard(1)
			}
		}
		return line, nil
	}
}
