package dashboard

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/svc-dev/svc/internal/gateway"
	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/harness/coding"
	"github.com/svc-dev/svc/internal/harness/harnesstest"
	"github.com/svc-dev/svc/internal/modeltest"
	"github.com/svc-dev/svc/internal/webtools"
	"github.com/svc-dev/svc/internal/webtools/browsertest"
)

const token = "dash-token"

func TestPortURL(t *testing.T) {
	cases := []struct {
		instance string
		port     int
		want     string
		path     string
	}{
		{"http://i1abc.localhost:7070", 7681, "http://i1abc-7681.localhost:7070/", ""},
		{"https://i1abc.apps.example.com", 6080, "https://i1abc-6080.apps.example.com/", ""},
		{"https://i1abc.apps.example.com/", 8080, "https://i1abc-8080.apps.example.com/", ""},
		{"https://i1abc.apps.example.com", 6080, "https://i1abc-6080.apps.example.com/vnc.html?autoconnect=true", "/vnc.html?autoconnect=true"},
		{"http://localhost:7070", 8080, "", ""}, // no id label to extend
		{"", 8080, "", ""},
		{"ftp://i1.example", 8080, "", ""},
		{"::not a url", 8080, "", ""},
	}
	for _, c := range cases {
		if got := portURL(c.instance, c.port, c.path); got != c.want {
			t.Errorf("portURL(%q, %d) = %q, want %q", c.instance, c.port, got, c.want)
		}
	}
}

// fakeRoot writes files under a temporary root standing for "/".
func fakeRoot(t *testing.T, files map[string]string) string {
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestReadMemory(t *testing.T) {
	const meminfo = "MemTotal:       16384000 kB\nMemFree:  100 kB\nMemAvailable:   12288000 kB\n"
	cases := []struct {
		name  string
		files map[string]string
		want  Memory
	}{
		{"cgroup v2 in a namespace", map[string]string{
			"sys/fs/cgroup/memory.current": "600000000\n",
			"sys/fs/cgroup/memory.max":     "1073741824\n",
			"sys/fs/cgroup/memory.stat":    "anon 1\nfile 2\ninactive_file 100000000\nactive_file 5\n",
			"proc/meminfo":                 meminfo,
		}, Memory{UsedBytes: 500000000, LimitBytes: 1073741824, Source: "cgroup v2"}},
		{"cgroup v2 without namespace, no limit", map[string]string{
			"proc/self/cgroup": "0::/system.slice/x.scope\n",
			"sys/fs/cgroup/system.slice/x.scope/memory.current": "2000\n",
			"sys/fs/cgroup/system.slice/x.scope/memory.max":     "max\n",
			"proc/meminfo": meminfo,
		}, Memory{UsedBytes: 2000, LimitBytes: 16384000 << 10, Source: "cgroup v2"}},
		{"cgroup v1 with a limit", map[string]string{
			"sys/fs/cgroup/memory/memory.usage_in_bytes": "300000000\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "536870912\n",
			"sys/fs/cgroup/memory/memory.stat":           "cache 9\ninactive_file 7\ntotal_inactive_file 100000000\n",
		}, Memory{UsedBytes: 200000000, LimitBytes: 536870912, Source: "cgroup v1"}},
		{"cgroup v1 unlimited", map[string]string{
			"sys/fs/cgroup/memory/memory.usage_in_bytes": "4096\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
			"proc/meminfo": meminfo,
		}, Memory{UsedBytes: 4096, LimitBytes: 16384000 << 10, Source: "cgroup v1"}},
		{"no cgroup", map[string]string{"proc/meminfo": meminfo},
			Memory{UsedBytes: (16384000 - 12288000) << 10, LimitBytes: 16384000 << 10, Source: "meminfo"}},
	}
	for _, c := range cases {
		got, err := readMemory(fakeRoot(t, c.files))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
	if _, err := readMemory(t.TempDir()); err == nil {
		t.Error("an empty root gave memory figures")
	}
	// This machine's own figures are plausible.
	m, err := readMemory("/")
	if err != nil || m.UsedBytes <= 0 || m.LimitBytes < m.UsedBytes {
		t.Fatalf("this machine: %+v %v", m, err)
	}
}

func TestReadDisks(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	got := readDisks([]Disk{{Label: "Home", Path: dir}, {Label: "Same", Path: sub}, {Label: "Missing", Path: filepath.Join(dir, "nope")}})
	if len(got) != 1 || got[0].Label != "Home" {
		t.Fatalf("one filesystem measured as %+v", got)
	}
	d := got[0]
	if d.TotalBytes <= 0 || d.UsedBytes < 0 || d.UsedBytes > d.TotalBytes || d.FreeBytes > d.TotalBytes-d.UsedBytes {
		t.Fatalf("implausible figures: %+v", d)
	}
}

// start serves a dashboard over a gateway whose default harness answers
// health from a scripted model server.
func start(t *testing.T, healthyModel bool) (string, Config) {
	t.Helper()
	home := t.TempDir()
	modelURL := "http://127.0.0.1:1/v1"
	if healthyModel {
		model, err := modeltest.Start(modeltest.Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { model.Close() })
		modelURL = model.URL
	}
	cfg := gateway.DefaultConfig()
	cfg.Home = home
	h := harnesstest.NewReference(harness.GeneralA, modelURL, "test-model", home)
	gw, err := gateway.New(cfg, gateway.Registry{Default: harness.GeneralA, Harnesses: []harness.Harness{h}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })

	// One tool really listening, one not.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	up := ln.Addr().(*net.TCPAddr).Port
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	down := closed.Addr().(*net.TCPAddr).Port
	closed.Close()

	dc := Config{
		InstanceID: "i1abc", InstanceURL: "http://i1abc.localhost:7070", Version: gateway.Version, Home: home,
		Tools:  []Tool{{Name: "Terminal", Port: up}, {Name: "Desktop", Port: down, Path: "/vnc.html?autoconnect=true"}},
		Health: gw.Health,
	}
	return browsertest.Serve(t, webtools.Protect(token, Handler(dc, nil))), dc
}

func getStatus(t *testing.T, base, tok string) (int, Status) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/api/status", nil)
	req.Header.Set(gateway.TokenHeader, tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st Status
	json.NewDecoder(resp.Body).Decode(&st)
	return resp.StatusCode, st
}

func TestStatus(t *testing.T) {
	base, cfg := start(t, true)
	code, st := getStatus(t, base, token)
	if code != 200 {
		t.Fatalf("status: %d", code)
	}
	if st.InstanceID != "i1abc" || st.Version != gateway.Version || st.Agent != harness.GeneralA || !st.Healthy {
		t.Fatalf("identity and health: %+v", st)
	}
	if len(st.Disks) == 0 || st.Disks[0].Path != cfg.Home || st.Disks[0].TotalBytes == 0 {
		t.Fatalf("disks: %+v", st.Disks)
	}
	if st.Memory == nil || st.Memory.UsedBytes <= 0 {
		t.Fatalf("memory: %+v", st.Memory)
	}
	want := []Tool{
		{Name: "Terminal", Port: cfg.Tools[0].Port, URL: portURL(cfg.InstanceURL, cfg.Tools[0].Port, ""), Up: true},
		{Name: "Desktop", Port: cfg.Tools[1].Port, Path: cfg.Tools[1].Path, URL: portURL(cfg.InstanceURL, cfg.Tools[1].Port, cfg.Tools[1].Path), Up: false},
	}
	if diff := cmp.Diff(want, st.Tools); diff != "" || !strings.HasPrefix(st.Tools[0].URL, "http://i1abc-") {
		t.Fatalf("tools (-want +got):\n%s", diff)
	}
	if code, _ := getStatus(t, base, "wrong"); code != 401 {
		t.Fatalf("wrong token: %d", code)
	}

	// A harness whose model is unreachable is reported unhealthy.
	base, _ = start(t, false)
	if _, st := getStatus(t, base, token); st.Healthy || st.Agent != harness.GeneralA || st.Hint != "" {
		t.Fatalf("unreachable model: %+v", st)
	}

	// A harness that knows what it lacks says so.
	h, err := coding.New(harness.CodingA)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(gateway.DefaultConfig(), gateway.Registry{Default: harness.CodingA, Harnesses: []harness.Harness{h}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	base = browsertest.Serve(t, webtools.Protect(token, Handler(Config{Home: t.TempDir(), Health: gw.Health}, nil)))
	if _, st := getStatus(t, base, token); st.Healthy || st.Agent != harness.CodingA || st.Hint != h.Hint() || st.Hint == "" {
		t.Fatalf("unconnected coding-a: %+v", st)
	}
}

// TestBrowser loads the dashboard in chromium through an edge-like proxy
// and reads the health, the instance and the tool links from the page.
func TestBrowser(t *testing.T) {
	ctx := browsertest.New(t)
	target, cfg := start(t, true)
	edge := browsertest.Edge(t, target, token)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(edge+"/"),
		// Rendered once the first status arrived.
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('#tools a').length === 2`),
	); err != nil {
		t.Fatal(err)
	}
	type page struct {
		Text   string   `json:"text"`
		Health string   `json:"health"`
		Links  []string `json:"links"`
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[page](`({
		text: document.body.innerText,
		health: document.getElementById('health').textContent,
		links: [...document.querySelectorAll('#tools a')].map((a) => a.href),
	})`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"healthy", "i1abc", gateway.Version, "general-a"} {
		if !strings.Contains(got.Text, want) {
			t.Errorf("page lacks %q:\n%s", want, got.Text)
		}
	}
	if got.Health != "healthy" {
		t.Errorf("health badge %q", got.Health)
	}
	wantLinks := []string{portURL(cfg.InstanceURL, cfg.Tools[0].Port, ""), portURL(cfg.InstanceURL, cfg.Tools[1].Port, cfg.Tools[1].Path)}
	if diff := cmp.Diff(wantLinks, got.Links); diff != "" {
		t.Errorf("tool links (-want +got):\n%s", diff)
	}
}
