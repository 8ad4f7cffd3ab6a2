package sse

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReader(t *testing.T) {
	in := ":keepalive\n\nid: 1\nevent: response.created\ndata: {\"id\":\"x\"}\n\n" +
		":keepalive\r\nevent: multi\r\ndata: a\r\ndata: b\r\n\r\n" +
		"id: 3\nevent: response.completed\ndata:{}\n\n"
	r := NewReader(strings.NewReader(in))
	var got []Event
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	want := []Event{
		{ID: "1", Name: "response.created", Data: []byte(`{"id":"x"}`)},
		{Name: "multi", Data: []byte("a\nb")},
		{ID: "3", Name: "response.completed", Data: []byte("{}")},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatal(d)
	}
	if r.Comments != 2 || r.LastComment != "keepalive" {
		t.Fatalf("comments %d %q", r.Comments, r.LastComment)
	}
}

func TestNextFrameReturnsComments(t *testing.T) {
	r := NewReader(strings.NewReader(":keepalive\n\nevent: a\ndata: 1\n\n"))
	ev, err := r.NextFrame()
	if err != nil || ev.Comment != "keepalive" {
		t.Fatalf("%+v %v", ev, err)
	}
	ev, err = r.NextFrame()
	if err != nil || ev.Name != "a" || string(ev.Data) != "1" {
		t.Fatalf("%+v %v", ev, err)
	}
}

func TestReaderTruncated(t *testing.T) {
	r := NewReader(strings.NewReader("event: a\ndata: {"))
	if _, err := r.Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err %v", err)
	}
	r = NewReader(strings.NewReader("bogus: 1\n\n"))
	if _, err := r.Next(); err == nil {
		t.Fatal("unknown field accepted")
	}
}
