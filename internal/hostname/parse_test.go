package hostname

import (
	"regexp"
	"strconv"
	"testing"
)

var n = Namer{Domain: "apps.example.test", Scheme: "https"}

func TestParse(t *testing.T) {
	cases := []struct {
		host string
		ok   bool
		want Route
	}{
		{"abcde12345.apps.example.test", true, Route{Kind: Instance, Label: "abcde12345", ID: "abcde12345"}},
		{"ABCDE12345.Apps.Example.Test:7070", true, Route{Kind: Instance, Label: "abcde12345", ID: "abcde12345"}},
		{"abcde12345.apps.example.test.", true, Route{Kind: Instance, Label: "abcde12345", ID: "abcde12345"}},
		{"abcde12345-8080.apps.example.test", true, Route{Kind: Instance, Label: "abcde12345-8080", ID: "abcde12345", Port: 8080}},
		{"abcde12345-1.apps.example.test", true, Route{Kind: Instance, Label: "abcde12345-1", ID: "abcde12345", Port: 1}},
		{"abcde12345-65535.apps.example.test", true, Route{Kind: Instance, Label: "abcde12345-65535", ID: "abcde12345", Port: 65535}},
		{"0123456789abcdefghij.apps.example.test", true, Route{Kind: Public, Label: "0123456789abcdefghij"}},
		{"api-abcde12345.apps.example.test", true, Route{Kind: Public, Label: "api-abcde12345", ID: "abcde12345"}},
		{"a-b-abcde12345.apps.example.test", true, Route{Kind: Public, Label: "a-b-abcde12345", ID: "abcde12345"}},
		// A ten-character all-digit prefix is still a prefix.
		{"0123456789-abcde12345.apps.example.test", true, Route{Kind: Public, Label: "0123456789-abcde12345", ID: "abcde12345"}},
		// Under the domain but no form: the edge answers 404.
		{"abcde12345-65536.apps.example.test", true, Route{Label: "abcde12345-65536"}},
		{"abcde12345-080.apps.example.test", true, Route{Label: "abcde12345-080"}},
		{"abcde12345-0.apps.example.test", true, Route{Label: "abcde12345-0"}},
		{"abcde1234.apps.example.test", true, Route{Label: "abcde1234"}},
		{"-abcde12345.apps.example.test", true, Route{Label: "-abcde12345"}},
		{"api--abcde12345.apps.example.test", true, Route{Label: "api--abcde12345"}},
		{"x.abcde12345.apps.example.test", true, Route{Label: "x.abcde12345"}},
		{"abc_e12345.apps.example.test", true, Route{Label: "abc_e12345"}},
		{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-abcde12345.apps.example.test", true, Route{Label: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-abcde12345"}},
		// Not under the apps domain: the API's host and others.
		{"apps.example.test", false, Route{}},
		{"apps.example.test:7070", false, Route{}},
		{".apps.example.test", false, Route{}},
		{"abcde12345.example.test", false, Route{}},
		{"abcde12345xapps.example.test", false, Route{}},
		{"127.0.0.1:7070", false, Route{}},
		{"[::1]:7070", false, Route{}},
		{"", false, Route{}},
	}
	for _, c := range cases {
		got, ok := n.Parse(c.host)
		if ok != c.ok || got != c.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v, %v", c.host, got, ok, c.want, c.ok)
		}
	}
}

func TestParseLocalhost(t *testing.T) {
	l := Namer{Domain: "localhost", Scheme: "http", Port: 7070}
	if r, ok := l.Parse("abcde12345.localhost:7070"); !ok || r.Kind != Instance || r.ID != "abcde12345" {
		t.Fatalf("%+v %v", r, ok)
	}
	if _, ok := l.Parse("localhost:7070"); ok {
		t.Fatal("the API host parsed as an edge host")
	}
	// Every URL the namer builds parses back to its route.
	for _, u := range []struct {
		host string
		want Route
	}{
		{"abcde12345.localhost:7070", Route{Kind: Instance, Label: "abcde12345", ID: "abcde12345"}},
		{"abcde12345-9000.localhost:7070", Route{Kind: Instance, Label: "abcde12345-9000", ID: "abcde12345", Port: 9000}},
	} {
		if r, ok := l.Parse(u.host); !ok || r != u.want {
			t.Errorf("%s: %+v", u.host, r)
		}
	}
}

// The four forms, written independently of Parse as regular expressions.
var (
	idForm     = regexp.MustCompile(`^[a-z0-9]{10}$`)
	portForm   = regexp.MustCompile(`^([a-z0-9]{10})-([1-9][0-9]{0,4})$`)
	slugForm   = regexp.MustCompile(`^[a-z0-9]{20}$`)
	prefixForm = regexp.MustCompile(`^([a-z0-9]|[a-z0-9][a-z0-9-]{0,28}[a-z0-9])-([a-z0-9]{10})$`)
)

// FuzzParse checks that Parse never panics, that no label matches two
// forms (the forms are unambiguous), that Parse picks the form that
// matches, and that an instance route builds back to the same host.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"abcde12345", "abcde12345-8080", "0123456789abcdefghij", "api-abcde12345",
		"abcde12345-65536", "a-0123456789", "0123456789-0123456789", "abcde12345-1-abcde12345", "x.y", "-", ""} {
		f.Add(s + ".localhost:7070")
		f.Add(s)
	}
	l := Namer{Domain: "localhost", Scheme: "http", Port: 7070}
	f.Fuzz(func(t *testing.T, host string) {
		r, ok := l.Parse(host)
		if !ok {
			return
		}
		label := r.Label
		matches := 0
		want := Unknown
		if idForm.MatchString(label) {
			matches++
			want = Instance
		}
		if m := portForm.FindStringSubmatch(label); m != nil {
			if p, _ := strconv.Atoi(m[2]); p <= 65535 {
				matches++
				want = Instance
			}
		}
		if slugForm.MatchString(label) {
			matches++
			want = Public
		}
		if prefixForm.MatchString(label) {
			matches++
			want = Public
		}
		if matches > 1 {
			t.Fatalf("label %q matches %d forms", label, matches)
		}
		if r.Kind != want {
			t.Fatalf("Parse(%q) kind %v, forms say %v", host, r.Kind, want)
		}
		switch {
		case r.Kind == Instance && r.Port == 0:
			if r.ID != label {
				t.Fatalf("id %q of label %q", r.ID, label)
			}
		case r.Kind == Instance:
			if got := l.PortURL(r.ID, r.Port); got != "http://"+label+".localhost:7070" {
				t.Fatalf("round trip of %q: %s", label, got)
			}
		case r.Kind == Public && r.ID != "":
			if label[len(label)-IDLen:] != r.ID {
				t.Fatalf("prefix host %q id %q", label, r.ID)
			}
		}
	})
}
