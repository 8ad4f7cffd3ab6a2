// Package sse reads Server-Sent Events streams: the gateway's turn events
// for tests, benchmarks and clients.
package sse

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// Event is one frame. ID is empty when the frame had none. Comment is set
// (and nothing else) for a comment line returned by NextFrame.
type Event struct {
	ID      string
	Name    string
	Data    []byte
	Comment string
}

// Reader parses a stream frame by frame.
type Reader struct {
	r *bufio.Reader
	// Comments counts the comment lines (":keepalive") read so far.
	Comments int
	// LastComment is the text of the last comment line, without the colon.
	LastComment string
}

// NewReader reads frames from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next event, counting comments on the way; io.EOF when
// the stream ended between frames, io.ErrUnexpectedEOF inside one.
func (s *Reader) Next() (Event, error) { return s.next(false) }

// NextFrame is Next but also returns each comment line as an Event with
// only Comment set, for clients that watch keep-alives.
func (s *Reader) NextFrame() (Event, error) { return s.next(true) }

func (s *Reader) next(comments bool) (Event, error) {
	var ev Event
	seen := false
	var data [][]byte
	for {
		line, err := s.r.ReadBytes('\n')
		if err != nil {
			if err == io.EOF && (seen || len(line) > 0) {
				return ev, io.ErrUnexpectedEOF
			}
			return ev, err
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) == 0 {
			if seen {
				ev.Data = bytes.Join(data, []byte("\n"))
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			s.Comments++
			s.LastComment = string(line[1:])
			if comments && !seen {
				return Event{Comment: s.LastComment}, nil
			}
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		seen = true
		switch string(field) {
		case "id":
			ev.ID = string(value)
		case "event":
			ev.Name = string(value)
		case "data":
			data = append(data, append([]byte(nil), value...))
		case "retry":
		default:
			return ev, fmt.Errorf("sse: unknown field %q", field)
		}
	}
}
