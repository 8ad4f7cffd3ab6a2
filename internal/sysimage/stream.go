package sysimage

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/moby/moby/api/types/jsonstream"
)

// readStream decodes the engine's JSON message stream (build, import and
// pull answers), handing each message to fn; an error message in the
// stream ends it as an error.
func readStream(r io.Reader, fn func(jsonstream.Message)) error {
	dec := json.NewDecoder(r)
	for {
		var m jsonstream.Message
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read engine stream: %w", err)
		}
		if m.Error != nil {
			return errors.New(m.Error.Message)
		}
		if fn != nil {
			fn(m)
		}
	}
}
